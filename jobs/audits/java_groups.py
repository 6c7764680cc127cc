"""``GroupCoordinatorShard.replay`` of one release, over decoded records: groups, members,
partition epochs, committed and pending offsets, and every exception the release throws.

Roles of the modern-group record types (consumer / share / streams), as the replay methods use
them: the group record (3, 11, 17), the member (5, 10, 19), the target assignment metadata
(6, 12, 20) and members (7, 13, 21), the current assignment (8, 14, 22), and records that only
need their group (4, 9, 15, 16, 23). Which of them create a missing group or member, which
throw, and which ignore a tombstone for something missing differs per release
(:mod:`jobs.audits.java_releases`); the functions below take that from the release.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jobs.audits.java_releases import JavaRelease

GROUP, MEMBER, TARGET_META, TARGET_MEMBER, CURRENT, OTHER = range(6)
_ROLES = {3: GROUP, 11: GROUP, 17: GROUP, 5: MEMBER, 10: MEMBER, 19: MEMBER,
          6: TARGET_META, 12: TARGET_META, 20: TARGET_META, 7: TARGET_MEMBER, 13: TARGET_MEMBER,
          21: TARGET_MEMBER, 8: CURRENT, 14: CURRENT, 22: CURRENT}
_KIND = {**{t: "consumer" for t in (3, 4, 5, 6, 7, 8, 16)},
         **{t: "share" for t in range(9, 16)}, **{t: "streams" for t in range(17, 24)}}
LEAVE = -1
ISE = "java.lang.IllegalStateException"
NOT_FOUND = "org.apache.kafka.common.errors.GroupIdNotFoundException"
UNKNOWN_MEMBER = "org.apache.kafka.common.errors.UnknownMemberIdException"


class Throw(Exception):
    """What the release throws: exception class and message (the load fails on it)."""

    def __init__(self, exception: str, message: str, record_type: int | None = None):
        super().__init__(message)
        self.exception, self.message, self.record_type = exception, message, record_type


@dataclass
class Member:
    epoch: int = 0
    owned: dict = field(default_factory=dict)      # (topic, partition) -> assigned / pending


@dataclass
class Group:
    kind: str                                       # classic, consumer, share, streams
    protocol_type: str | None = None                # classic only; None/"" and no members: simple
    classic_members: tuple[str, ...] = ()
    epoch: int = 0                                  # classic generation or group epoch
    members: dict[str, Member] = field(default_factory=dict)
    targets: set[str] = field(default_factory=set)
    target_epoch: int = -1
    partition_epochs: dict = field(default_factory=dict)   # (topic, partition) -> epoch

    @property
    def is_simple(self) -> bool:
        return self.kind == "classic" and not self.protocol_type and not self.classic_members


@dataclass
class CoordinatorState:
    groups: dict[str, Group] = field(default_factory=dict)
    offsets: dict[tuple[str, str, int], tuple[int, int]] = field(default_factory=dict)
    pending: dict[int, dict] = field(default_factory=dict)   # producer id -> {key: (offset, at)}

    def end_transaction(self, producer_id: int, commit: bool, release: JavaRelease) -> None:
        """``OffsetMetadataManager.replayEndTransactionMarker``: from 3.8 a committed offset
        replaces only an older record's (``recordOffset``)."""
        pending = self.pending.pop(producer_id, None)
        if not commit or not pending:
            return
        for key, (committed, at) in pending.items():
            existing = self.offsets.get(key)
            if release.release < (3, 8, 0) or existing is None or at > existing[1]:
                self.offsets[key] = (committed, at)


def replay_record(state: CoordinatorState, release: JavaRelease, offset: int, producer_id: int,
                  record_type: int, key: dict, value: dict | None) -> None:
    """Apply one deserialized record; raises :class:`Throw` where the release's replay throws."""
    if record_type not in release.replay_types:
        raise Throw(ISE, f"Received an unknown record type {record_type}")
    if record_type in (0, 1):
        _offset_commit(state, release, offset, producer_id, key, value)
    elif record_type == 2:
        _group_metadata(state, key["group"], value)
    else:
        _modern(state, release, record_type, key, value)


def _offset_commit(state, release, offset, producer_id, key, value) -> None:
    gid, tp = key["group"], (key["group"], key["topic"], key["partition"])
    if value is None:
        state.offsets.pop(tp, None)
        if release.release >= (3, 8, 0):
            for pending in state.pending.values():
                pending.pop(tp, None)
        return
    if gid not in state.groups:
        state.groups[gid] = Group("classic")
    if producer_id == -1 or release.family == "3.6":
        state.offsets[tp] = (value["offset"], offset)
    else:
        state.pending.setdefault(producer_id, {})[tp] = (value["offset"], offset)


def _group_metadata(state, gid: str, value) -> None:
    if value is None:
        state.groups.pop(gid, None)
        return
    members = tuple(m["memberId"] for m in value.get("members") or ())
    state.groups[gid] = Group("classic", value.get("protocolType") or None, members,
                              value.get("generation", 0))


def _strict(release: JavaRelease, kind: str) -> bool:
    """Whether a missing group or member throws (before KAFKA-17306 for consumer groups; share
    groups until 4.1) instead of being created (value) or ignored (tombstone)."""
    if kind == "consumer":
        return not release.at_least_4_0
    if kind == "share":
        return release.release < (4, 1, 0)
    return False


def _group(state, release, kind: str, gid: str, create: bool) -> Group:
    group = state.groups.get(gid)
    if group is None:
        if not create:
            raise Throw(NOT_FOUND if kind != "consumer" or release.family != "3.8" else ISE,
                        f"{kind.capitalize()} group {gid} not found.")
        group = state.groups[gid] = Group(kind)
        return group
    if group.kind == kind:
        return group
    if group.is_simple and _replaces_simple(release, kind):
        group = state.groups[gid] = Group(kind)
        return group
    raise Throw(ISE if release.family in ("3.8", "4.0") else NOT_FOUND,
                f"Group {gid} is not a {kind} group.")


def _replaces_simple(release: JavaRelease, kind: str) -> bool:
    """Whether ``getOrMaybeCreatePersisted<Kind>Group`` replaces an offset-created simple group:
    consumer groups from 4.0 (KAFKA-17306), streams groups from 4.2, share groups never."""
    if kind == "consumer":
        return release.at_least_4_0
    return kind == "streams" and release.release >= (4, 2, 0)


def _modern(state, release, record_type: int, key: dict, value) -> None:
    kind, role, gid = _KIND[record_type], _ROLES.get(record_type, OTHER), key["groupId"]
    strict = _strict(release, kind)
    if value is None and not strict and gid not in state.groups:
        return      # a tombstone for a group that does not exist: ignored (KAFKA-17306)
    # A value creates its missing group: the group and member records always, the others only
    # once replay is lenient (before, they throw GroupIdNotFound / IllegalState).
    create = value is not None and (role in (GROUP, MEMBER) or not strict)
    group = _group(state, release, kind, gid, create)
    if role == GROUP:
        _group_record(state, group, gid, value)
    elif role == MEMBER:
        _member_record(release, group, gid, key["memberId"], value, strict)
    elif role == TARGET_META:
        if value is None and group.targets:
            raise Throw(ISE, f"Received a tombstone record to delete target assignment of {gid} "
                             f"but the assignment still has {len(group.targets)} members.")
        group.target_epoch = -1 if value is None else value["assignmentEpoch"]
    elif role == TARGET_MEMBER:
        (group.targets.discard if value is None else group.targets.add)(key["memberId"])
    elif role == CURRENT:
        _current(release, group, record_type, key["memberId"], value, strict)


def _group_record(state, group: Group, gid: str, value) -> None:
    if value is not None:
        group.epoch = value["epoch"]
        return
    if group.members:
        raise Throw(ISE, f"Received a tombstone record to delete group {gid} but the group "
                         f"still has {len(group.members)} members.")
    if group.targets and group.kind != "streams":
        raise Throw(ISE, f"Received a tombstone record to delete group {gid} but the target "
                         f"assignment still has {len(group.targets)} members.")
    if group.target_epoch != -1:
        raise Throw(ISE, f"Received a tombstone record to delete group {gid} but did not receive "
                         "the target assignment metadata tombstone.")
    state.groups.pop(gid, None)


def _member_record(release, group: Group, gid: str, member_id: str, value, strict: bool) -> None:
    if value is not None:
        group.members.setdefault(member_id, Member())
        return
    member = group.members.get(member_id)
    if member is None:
        if strict:
            raise Throw(UNKNOWN_MEMBER, f"Member {member_id} is not a member of group {gid}.")
        return
    if member.epoch != LEAVE:
        raise Throw(ISE, f"Received a tombstone record to delete member {member_id} but did not "
                         "receive the current assignment tombstone.")
    if member_id in group.targets:
        raise Throw(ISE, f"Received a tombstone record to delete member {member_id} but did not "
                         "receive the target assignment tombstone.")
    _move_partitions(release, group, member, Member(LEAVE))
    del group.members[member_id]


def _current(release, group: Group, record_type: int, member_id: str, value, strict: bool) -> None:
    member = group.members.get(member_id)
    if member is None:
        if strict:
            raise Throw(UNKNOWN_MEMBER, f"Member {member_id} is not a member of group.")
        if value is None:
            return
        member = group.members[member_id] = Member()
    if record_type == 22 and value is not None and release.release[:2] == (4, 2):
        _strict_task_epochs(value)
    new = Member(LEAVE) if value is None else Member(value["memberEpoch"], _owned(record_type, value))
    if group.kind == "consumer":
        _move_partitions(release, group, member, new)
    member.epoch, member.owned = new.epoch, new.owned


def _strict_task_epochs(value: dict) -> None:
    """4.2's ``TasksTupleWithEpochs.parseActiveTasksWithEpochs`` refuses AssignmentEpochs whose
    length differs from the partitions' (4.3 falls back to the member epoch instead)."""
    for name in ("activeTasks", "activeTasksPendingRevocation"):
        for task in value.get(name) or ():
            epochs = task.get("assignmentEpochs")
            if epochs and len(epochs) != len(task["partitions"]):
                raise Throw(ISE, "Assignment epochs must be provided for all partitions. Subtopology "
                                 f"{task['subtopologyId']} has {len(task['partitions'])} partitions "
                                 f"but {len(epochs)} epochs")


def _owned(record_type: int, value: dict) -> dict:
    if record_type != 8:
        return {}
    out = {}
    for name in ("assignedPartitions", "partitionsPendingRevocation"):
        for topic in value.get(name) or ():
            for p in topic["partitions"]:
                out.setdefault((str(topic["topicId"]), p), []).append(name)
    return out


def _move_partitions(release, group: Group, old: Member, new: Member) -> None:
    """``ConsumerGroup.maybeUpdatePartitionEpoch``: the old member's partitions leave at its
    epoch, the new one's arrive at the new epoch (assigned first, then pending revocation)."""
    family = release.family
    if family in ("3.6", "3.7"):
        return
    epochs = group.partition_epochs
    for tp, lists in old.owned.items():
        for _ in lists:
            prev = epochs.get(tp)
            if family == "3.8":
                if prev is None or prev != old.epoch:
                    raise Throw(ISE, f"Cannot remove the epoch {old.epoch} from {tp[0]}-{tp[1]} "
                                     f"because the partition is still owned at a different epoch {prev}")
                del epochs[tp]
            elif prev is not None and prev == old.epoch:
                del epochs[tp]
    for name in ("assignedPartitions", "partitionsPendingRevocation"):
        for tp, lists in new.owned.items():
            if name not in lists:
                continue
            prev = epochs.get(tp)
            if prev is not None and (family == "3.8" or prev >= new.epoch):
                raise Throw(ISE, f"Cannot set the epoch of {tp[0]}-{tp[1]} to {new.epoch} because "
                                 f"the partition is still owned at epoch {prev}")
            epochs[tp] = new.epoch

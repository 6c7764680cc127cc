"""DU-4: would a Java coordinator's replay throw on this group's records?

A Java coordinator replays every record still on disk in log order (superseded ones and
tombstones included) and fails the partition load on the first exception. This is a small model
of the checks that throw (``GroupMetadataManager.replay`` and the ownership index), kept to the
facts of :class:`~jobs.audits.downgrade_facts.RecordFacts`:

* group typing: consumer-group records on a classic group that is not a simple group throw in
  every release (MG-01); on a *simple* group (created by an offset commit, or a type-2 record with
  no protocol type and no members) they throw before KAFKA-17306 (strict targets, 3.7-3.9) and
  replace it from 4.0. Share and streams records follow the same rule for their own kinds.
* strict tombstones (3.7-3.9): a type 3/4/5/6/7/8 tombstone for a group that does not exist, or a
  type 5/8 tombstone for a member that does not exist, throws; from 4.0 they are no-ops.
* every release: a type-3 tombstone while members or target members remain, a type-6 tombstone
  while target members remain, a type-5 tombstone while the member still has a current
  assignment (its type-8 tombstone not replayed first) or a target (CG-07/CG-08); a partition
  owned by two members, or assigned and pending revocation in one member (CG-01/CG-02).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jobs.audits.downgrade_facts import RecordFacts
from jobs.audits.downgrade_targets import CONSUMER_TYPES, SHARE_TYPES, STREAMS_TYPES, Target

_KIND_OF = {**{t: "consumer" for t in CONSUMER_TYPES}, **{t: "share" for t in SHARE_TYPES},
            **{t: "streams" for t in STREAMS_TYPES}}


@dataclass
class _Group:
    kind: str                                   # simple, classic, consumer, share, streams
    members: set[str] = field(default_factory=set)
    assigned: dict[str, tuple[str, ...]] = field(default_factory=dict)   # member -> owned
    targets: set[str] = field(default_factory=set)
    target_epoch_set: bool = False


class ReplayBreak(Exception):
    """The record at ``offset`` makes the target's replay throw (``reason`` in words)."""

    def __init__(self, offset: int, reason: str):
        super().__init__(reason)
        self.offset, self.reason = offset, reason


def first_replay_break(records: list[RecordFacts], target: Target) -> ReplayBreak | None:
    """The first record (log order) of one group whose replay throws on ``target``; ``records``
    are the records the target keeps (known types), superseded ones included."""
    groups: dict[str, _Group] = {}
    try:
        for f in records:
            _replay(groups, f, target)
    except ReplayBreak as found:
        return found
    return None


def _replay(groups: dict[str, _Group], f: RecordFacts, target: Target) -> None:
    gid, t = f.group_id, f.record_type
    if gid is None:
        return
    if t in (0, 1):
        if not f.is_tombstone and gid not in groups:
            groups[gid] = _Group("simple")
        return
    if t == 2:
        if f.is_tombstone:
            groups.pop(gid, None)
        else:
            simple = not f.protocol_type and not f.classic_members
            groups[gid] = _Group("simple" if simple else "classic")
        return
    kind = _KIND_OF.get(t)
    if kind is None:
        return
    if f.is_tombstone:
        _tombstone(groups, f, target)
        return
    group = _typed_group(groups, gid, kind, f, target)
    if t in (5, 10, 19):
        group.members.add(f.member_id)
    elif t in (6, 12, 20):
        group.target_epoch_set = True
    elif t in (7, 13, 21):
        group.targets.add(f.member_id)
    elif t == 8:
        group.members.add(f.member_id)
        _take_ownership(group, f)


def _typed_group(groups, gid: str, kind: str, f: RecordFacts, target: Target) -> _Group:
    group = groups.get(gid)
    if group is None or group.kind == kind:
        return groups.setdefault(gid, _Group(kind))
    if group.kind == "simple" and not target.strict_replay:
        groups[gid] = _Group(kind)
        return groups[gid]
    what = "an offset-created simple group" if group.kind == "simple" else f"a {group.kind} group"
    raise ReplayBreak(f.offset, f"a {kind}-group record (type {f.record_type}) for {gid}, "
                                f"which is {what} at that point (IllegalStateException)")


def _take_ownership(group: _Group, f: RecordFacts) -> None:
    if f.pending_overlap:
        raise ReplayBreak(f.offset, f"member {f.member_id} holds a partition both assigned and "
                                    "pending revocation (CG-02)")
    group.assigned.pop(f.member_id, None)
    for other, owned in group.assigned.items():
        shared = set(owned) & set(f.owned_partitions)
        if shared:
            raise ReplayBreak(f.offset, f"member {f.member_id} is given {sorted(shared)[0]} still "
                                        f"owned by member {other} (CG-01)")
    group.assigned[f.member_id] = f.owned_partitions


def _tombstone(groups: dict[str, _Group], f: RecordFacts, target: Target) -> None:
    gid, t, member = f.group_id, f.record_type, f.member_id
    group = groups.get(gid)
    if group is None or group.kind in ("simple", "classic"):
        if target.strict_replay:
            raise ReplayBreak(f.offset, f"a type-{t} tombstone for group {gid}, which does not "
                                        "exist as such at that point (strict replay before 4.0)")
        return
    if t in (8, 22, 14, 5, 10, 19) and member not in group.members:
        if target.strict_replay:
            raise ReplayBreak(f.offset, f"a type-{t} tombstone for member {member} of {gid}, "
                                        "unknown at that point (strict replay before 4.0)")
        return
    if t in (8, 22, 14):
        group.assigned.pop(member, None)
    elif t in (5, 10, 19):
        if member in group.assigned or member in group.targets:
            raise ReplayBreak(f.offset, f"member {member} of {gid} is deleted while it still has "
                                        "a current or target assignment (CG-07)")
        group.members.discard(member)
    elif t in (7, 13, 21):
        group.targets.discard(member)
    elif t in (6, 12, 20):
        if group.targets:
            raise ReplayBreak(f.offset, f"the target assignment of {gid} is deleted while "
                                        "target members remain (CG-08)")
        group.target_epoch_set = False
    elif t in (3, 11, 17):
        if group.members or group.targets or group.target_epoch_set:
            raise ReplayBreak(f.offset, f"group {gid} is deleted while members or its target "
                                        "assignment remain (CG-08)")
        groups.pop(gid, None)

"""Replay of modern-group records: consumer (3-8, 16), share (10-15) and streams (17-24) groups.

Effects follow the Java coordinator (reference §2.3). The three throw-conditions are recorded and
replay carries on past them:

* CG-01: a current-assignment record adds a partition already owned by another member;
* CG-07: a member-metadata tombstone before the member's current-assignment tombstone, or while it
  still has a target assignment;
* CG-08: a target-assignment-metadata tombstone while target members remain, or a group-metadata
  tombstone while members, target members or a target epoch remain.
"""

from __future__ import annotations

from jobs.replay.assignments import current_partitions, target_partitions
from jobs.replay.context import CRITICAL, HIGH, ReplayContext
from jobs.replay.state import (CONSUMER, LEAVE_EPOCH, SHARE, STREAMS, Group, Member, TargetMember,
                               member_state_name)

# Streams members number their states from 1 (streams.MemberState), consumer members from 0.
STREAMS_MEMBER_STATES = {1: "STABLE", 2: "UNREVOKED_TASKS", 3: "UNRELEASED_TASKS"}

# Types the codec reads but the coordinator's serde has no entry for since 4.1 (its loader skips
# them with a WARN, UnknownRecordTypeException): 4.0's ShareGroupPartitionMetadata (9) and the
# streams types 18 and 24 no release loads. tests/test_java_release_profiles.py keeps this equal
# to what the newest release's profile says.
SKIPPED_BY_LOADER = frozenset({9, 18, 24})

RECORD_KINDS: dict[int, tuple[str, str]] = {
    3: (CONSUMER, "metadata"), 11: (SHARE, "metadata"), 17: (STREAMS, "metadata"),
    4: (CONSUMER, "partition_metadata"), 9: (SHARE, "partition_metadata"),
    18: (STREAMS, "partition_metadata"),
    5: (CONSUMER, "member"), 10: (SHARE, "member"), 19: (STREAMS, "member"),
    6: (CONSUMER, "target_metadata"), 12: (SHARE, "target_metadata"),
    20: (STREAMS, "target_metadata"),
    7: (CONSUMER, "target_member"), 13: (SHARE, "target_member"), 21: (STREAMS, "target_member"),
    8: (CONSUMER, "current"), 14: (SHARE, "current"), 22: (STREAMS, "current"),
    16: (CONSUMER, "regex"), 15: (SHARE, "topic_names"), 23: (STREAMS, "topology"),
    24: (STREAMS, "topology_ids"),
}


def apply_modern(ctx: ReplayContext, record) -> None:
    group_type, kind = RECORD_KINDS[record.record_type]
    group_id = record.key["groupId"]
    if record.value is None:
        group = ctx.existing_group(group_id, group_type)
        if group is None:
            return  # the coordinator ignores tombstones of missing groups (KAFKA-17306)
        group.position = ctx.position
        _TOMBSTONES[kind](ctx, group, record)
    else:
        group = ctx.modern_group(group_id, group_type)
        group.position = ctx.position
        _VALUES[kind](ctx, group, record)


# ---- positive values ------------------------------------------------------------------------

def _metadata(ctx: ReplayContext, group: Group, record) -> None:
    previous, group.group_epoch = group.group_epoch, record.value["epoch"]
    ctx.epoch_changed(group.group_id, None, "group", group.group_epoch, previous)


def _partition_metadata(ctx: ReplayContext, group: Group, record) -> None:
    for topic in record.value.get("topics") or ():
        ctx.name_topic(topic["topicId"], topic["topicName"])


def _topic_names(ctx: ReplayContext, group: Group, record) -> None:
    for field in ("initializingTopics", "initializedTopics", "deletingTopics"):
        for topic in record.value.get(field) or ():
            ctx.name_topic(topic["topicId"], topic["topicName"])


def _member(ctx: ReplayContext, group: Group, record) -> None:
    member_id, value = record.key["memberId"], record.value
    member = group.members.get(member_id)
    if member is None:
        member = group.members[member_id] = Member(member_id)
    if member.instance_id is not None and group.static_members.get(member.instance_id) == member_id:
        del group.static_members[member.instance_id]
    member.instance_id = value.get("instanceId")
    member.rack_id = value.get("rackId")
    member.client_id = value.get("clientId", "")
    member.client_host = value.get("clientHost", "")
    member.subscribed_topic_names = list(value.get("subscribedTopicNames") or ())
    member.subscribed_topic_regex = value.get("subscribedTopicRegex") or None
    member.rebalance_timeout_ms = value.get("rebalanceTimeoutMs", -1)
    member.server_assignor = value.get("serverAssignor") or None
    # A consumer-protocol member has an explicit null (4.3.1) or no tag (the empty struct);
    # a classic-protocol member always lists the protocols it supports.
    classic = value.get("classicMemberMetadata")
    member.uses_classic_protocol = bool(classic and classic.get("supportedProtocols"))
    member.session_timeout_ms = classic["sessionTimeoutMs"] if member.uses_classic_protocol else None
    if member.instance_id:
        group.static_members[member.instance_id] = member_id
    member.metadata_position = ctx.position


def _target_metadata(ctx: ReplayContext, group: Group, record) -> None:
    previous = group.target_assignment_epoch
    group.target_assignment_epoch = record.value["assignmentEpoch"]
    ctx.epoch_changed(group.group_id, None, "target_assignment", group.target_assignment_epoch,
                      previous)


def _target_member(ctx: ReplayContext, group: Group, record) -> None:
    partitions = target_partitions(record.record_type, record.value)
    group.target[record.key["memberId"]] = TargetMember(partitions, ctx.position)


def _current(ctx: ReplayContext, group: Group, record) -> None:
    member_id, value = record.key["memberId"], record.value
    member = group.members.get(member_id)
    if member is None:
        member = group.members[member_id] = Member(member_id)
    _release(group, member)
    assigned, dup_assigned, mismatch_a = current_partitions(record.record_type, value, False)
    pending, dup_pending, mismatch_p = current_partitions(record.record_type, value, True)
    for partition in [*dup_assigned, *dup_pending, *(set(assigned) & set(pending))]:
        ctx.violation("CG-02", CRITICAL, group.group_id,
                      f"partition {_fmt(partition)} listed twice in one member's assignment",
                      member_id)
    for topic in {*mismatch_a, *mismatch_p}:
        ctx.violation("CG-10", HIGH, group.group_id,
                      f"AssignmentEpochs length differs from Partitions for {topic}; "
                      "fell back to the member epoch", member_id)
    previous = member.member_epoch
    member.member_epoch = value["memberEpoch"]
    member.previous_member_epoch = value["previousMemberEpoch"]
    # 3.7's layout of type 8 has no state byte (the state was derived then): unknown.
    state = value.get("state")
    states = STREAMS_MEMBER_STATES if group.group_type == STREAMS else None
    member.member_state = (states.get(state, "UNKNOWN") if states else member_state_name(state))
    member.assigned, member.pending_revocation = assigned, pending
    member.assignment_position = ctx.position
    if group.group_type != SHARE:  # share-group partitions are shared, not owned
        _register(ctx, group, member)
    ctx.epoch_changed(group.group_id, member_id, "member", member.member_epoch, previous)


def _register(ctx: ReplayContext, group: Group, member: Member) -> None:
    for partition in sorted(member.owned(), key=lambda tp: (str(tp[0]), tp[1])):
        owner = group.ownership.get(partition)
        if owner is not None and owner[0] != member.member_id:
            ctx.violation("CG-01", CRITICAL, group.group_id,
                          f"partition {_fmt(partition)} already owned by member {owner[0]} at "
                          f"epoch {owner[1]}; the coordinator would fail to load",
                          member.member_id)
        group.ownership[partition] = (member.member_id, member.member_epoch)


def _release(group: Group, member: Member) -> None:
    for partition in member.owned():
        owner = group.ownership.get(partition)
        if owner is not None and owner[0] == member.member_id:
            del group.ownership[partition]


def _regex(ctx: ReplayContext, group: Group, record) -> None:
    group.resolved_regexes[record.key["regularExpression"]] = list(record.value.get("topics") or ())


def _topology(ctx: ReplayContext, group: Group, record) -> None:
    group.topology_epoch = record.value["epoch"]


def _nothing(ctx: ReplayContext, group: Group, record) -> None:
    return None


# ---- tombstones -----------------------------------------------------------------------------

def _metadata_tombstone(ctx: ReplayContext, group: Group, record) -> None:
    leftovers = []
    if group.members:
        leftovers.append(f"members {sorted(group.members)}")
    if group.target:
        leftovers.append(f"target members {sorted(group.target)}")
    if group.target_assignment_epoch != -1:
        leftovers.append(f"target assignment epoch {group.target_assignment_epoch}")
    if leftovers:
        ctx.violation("CG-08", CRITICAL, group.group_id,
                      "group metadata tombstone while the group still has " + ", ".join(leftovers)
                      + "; the coordinator would fail to load, group removed")
    del ctx.groups[group.group_id]


def _member_tombstone(ctx: ReplayContext, group: Group, record) -> None:
    member_id = record.key["memberId"]
    member = group.members.get(member_id)
    if member is None:
        return
    if member.member_epoch != LEAVE_EPOCH:
        ctx.violation("CG-07", CRITICAL, group.group_id,
                      "member metadata tombstone before the current-assignment tombstone (member "
                      f"epoch {member.member_epoch}); the coordinator would fail to load",
                      member_id)
    if member_id in group.target:
        ctx.violation("CG-07", CRITICAL, group.group_id,
                      "member metadata tombstone while the member still has a target assignment; "
                      "the coordinator would fail to load", member_id)
    _release(group, member)
    if member.instance_id and group.static_members.get(member.instance_id) == member_id:
        del group.static_members[member.instance_id]
    del group.members[member_id]


def _target_metadata_tombstone(ctx: ReplayContext, group: Group, record) -> None:
    if group.target:
        ctx.violation("CG-08", CRITICAL, group.group_id,
                      "target assignment metadata tombstone while target members "
                      f"{sorted(group.target)} remain; the coordinator would fail to load")
    previous, group.target_assignment_epoch = group.target_assignment_epoch, -1
    ctx.epoch_changed(group.group_id, None, "target_assignment", -1, previous)


def _target_member_tombstone(ctx: ReplayContext, group: Group, record) -> None:
    group.target.pop(record.key["memberId"], None)


def _current_tombstone(ctx: ReplayContext, group: Group, record) -> None:
    member_id = record.key["memberId"]
    member = group.members.get(member_id)
    if member is None:
        return
    _release(group, member)
    previous = member.member_epoch
    member.member_epoch = member.previous_member_epoch = LEAVE_EPOCH
    member.assigned, member.pending_revocation = {}, {}
    member.assignment_position = ctx.position
    ctx.epoch_changed(group.group_id, member_id, "member", LEAVE_EPOCH, previous)


def _regex_tombstone(ctx: ReplayContext, group: Group, record) -> None:
    group.resolved_regexes.pop(record.key["regularExpression"], None)


def _topology_tombstone(ctx: ReplayContext, group: Group, record) -> None:
    group.topology_epoch = None


def _fmt(partition) -> str:
    return f"{partition[0]}-{partition[1]}"


_VALUES = {"metadata": _metadata, "partition_metadata": _partition_metadata, "member": _member,
           "target_metadata": _target_metadata, "target_member": _target_member,
           "current": _current, "regex": _regex, "topic_names": _topic_names,
           "topology": _topology, "topology_ids": _nothing}
_TOMBSTONES = {"metadata": _metadata_tombstone, "partition_metadata": _nothing,
               "member": _member_tombstone, "target_metadata": _target_metadata_tombstone,
               "target_member": _target_member_tombstone, "current": _current_tombstone,
               "regex": _regex_tombstone, "topic_names": _nothing, "topology": _topology_tombstone,
               "topology_ids": _nothing}

"""Replay of GroupMetadata (type 2): classic groups.

A positive value builds a classic group from the record and **unconditionally replaces** whatever
group object has the id (Kafka's behaviour); a live modern group replaced that way means the log
mixes live classic and consumer records (MG-01). A tombstone removes any group with that id
(MG-01 too when that group is a live modern one); offsets stay. Member subscriptions and
assignments are decoded by the codec when the protocol type is ``consumer``; the assignment
becomes the member's classic assignment (by topic name).
"""

from __future__ import annotations

from jobs.replay.context import CRITICAL, ReplayContext
from jobs.replay.state import CLASSIC, Group, Member


def apply_group_metadata(ctx: ReplayContext, record) -> None:
    group_id = record.key["group"]
    existing = ctx.groups.get(group_id)
    if record.value is None:
        if existing is not None and existing.group_type != CLASSIC:
            # removeGroup takes any type: the live modern group and its members vanish on load,
            # with no tombstone of their own (a rewrite no release refuses).
            ctx.violation("MG-01", CRITICAL, group_id,
                          f"classic GroupMetadata tombstone removes a live {existing.group_type} "
                          f"group (group epoch {existing.group_epoch}, "
                          f"{len(existing.members)} members)")
        ctx.groups.pop(group_id, None)
        return
    value = record.value
    if existing is not None and existing.group_type != CLASSIC:
        ctx.violation("MG-01", CRITICAL, group_id,
                      f"classic GroupMetadata replaces a live {existing.group_type} group "
                      f"(group epoch {existing.group_epoch}, {len(existing.members)} members)")
    group = Group(group_id, CLASSIC, group_epoch=0, target_assignment_epoch=0,
                  generation=value["generation"],
                  protocol_type=value.get("protocolType") or None,
                  protocol=value.get("protocol"), leader=value.get("leader"),
                  current_state_timestamp=_present(value.get("currentStateTimestamp", -1)),
                  position=ctx.position)
    for raw in value.get("members") or ():
        member = _classic_member(raw)
        member.metadata_position = ctx.position
        group.members[member.member_id] = member
        if member.instance_id:
            group.static_members[member.instance_id] = member.member_id
    previous = existing.generation if existing is not None and existing.group_type == CLASSIC else None
    ctx.groups[group_id] = group
    ctx.epoch_changed(group_id, None, "generation", group.generation, previous)


def _classic_member(raw: dict) -> Member:
    session_timeout = raw.get("sessionTimeout")
    rebalance_timeout = raw.get("rebalanceTimeout", -1)
    subscription, assignment = raw.get("subscription"), raw.get("assignment")
    topics = list(subscription.get("topics") or ()) if isinstance(subscription, dict) else []
    assigned = []
    if isinstance(assignment, dict):
        assigned = [(tp["topic"], p) for tp in assignment.get("assignedPartitions") or ()
                    for p in tp["partitions"]]
    return Member(
        raw["memberId"], instance_id=raw.get("groupInstanceId"), client_id=raw.get("clientId", ""),
        client_host=raw.get("clientHost", ""), subscribed_topic_names=topics,
        rebalance_timeout_ms=session_timeout if rebalance_timeout == -1 else rebalance_timeout,
        session_timeout_ms=session_timeout, uses_classic_protocol=True,
        member_epoch=None, previous_member_epoch=None, member_state=None,
        classic_assignment=assigned)


def _present(value: int | None) -> int | None:
    return None if value is None or value == -1 else value

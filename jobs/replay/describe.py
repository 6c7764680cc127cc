"""A compact, comparable view of one replayed group (what ``kafka-consumer-groups --describe``
would show), with partitions spelled ``topic-partition``. Used by tests and notebooks.
"""

from __future__ import annotations

import uuid

from jobs.replay.derive import group_state
from jobs.replay.state import Group


def _names(partitions, topic_names: dict[uuid.UUID, str]) -> list[str]:
    def key(tp):
        return str(topic_names.get(tp[0], tp[0])), tp[1]
    return [f"{t}-{p}" for t, p in sorted(map(key, partitions))]


def describe_group(group: Group | None, topic_names: dict[uuid.UUID, str] | None = None) -> dict | None:
    """``{"group_epoch", "target_assignment_epoch", "group_state", "target": {member: [...]},
    "members": {member: {"member_epoch", "previous_member_epoch", "member_state", "assigned",
    "pending_revocation", "unreleased", "uses_classic_protocol"}}}``; None for a missing group.

    ``unreleased`` is what KIP-848's case studies call a member's pending partitions: target
    partitions it waits for while another member still owns them (state UNRELEASED_PARTITIONS)."""
    if group is None:
        return None
    names = topic_names or {}
    members = {}
    for member_id, m in sorted(group.members.items()):
        target = group.target.get(member_id)
        waiting = (set(target.partitions) - set(m.assigned)
                   if target is not None and m.member_state == "UNRELEASED_PARTITIONS" else ())
        members[member_id] = {
            "member_epoch": m.member_epoch, "previous_member_epoch": m.previous_member_epoch,
            "member_state": m.member_state, "assigned": _names(m.assigned, names),
            "pending_revocation": _names(m.pending_revocation, names),
            "unreleased": _names(waiting, names),
            "uses_classic_protocol": m.uses_classic_protocol}
    return {"group_type": group.group_type, "group_epoch": group.group_epoch,
            "target_assignment_epoch": group.target_assignment_epoch,
            "group_state": group_state(group),
            "target": {mid: _names(t.partitions, names) for mid, t in sorted(group.target.items())},
            "members": members}

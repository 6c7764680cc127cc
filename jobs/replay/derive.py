"""Group state derived from replayed records, in Kafka's words (reference §2.7).

Consumer and streams groups: no members → ``Empty``; group epoch > target assignment epoch →
``Assigning``; any member not (``STABLE`` at the target assignment epoch) → ``Reconciling``; else
``Stable``. Streams groups without a topology record are ``NotReady``. Classic and share groups
after a load are ``Empty`` (no members) or ``Stable``. ``Dead`` is never derived from records.
"""

from __future__ import annotations

from jobs.replay.state import CLASSIC, SHARE, STREAMS, Group

EMPTY, ASSIGNING, RECONCILING, STABLE, NOT_READY = (
    "Empty", "Assigning", "Reconciling", "Stable", "NotReady")


def group_state(group: Group) -> str:
    if not group.members:
        return EMPTY
    if group.group_type in (CLASSIC, SHARE):
        return STABLE
    if group.group_type == STREAMS and group.topology_epoch is None:
        return NOT_READY
    if group.group_epoch > group.target_assignment_epoch:
        return ASSIGNING
    for member in group.members.values():
        if member.member_state != "STABLE" or member.member_epoch != group.target_assignment_epoch:
            return RECONCILING
    return STABLE

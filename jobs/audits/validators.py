"""Kafka's offset-commit fencing, as the coordinator decides it, for one member and one partition.

Offset-commit records carry no member id or epoch, so the audits never see a rejected request;
they use these rules to say which client epochs a member could have committed a partition with
at a given log position (the evidence a finding shows), and to pick the regime:

* ``strict`` (up to 4.2, ``ConsumerGroup.validateOffsetCommit``): the client epoch must equal the
  member epoch; then every partition is accepted, owned or not.
* ``relaxed`` (4.3+, KIP-1251, no flag): equal epoch accepts every partition; a newer client epoch
  is stale; an older one is accepted per partition when the partition is in the member's assigned
  (else pending-revocation) partitions with an assignment epoch <= the client epoch. Streams
  groups (``StreamsGroup.createAssignmentEpochValidator``) do the same on active tasks. The
  error is ILLEGAL_GENERATION for classic-protocol members, STALE_MEMBER_EPOCH otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable

from jobs.replay.state import Member

STRICT, RELAXED = "strict", "relaxed"
REGIMES = (STRICT, RELAXED)
STALE_MEMBER_EPOCH, ILLEGAL_GENERATION = "STALE_MEMBER_EPOCH", "ILLEGAL_GENERATION"
CURRENT_ASSIGNMENT_TYPES = (8, 22)


def commit_error(member: Member, partition, client_epoch: int, regime: str) -> str | None:
    """The error the coordinator answers for ``partition`` committed by ``member`` with
    ``client_epoch``, or None when it accepts (member id and group checks already passed)."""
    stale = ILLEGAL_GENERATION if member.uses_classic_protocol else STALE_MEMBER_EPOCH
    if client_epoch == member.member_epoch:
        return None
    if regime == STRICT or client_epoch > member.member_epoch:
        return stale
    owned = member.assigned.get(partition) or member.pending_revocation.get(partition)
    if owned is None or client_epoch < owned.assignment_epoch:
        return stale
    return None


def accepted_client_epochs(member: Member, partition, regime: str) -> list[int]:
    """Every client epoch the coordinator accepts for ``partition`` from ``member``: the member
    epoch alone (strict, or a partition it does not own), or ``assignment epoch .. member epoch``."""
    epoch = member.member_epoch
    if epoch is None or epoch < 0:
        return []
    owned = member.assigned.get(partition) or member.pending_revocation.get(partition)
    if regime == STRICT or owned is None:
        return [epoch]
    return list(range(max(owned.assignment_epoch, 0), epoch + 1))


def detect_regime(events: Iterable) -> str:
    """``relaxed`` when a current-assignment record carries AssignmentEpochs (only 4.3+ brokers
    write the tag, always), else ``strict``."""
    for event in events:
        record = getattr(event, "record", None)
        if getattr(record, "record_type", None) not in CURRENT_ASSIGNMENT_TYPES:
            continue
        value = record.value or {}
        for field in ("assignedPartitions", "partitionsPendingRevocation", "activeTasks",
                      "activeTasksPendingRevocation"):
            if any(entry.get("assignmentEpochs") for entry in value.get(field) or ()):
                return RELAXED
    return STRICT

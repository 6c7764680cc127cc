"""Kafka's offset-commit fencing, as the coordinator decides it, for one member and one partition.

Offset-commit records carry no member id or epoch, so the audits never see a rejected request;
they use these rules to say which client epochs a member could have committed a partition with
at a given log position (the evidence a finding shows), and to pick the regime:

* ``strict`` (up to 4.2, ``ConsumerGroup.validateOffsetCommit``): the client epoch must equal the
  member epoch; then every partition is accepted, owned or not.
* ``relaxed`` (consumer groups from 4.3, KIP-1251, no flag): equal epoch accepts every
  partition; a newer client epoch is stale; an older one is accepted per partition when the
  partition is in the member's assigned (else pending-revocation) partitions with an assignment
  epoch <= the client epoch. Streams groups do the same on active tasks from 4.2
  (``StreamsGroup.createAssignmentEpochValidator``), so one snapshot can fence its two modern
  group types differently (:func:`regime_for`). The error is ILLEGAL_GENERATION for
  classic-protocol members, STALE_MEMBER_EPOCH otherwise.
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


def regime_for(regime: str, group_type: str) -> str:
    """The regime a group of ``group_type`` is fenced by. ``regime`` is one regime for every
    group, or one per type as :func:`combine_regimes` writes it (``consumer=strict,streams=relaxed``)."""
    if "=" not in regime:
        return regime
    per_type = dict(part.split("=", 1) for part in regime.split(","))
    return per_type.get(group_type, STRICT)


def combine_regimes(consumer_relaxed: bool, streams_relaxed: bool) -> str:
    """A snapshot's regime from what its records prove of the writer's release: consumer groups
    are fenced by KIP-1251 from 4.3 (only 4.3+ writes type-8 AssignmentEpochs), streams groups
    from 4.2 (``StreamsGroup.createAssignmentEpochValidator``; 4.2+ writes type-22 ones, and a
    4.3+ writer is a 4.2+ one)."""
    consumer = RELAXED if consumer_relaxed else STRICT
    streams = RELAXED if streams_relaxed or consumer_relaxed else STRICT
    return consumer if consumer == streams else f"consumer={consumer},streams={streams}"


def detect_regime(events: Iterable) -> str:
    """The regime per group type (:func:`combine_regimes`) of replay events (:func:`regime_of`
    over their current-assignment records)."""
    return regime_of((r.record_type, r.value) for r in
                     (getattr(event, "record", None) for event in events)
                     if getattr(r, "record_type", None) in CURRENT_ASSIGNMENT_TYPES)


def regime_of(values: Iterable[tuple[int, dict | None]]) -> str:
    """The one definition of a snapshot's regime per group type (:func:`combine_regimes`):
    ``(record type, value)`` of its current-assignment records (types 8 and 22); a type counts
    once one of its records carries AssignmentEpochs. The audit stage feeds it the ``records``
    table's values, :func:`detect_regime` replay events."""
    found = set()
    for record_type, value in values:
        if record_type not in CURRENT_ASSIGNMENT_TYPES or record_type in found:
            continue
        value = value or {}
        for field in ("assignedPartitions", "partitionsPendingRevocation", "activeTasks",
                      "activeTasksPendingRevocation"):
            if any(entry.get("assignmentEpochs") for entry in value.get(field) or ()):
                found.add(record_type)
        if found >= set(CURRENT_ASSIGNMENT_TYPES):
            break
    return combine_regimes(8 in found, 22 in found)

"""KIP-1251 assignment epochs: the epoch at which each owned partition was assigned to a member.

``TopicPartitions.AssignmentEpochs`` (tagged, nullable, aligned with ``Partitions``) exists from
4.3 on. Its schema default is the empty array (Kafka's ``"default": null`` is unspecified), so a
record written before 4.3 (tag absent) reads as ``[]`` and an explicit null as ``None``. Readers
keep the stored list exactly and derive the effective epochs the way the coordinator does when it
replays the record (``epochs != null && !epochs.isEmpty()`` or else the legacy path):

* absent, null or empty (legacy): every partition gets the member epoch, clamped at 0 (a static
  member that left has epoch -2, which counts as 0);
* same length as ``Partitions``: used as is;
* length mismatch: Kafka logs an error and falls back to the member epoch for that topic entry; we
  do the same (clamped like the legacy case) and raise the mismatch flag for audits.
"""

from __future__ import annotations

EXPLICIT = "explicit"
LEGACY_NULL = "legacy_null"
LENGTH_MISMATCH = "length_mismatch"


def effective_assignment_epochs(partitions: list[int], assignment_epochs: list[int] | None,
                                member_epoch: int) -> tuple[list[int], str, bool]:
    """(per-partition epochs, source in {explicit, legacy_null, length_mismatch}, mismatch flag).

    ``legacy_null`` covers an absent, null or empty AssignmentEpochs.

    >>> effective_assignment_epochs([0, 1], None, -2)
    ([0, 0], 'legacy_null', False)
    >>> effective_assignment_epochs([0, 1], [], 3)
    ([3, 3], 'legacy_null', False)
    """
    if not assignment_epochs:
        return [max(member_epoch, 0)] * len(partitions), LEGACY_NULL, False
    if len(assignment_epochs) != len(partitions):
        return [max(member_epoch, 0)] * len(partitions), LENGTH_MISMATCH, True
    return list(assignment_epochs), EXPLICIT, False

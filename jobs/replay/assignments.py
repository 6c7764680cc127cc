"""Reading partition sets out of modern-group records, with KIP-1251 effective assignment epochs.

Consumer groups key partitions by ``(topic id, partition)``; streams groups by
``(subtopology id, partition)`` of their *active* tasks (standby and warm-up tasks are not
exclusively owned, so they stay out of the ownership index). Share groups have no assignment
epochs: their partitions take the member epoch (source ``member_epoch``).

Streams groups fall back differently from consumer groups (``TasksTupleWithEpochs``): the
member epoch is **not** clamped at 0, so a static member that left (-2) keeps -2.
"""

from __future__ import annotations

try:
    from decoders.assignment_epochs import effective_assignment_epochs
except ImportError:  # pragma: no cover - the codec package ships it; kept for partial checkouts
    def effective_assignment_epochs(partitions, assignment_epochs, member_epoch):
        if not assignment_epochs:  # absent, null or empty: legacy
            return [max(member_epoch, 0)] * len(partitions), "legacy_null", False
        if len(assignment_epochs) != len(partitions):
            return [max(member_epoch, 0)] * len(partitions), "length_mismatch", True
        return list(assignment_epochs), "explicit", False

from jobs.replay.state import AssignedPartition

MEMBER_EPOCH_SOURCE = "member_epoch"


def streams_assignment_epochs(partitions: list[int], assignment_epochs: list[int] | None,
                              member_epoch: int) -> tuple[list[int], str, bool]:
    """Like :func:`effective_assignment_epochs`, without the clamp of the fallback epoch."""
    effective, source, mismatch = effective_assignment_epochs(partitions, assignment_epochs,
                                                              member_epoch)
    if source == "explicit":
        return effective, source, mismatch
    return [member_epoch] * len(partitions), source, mismatch


def target_partitions(record_type: int, value: dict) -> set:
    """Partitions of a target-assignment member record (types 7, 13, 21)."""
    if record_type == 21:
        return {(t["subtopologyId"], p) for t in value.get("activeTasks") or () for p in t["partitions"]}
    return {(t["topicId"], p) for t in value.get("topicPartitions") or () for p in t["partitions"]}


def _entries(record_type: int, value: dict, pending: bool) -> list[tuple[object, list, list | None]]:
    if record_type == 22:
        field = "activeTasksPendingRevocation" if pending else "activeTasks"
        return [(t["subtopologyId"], t["partitions"], t.get("assignmentEpochs"))
                for t in value.get(field) or ()]
    if record_type == 14:
        if pending:
            return []
        return [(t["topicId"], t["partitions"], MEMBER_EPOCH_SOURCE)
                for t in value.get("assignedPartitions") or ()]
    field = "partitionsPendingRevocation" if pending else "assignedPartitions"
    return [(t["topicId"], t["partitions"], t.get("assignmentEpochs"))
            for t in value.get(field) or ()]


def current_partitions(record_type: int, value: dict, pending: bool):
    """``(partitions, duplicates, mismatched topics)`` of a current-assignment record (8/14/22).

    ``partitions`` maps each partition to its :class:`AssignedPartition`; ``duplicates`` lists
    partitions listed twice in the same set; ``mismatched`` lists topic entries whose
    AssignmentEpochs length differs from Partitions (Kafka logs an error and falls back)."""
    member_epoch = value["memberEpoch"]
    result: dict = {}
    duplicates: list = []
    mismatched: list = []
    for topic, partitions, epochs in _entries(record_type, value, pending):
        if epochs == MEMBER_EPOCH_SOURCE:
            effective, source = [max(member_epoch, 0)] * len(partitions), MEMBER_EPOCH_SOURCE
        else:
            derive = streams_assignment_epochs if record_type == 22 else effective_assignment_epochs
            effective, source, mismatch = derive(partitions, epochs, member_epoch)
            if mismatch:
                mismatched.append(topic)
        for partition, epoch in zip(partitions, effective):
            if (topic, partition) in result:
                duplicates.append((topic, partition))
            result[(topic, partition)] = AssignedPartition(epoch, source)
    return result, duplicates, mismatched

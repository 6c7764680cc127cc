"""What the replay stage consumes: one event per record (or end-transaction marker) in log order.

The Spark job builds these from the segment reader's batches: the batch header gives
``producer_id`` and ``is_transactional`` (the coordinator keys pending offsets on the producer
id alone), a control batch gives ``control_type`` and no ``record``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from decoders.codec import decode_record, key_group_id
from decoders.log.layout import CONTROL_ABORT, CONTROL_COMMIT, CONTROL_TYPE_NAMES

NO_PRODUCER_ID = -1
CONTROL_TYPES = CONTROL_TYPE_NAMES
COMMIT = CONTROL_TYPE_NAMES[CONTROL_COMMIT]
ABORT = CONTROL_TYPE_NAMES[CONTROL_ABORT]
# A transaction's outcome, one spelling in both tables that carry it (transactions,
# offset_commits): the marker's effect, lower case; OPEN when no marker followed.
COMMITTED, ABORTED, OPEN = "committed", "aborted", "open"
OUTCOME_OF_MARKER = {COMMIT: COMMITTED, ABORT: ABORTED}


@dataclass(frozen=True, slots=True)
class ReplayEvent:
    """A data record (``record`` set, ``control_type`` None) or a marker (``record`` None).

    ``record`` is a :class:`decoders.codec.CoordinatorRecord` or
    :class:`decoders.codec.UnknownRecord` (Kafka's loader skips unknown types with a warning).
    """

    partition: int
    offset: int
    timestamp: int
    producer_id: int = NO_PRODUCER_ID
    is_transactional: bool = False
    control_type: str | None = None
    record: Any = None

    @property
    def is_marker(self) -> bool:
        return self.control_type is not None

    @property
    def position(self) -> tuple[int, int]:
        return self.partition, self.offset


def group_id_of(record: Any) -> str | None:
    """The group a decoded record belongs to; None for an unknown record type (raw key)."""
    key = getattr(record, "key", None)
    return key_group_id(key) if isinstance(key, dict) else None


def log_batch_events(batch, partition: int) -> list[ReplayEvent]:
    """The events of one batch the segment reader framed (:class:`decoders.log.types.RecordBatch`):
    one per data record (decoded by the codec), one marker per COMMIT or ABORT control record,
    nothing for other control records."""
    if batch.is_control:
        return [ReplayEvent(partition, r.offset, r.timestamp, batch.producer_id,
                            batch.is_transactional, CONTROL_TYPES[r.control_type], None)
                for r in batch.records if r.control_type in CONTROL_TYPES]
    return [ReplayEvent(partition, r.offset, r.timestamp, batch.producer_id,
                        batch.is_transactional, None, decode_record(r.key, r.value))
            for r in batch.records]

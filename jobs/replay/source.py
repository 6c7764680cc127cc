"""Replay events straight from a snapshot's partition directory (benchmarks, tests, notebooks).

The Spark job builds events from its decoded tables instead; this is the same mapping for one
partition read locally: data batches give one event per record (decoded by the codec), COMMIT and
ABORT control batches one marker event, other control records nothing. A batch that cannot be
decoded raises: replaying around a hole would silently change the state.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from decoders.codec import decode_record
from decoders.log.segment import iter_partition_dir
from decoders.log.types import BatchError, RecordBatch
from jobs.replay.events import CONTROL_TYPES, ReplayEvent


def events_from_partition_dir(directory: str | os.PathLike,
                              partition: int | None = None) -> Iterator[ReplayEvent]:
    for segment, item in iter_partition_dir(directory, partition):
        if isinstance(item, BatchError):
            raise ValueError(f"{segment.path} at byte {item.file_position}: {item.reason} "
                             f"({item.message})")
        if not isinstance(item, RecordBatch):
            continue  # a truncated tail: normal for an active segment
        part = segment.partition if partition is None else partition
        yield from _batch_events(item, part)


def _batch_events(batch: RecordBatch, partition: int) -> Iterator[ReplayEvent]:
    for record in batch.records:
        if batch.is_control:
            control = CONTROL_TYPES.get(record.control_type)
            if control is not None:
                yield ReplayEvent(partition, record.offset, record.timestamp, batch.producer_id,
                                  batch.is_transactional, control, None)
            continue
        yield ReplayEvent(partition, record.offset, record.timestamp, batch.producer_id,
                          batch.is_transactional, None, decode_record(record.key, record.value))

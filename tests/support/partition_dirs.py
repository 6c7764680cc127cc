"""Replay events and downgrade facts straight from a ``__consumer_offsets-N`` directory, for the
tests, the differential suite and the sample tools: file reading stays out of the pure packages,
which take framed batches (:func:`jobs.replay.events.log_batch_events`,
:func:`jobs.audits.downgrade_facts.log_batch_facts`).

A batch that cannot be framed raises here: replaying around a hole would silently change the state.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from decoders.log.segment import iter_partition_dir
from decoders.log.types import BatchError, RecordBatch
from jobs.audits.downgrade_facts import RecordFacts, log_batch_facts, mark_live
from jobs.replay.events import ReplayEvent, log_batch_events


def framed_batches(directory: str | os.PathLike, partition: int | None = None,
                   *, strict: bool = True) -> Iterator[tuple[int, RecordBatch]]:
    """``(partition, batch)`` for every batch of the directory's segments, in log order; a
    damaged batch raises when ``strict``, else it is skipped (a truncated tail always is)."""
    for segment, item in iter_partition_dir(directory, partition):
        if isinstance(item, BatchError) and strict:
            raise ValueError(f"{segment.path} at byte {item.file_position}: {item.reason} "
                             f"({item.message})")
        if isinstance(item, RecordBatch):
            yield (segment.partition if partition is None else partition), item


def events_from_partition_dir(directory: str | os.PathLike,
                              partition: int | None = None) -> Iterator[ReplayEvent]:
    """Every replay event of the directory, in log order."""
    for part, batch in framed_batches(directory, partition):
        yield from log_batch_events(batch, part)


def facts_from_partition_dir(directory: str | os.PathLike,
                             partition: int | None = None) -> list[RecordFacts]:
    """Facts of every data record and transaction marker of the directory, liveness marked."""
    return mark_live([f for part, batch in framed_batches(directory, partition, strict=False)
                      for f in log_batch_facts(batch, part)])

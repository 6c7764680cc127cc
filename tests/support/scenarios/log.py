"""The scenario's log: batches with offsets, turned into replay events or real segment files.

Compaction (``compact``) models Kafka's log cleaner on ``__consumer_offsets``: below the last
stable offset (the first offset of a still-open transaction) only the latest record per key
survives, aborted transactional data is dropped, and a marker goes once no data of its
transaction is left. Offsets are preserved; records at or after the last stable offset are left
alone. Tombstones survive unless ``drop_tombstones`` (delete.retention.ms has passed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from decoders.codec import decode_record, encode_key, encode_value
from decoders.log.types import LogRecord
from decoders.log.writer import encode_batch, encode_control_batch, write_segment
from jobs.replay.events import ABORT, COMMIT, ReplayEvent
from support.scenarios.records import Rec

CONTROL_IDS = {ABORT: 0, COMMIT: 1}


@dataclass
class Batch:
    """A data batch (``records`` as ``(offset, Rec)``) or a control batch (``control_type``)."""

    base_offset: int
    timestamp: int
    records: list[tuple[int, Rec]] = field(default_factory=list)
    producer_id: int = -1
    producer_epoch: int = -1
    is_transactional: bool = False
    control_type: str | None = None
    last_offset: int | None = None

    @property
    def end_offset(self) -> int:
        """The offset after this batch."""
        if self.last_offset is not None:
            return self.last_offset + 1
        return (self.records[-1][0] if self.records else self.base_offset) + 1


def encode(rec: Rec) -> tuple[bytes, bytes | None]:
    key = encode_key(rec.record_type, rec.key)
    value = None if rec.value is None else encode_value(rec.record_type, rec.value_version, rec.value)
    return key, value


def batch_events(batch: Batch, partition: int) -> list[ReplayEvent]:
    """Events of one batch, each record decoded by the codec from its encoded bytes."""
    if batch.control_type is not None:
        return [ReplayEvent(partition, batch.base_offset, batch.timestamp, batch.producer_id,
                            True, batch.control_type, None)]
    return [ReplayEvent(partition, offset, batch.timestamp, batch.producer_id,
                        batch.is_transactional, None, decode_record(*encode(rec)))
            for offset, rec in batch.records]


def batch_bytes(batch: Batch) -> bytes:
    if batch.control_type is not None:
        return encode_control_batch(CONTROL_IDS[batch.control_type], 0, offset=batch.base_offset,
                                    producer_id=batch.producer_id,
                                    producer_epoch=batch.producer_epoch,
                                    timestamp=batch.timestamp)
    records = [LogRecord(offset, batch.timestamp, *encode(rec)) for offset, rec in batch.records]
    return encode_batch(records, base_offset=batch.base_offset, producer_id=batch.producer_id,
                        producer_epoch=batch.producer_epoch,
                        is_transactional=batch.is_transactional, last_offset=batch.last_offset)


def write_partition(batches: list[Batch], directory: str | os.PathLike, partition: int) -> Path:
    """``<directory>/__consumer_offsets-<partition>/00000000000000000000.log``; returns the file."""
    part_dir = Path(directory) / f"__consumer_offsets-{partition}"
    part_dir.mkdir(parents=True, exist_ok=True)
    path = part_dir / "00000000000000000000.log"
    write_segment(path, [batch_bytes(b) for b in batches])
    return path


def _transaction_outcomes(batches: list[Batch]) -> dict[int, str | None]:
    """Transactional data batch base offset -> COMMIT / ABORT / None (still open)."""
    outcomes: dict[int, str | None] = {}
    open_batches: dict[int, list[int]] = {}
    for batch in batches:
        if batch.control_type is not None:
            for base in open_batches.pop(batch.producer_id, []):
                outcomes[base] = batch.control_type
        elif batch.is_transactional:
            open_batches.setdefault(batch.producer_id, []).append(batch.base_offset)
            outcomes[batch.base_offset] = None
    return outcomes


def compact(batches: list[Batch], *, drop_tombstones: bool = False) -> list[Batch]:
    outcomes = _transaction_outcomes(batches)
    open_starts = [base for base, outcome in outcomes.items() if outcome is None]
    stable = min(open_starts) if open_starts else float("inf")
    latest: dict[bytes, int] = {}
    for batch in batches:
        if batch.control_type is None and outcomes.get(batch.base_offset) != ABORT:
            for offset, rec in batch.records:
                if offset < stable:
                    latest[encode(rec)[0]] = offset
    survivors: list[Batch] = []
    live_txn_producers: dict[int, bool] = {}
    for batch in batches:
        if batch.control_type is not None:
            keep = batch.base_offset >= stable or live_txn_producers.pop(batch.producer_id, False)
            if keep:
                survivors.append(batch)
            continue
        kept = [(o, r) for o, r in batch.records
                if o >= stable or (outcomes.get(batch.base_offset) != ABORT
                                   and latest.get(encode(r)[0]) == o
                                   and not (drop_tombstones and r.value is None))]
        if batch.is_transactional and kept:
            live_txn_producers[batch.producer_id] = True
        if kept:
            survivors.append(replace(batch, records=kept,
                                     last_offset=batch.end_offset - 1))
    return survivors

"""Turn a byte range of a segment file into Arrow rows of the bronze contract.

This is the only code the ingest job runs on executors; it is plain pyarrow over
``decoders.log`` so it is tested without Spark. Each output row has a ``row_kind``: ``record``
(the ``raw_records`` columns filled), ``quarantine`` (a unit of bytes that could not be read, with
its raw bytes and reason) or ``accounting`` (one per range: how many file bytes it covered, and how
many records it read only by resynchronising after damage).

Memory is bounded by bytes: a task holds one entry (at most ``max_batch_bytes`` on disk and
``max_decompressed_bytes`` of records) plus the rows not yet handed to Spark, which are flushed
as an Arrow batch once they reach ``arrow_batch_bytes`` (or ``ROWS_PER_BATCH`` rows). The bounds
come from the ``ingest:`` section of ``conf/offsetlake.yaml`` (:class:`ReadLimits`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Iterable, Iterator, Mapping

import pyarrow as pa

from decoders.log import (CONTROL_TYPE_NAMES, DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_DECOMPRESSED,
                          RecordBatch, iter_segment)
from jobs.lake.bronze import QUARANTINE_COLUMNS, RAW_RECORDS_COLUMNS

_QUARANTINE_ONLY = [c for c in QUARANTINE_COLUMNS if c[0] not in {n for n, _, _ in RAW_RECORDS_COLUMNS}]
ROW_SCHEMA = pa.schema(
    [pa.field(n, t) for n, t, _ in RAW_RECORDS_COLUMNS]
    + [pa.field(n, t) for n, t, _ in _QUARANTINE_ONLY]
    + [pa.field("row_kind", pa.string()), pa.field("task_bytes", pa.int64()),
       pa.field("task_recovered", pa.int64())])
RECORD, QUARANTINE, ACCOUNTING = "record", "quarantine", "accounting"
ROWS_PER_BATCH = 8192
ROW_OVERHEAD_BYTES = 256         # the fixed-width columns and strings of one row, roughly


@dataclass(frozen=True)
class ReadLimits:
    """Byte bounds of one ingest task (``ingest:`` in conf/offsetlake.yaml)."""
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED
    arrow_batch_bytes: int = 16 * 1024 * 1024

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> ReadLimits:
        known = {k: int(v) for k, v in settings.items() if k in cls.__dataclass_fields__}
        limits = cls(**known)
        if min(limits.max_batch_bytes, limits.max_decompressed_bytes,
               limits.arrow_batch_bytes) <= 0:
            raise ValueError(f"ingest limits must be positive: {limits}")
        return limits


@dataclass(frozen=True)
class RangeTask:
    """One unit of ingest work: the batches of ``path`` that start in ``[start, end)``."""
    source_file: str
    partition: int | None
    start: int
    end: int


def _record_row(snapshot_id: str, task: RangeTask, batch: RecordBatch, record) -> dict:
    control_type = record.control_type
    return {
        "snapshot_id": snapshot_id, "partition": task.partition, "offset": record.offset,
        "timestamp": record.timestamp, "timestamp_type": batch.timestamp_type,
        "batch_base_offset": batch.base_offset, "producer_id": batch.producer_id,
        "producer_epoch": batch.producer_epoch, "is_transactional": batch.is_transactional,
        "is_control": batch.is_control,
        "control_type": (None if control_type is None
                         else CONTROL_TYPE_NAMES.get(control_type, str(control_type))),
        "coordinator_epoch": record.coordinator_epoch, "magic": batch.magic,
        "compression": batch.compression, "crc_valid": batch.crc_valid,
        "key": record.key, "value": record.value, "source_file": task.source_file,
        "file_position": batch.file_position, "row_kind": RECORD,
    }


def _quarantine_row(snapshot_id: str, task: RangeTask, item) -> dict:
    return {
        "snapshot_id": snapshot_id, "partition": task.partition, "offset": item.offset,
        "source_file": task.source_file, "file_position": item.file_position,
        "stage": item.stage, "reason": item.reason, "message": item.message,
        "length": item.length, "raw": item.raw, "raw_truncated": bool(item.raw_truncated),
        "row_kind": QUARANTINE,
    }


def _to_batch(rows: list[dict]) -> pa.RecordBatch:
    columns = [pa.array([r.get(f.name) for r in rows], type=f.type) for f in ROW_SCHEMA]
    return pa.RecordBatch.from_arrays(columns, schema=ROW_SCHEMA)


def _row_bytes(row: dict) -> int:
    return ROW_OVERHEAD_BYTES + sum(len(row.get(c) or b"") for c in ("key", "value", "raw"))


def read_range(snapshot_id: str, task: RangeTask,
               limits: ReadLimits = ReadLimits()) -> Iterator[pa.RecordBatch]:
    """Arrow batches for every record and every unreadable unit in ``task``'s range.

    The last row is the range's ``accounting`` row: ``task_bytes`` is how many bytes of the file
    it covered (complete batches plus quarantined units), reconciled by the job against file sizes;
    ``task_recovered`` how many of its records were read after a resynchronisation.
    """
    rows: list[dict] = []
    pending = accounted = recovered = 0
    for item in iter_segment(task.source_file, task.start, task.end,
                             max_batch_bytes=limits.max_batch_bytes,
                             max_decompressed=limits.max_decompressed_bytes):
        if isinstance(item, RecordBatch):
            accounted += item.batch_length
            recovered += len(item.records) if item.recovered else 0
            new = [_record_row(snapshot_id, task, item, r) for r in item.records]
        else:
            accounted += item.length
            new = [_quarantine_row(snapshot_id, task, item)]
        del item                  # the decoded batch is not kept while its rows wait
        for row in new:
            rows.append(row)
            pending += _row_bytes(row)
            if len(rows) >= ROWS_PER_BATCH or pending >= limits.arrow_batch_bytes:
                yield _to_batch(rows)
                rows, pending = [], 0
    rows.append({"snapshot_id": snapshot_id, "source_file": task.source_file,
                 "row_kind": ACCOUNTING, "task_bytes": accounted, "task_recovered": recovered})
    yield _to_batch(rows)


def read_tasks(snapshot_id: str, tasks: Iterable[RangeTask],
               limits: ReadLimits = ReadLimits()) -> Iterator[pa.RecordBatch]:
    for task in tasks:
        yield from read_range(snapshot_id, task, limits)

"""Turn a byte range of a segment file into Arrow rows of the bronze contract.

This is the only code the ingest job runs on executors; it is plain pyarrow over
``decoders.log`` so it is tested without Spark. Each output row has a ``row_kind``: ``record``
(the ``raw_records`` columns filled), ``quarantine`` (a unit of bytes that could not be read, with
its raw bytes and reason) or ``accounting`` (one per range: how many file bytes it covered).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

import pyarrow as pa

from decoders.log import CONTROL_TYPE_NAMES, RecordBatch, TruncatedTail, iter_segment
from jobs.lake.bronze import QUARANTINE_COLUMNS, RAW_RECORDS_COLUMNS

_QUARANTINE_ONLY = [c for c in QUARANTINE_COLUMNS if c[0] not in {n for n, _, _ in RAW_RECORDS_COLUMNS}]
ROW_SCHEMA = pa.schema(
    [pa.field(n, t) for n, t, _ in RAW_RECORDS_COLUMNS]
    + [pa.field(n, t) for n, t, _ in _QUARANTINE_ONLY]
    + [pa.field("row_kind", pa.string()), pa.field("task_bytes", pa.int64())])
RECORD, QUARANTINE, ACCOUNTING = "record", "quarantine", "accounting"
ROWS_PER_BATCH = 8192


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
    is_tail = isinstance(item, TruncatedTail)
    return {
        "snapshot_id": snapshot_id, "partition": task.partition,
        "offset": None if is_tail else item.base_offset,
        "source_file": task.source_file, "file_position": item.file_position,
        "stage": "segment" if is_tail else "batch",
        "reason": "truncated_tail" if is_tail else item.reason,
        "message": (f"{item.length} byte(s) at the end of the file do not form a complete batch"
                    if is_tail else item.message),
        "length": item.length, "raw": item.raw, "raw_truncated": bool(item.raw_truncated),
        "row_kind": QUARANTINE,
    }


def _to_batch(rows: list[dict]) -> pa.RecordBatch:
    columns = [pa.array([r.get(f.name) for r in rows], type=f.type) for f in ROW_SCHEMA]
    return pa.RecordBatch.from_arrays(columns, schema=ROW_SCHEMA)


def read_range(snapshot_id: str, task: RangeTask) -> Iterator[pa.RecordBatch]:
    """Arrow batches for every record and every unreadable unit in ``task``'s range.

    The last row is the range's ``accounting`` row: ``task_bytes`` is how many bytes of the file
    it covered (complete batches plus quarantined units), reconciled by the job against file sizes.
    """
    rows: list[dict] = []
    accounted = 0
    for item in iter_segment(task.source_file, task.start, task.end):
        if isinstance(item, RecordBatch):
            accounted += item.batch_length
            rows.extend(_record_row(snapshot_id, task, item, r) for r in item.records)
        else:
            accounted += item.length
            rows.append(_quarantine_row(snapshot_id, task, item))
        if len(rows) >= ROWS_PER_BATCH:
            yield _to_batch(rows)
            rows = []
    rows.append({"snapshot_id": snapshot_id, "source_file": task.source_file,
                 "row_kind": ACCOUNTING, "task_bytes": accounted})
    yield _to_batch(rows)


def read_tasks(snapshot_id: str, tasks: Iterable[RangeTask]) -> Iterator[pa.RecordBatch]:
    for task in tasks:
        yield from read_range(snapshot_id, task)

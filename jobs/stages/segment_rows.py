"""Turn a byte range of a segment file into Arrow rows of the bronze contract.

This is the only code the ingest job runs on executors; it is plain pyarrow over
``decoders.log`` so it is tested without Spark. Each output row has a ``row_kind``: ``record``
(the ``raw_records`` columns filled), ``quarantine`` (a unit of bytes that could not be read, with
its raw bytes and reason) or ``accounting`` (one per range: how many file bytes it covered, how
many records it read only by resynchronising after damage, and the raw bytes of its largest
row, which decides how the staged rows are read back: jobs.stages.ingest.read_back).

Memory is bounded by bytes: a task holds one entry (at most ``max_batch_bytes`` on disk and
``max_decompressed_bytes`` of records) plus the rows not yet handed on (to the staged file),
which are flushed as an Arrow batch once they reach ``arrow_batch_bytes`` (or ``ROWS_PER_BATCH``
rows), checked after each entry: one entry's records go together. The bounds come from the
``ingest:`` section of ``conf/offsetlake.yaml`` (:class:`ReadLimits`).
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
       pa.field("task_recovered", pa.int64()), pa.field("task_max_row_bytes", pa.int64())])
RECORD, QUARANTINE, ACCOUNTING = "record", "quarantine", "accounting"
ROWS_PER_BATCH = 8192
ROW_OVERHEAD_BYTES = 256         # the fixed-width columns and strings of one row, roughly


@dataclass(frozen=True)
class ReadLimits:
    """Byte bounds of one ingest task (``ingest:`` in conf/offsetlake.yaml)."""
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED
    arrow_batch_bytes: int = 16 * 1024 * 1024
    # A snapshot whose rows come to at most this many bytes is read (and replayed) in the driver,
    # with no Spark tasks to start; 0: always on the executors (jobs.stages.ingest).
    local_bytes: int = 32 * 1024 * 1024
    # Staged rows are read back a batch of rows at a time (Spark's vectorized Parquet reader)
    # when that many rows of the largest raw size fit in this; else a row at a time. 0: never.
    columnar_batch_bytes: int = 32 * 1024 * 1024

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> ReadLimits:
        known = {k: int(v) for k, v in settings.items() if k in cls.__dataclass_fields__}
        limits = cls(**known)
        if min(limits.max_batch_bytes, limits.max_decompressed_bytes,
               limits.arrow_batch_bytes) <= 0:
            raise ValueError(f"ingest limits must be positive: {limits}")
        if min(limits.local_bytes, limits.columnar_batch_bytes) < 0:
            raise ValueError(f"ingest.local_bytes and ingest.columnar_batch_bytes must be 0 or "
                             f"more: {limits}")
        return limits


@dataclass(frozen=True)
class RangeTask:
    """One unit of ingest work: the batches of ``path`` that start in ``[start, end)``."""
    source_file: str
    partition: int | None
    start: int
    end: int


def _control_names(records) -> list:
    return [None if r.control_type is None else CONTROL_TYPE_NAMES.get(r.control_type, str(r.control_type))
            for r in records]


class _Rows:
    """Rows waiting to be handed on (to the staged file), kept column by column (no dict per record)."""

    def __init__(self, snapshot_id: str, task: RangeTask):
        self.snapshot_id, self.task = snapshot_id, task
        self.columns: dict[str, list] = {name: [] for name in ROW_SCHEMA.names}
        self.count = self.bytes = 0
        self.largest = 0          # raw bytes (key + value, or a unit's raw) of the largest row

    def add_batch(self, batch: RecordBatch) -> None:
        records, c = batch.records, self.columns
        n = len(records)
        if not n:
            return
        keys = [r.key for r in records]
        values = [r.value for r in records]
        c["offset"] += [r.offset for r in records]
        c["timestamp"] += [r.timestamp for r in records]
        c["key"] += keys
        c["value"] += values
        if batch.is_control:
            c["control_type"] += _control_names(records)
            c["coordinator_epoch"] += [r.coordinator_epoch for r in records]
        else:
            c["control_type"] += [None] * n
            c["coordinator_epoch"] += [None] * n
        for name, value in (("timestamp_type", batch.timestamp_type),
                            ("batch_base_offset", batch.base_offset),
                            ("producer_id", batch.producer_id),
                            ("producer_epoch", batch.producer_epoch),
                            ("is_transactional", batch.is_transactional),
                            ("is_control", batch.is_control), ("magic", batch.magic),
                            ("compression", batch.compression), ("crc_valid", batch.crc_valid),
                            ("file_position", batch.file_position), ("row_kind", RECORD)):
            c[name] += [value] * n
        self._fill_common(n, _RECORD_ONLY_NULLS)
        self.count += n
        sizes = [len(k or b"") + len(v or b"") for k, v in zip(keys, values)]
        self.bytes += ROW_OVERHEAD_BYTES * n + sum(sizes)
        self.largest = max(self.largest, *sizes)

    def add_unit(self, item) -> None:
        """One unreadable unit (a :class:`BatchError` or :class:`TruncatedTail`)."""
        row = {"offset": item.offset, "file_position": item.file_position, "stage": item.stage,
               "reason": item.reason, "message": item.message, "length": item.length,
               "raw": item.raw, "raw_truncated": bool(item.raw_truncated), "row_kind": QUARANTINE}
        self._add_row(row)
        self.bytes += ROW_OVERHEAD_BYTES + len(item.raw or b"")
        self.largest = max(self.largest, len(item.raw or b""))

    def add_accounting(self, accounted: int, recovered: int) -> None:
        self._add_row({"row_kind": ACCOUNTING, "task_bytes": accounted, "task_recovered": recovered,
                       "task_max_row_bytes": self.largest})

    def _add_row(self, row: dict) -> None:
        for name in _PER_ROW:
            self.columns[name].append(row.get(name))
        self._fill_common(1, ())
        self.count += 1

    def _fill_common(self, n: int, nulls: tuple[str, ...]) -> None:
        c = self.columns
        c["snapshot_id"] += [self.snapshot_id] * n
        c["partition"] += [self.task.partition] * n
        c["source_file"] += [self.task.source_file] * n
        for name in nulls:
            c[name] += [None] * n

    def flush(self) -> pa.RecordBatch:
        arrays = [pa.array(self.columns[f.name], type=f.type) for f in ROW_SCHEMA]
        self.columns = {name: [] for name in ROW_SCHEMA.names}
        self.count = self.bytes = 0
        return pa.RecordBatch.from_arrays(arrays, schema=ROW_SCHEMA)


_COMMON = ("snapshot_id", "partition", "source_file")
# Columns a record row leaves null, and the columns a quarantine/accounting row sets one by one.
_RECORD_ONLY_NULLS = tuple(n for n, _, _ in _QUARANTINE_ONLY) + ("task_bytes", "task_recovered",
                                                                  "task_max_row_bytes")
_PER_ROW = tuple(n for n in ROW_SCHEMA.names if n not in _COMMON)


def read_range(snapshot_id: str, task: RangeTask,
               limits: ReadLimits = ReadLimits()) -> Iterator[pa.RecordBatch]:
    """Arrow batches for every record and every unreadable unit in ``task``'s range.

    The last row is the range's ``accounting`` row: ``task_bytes`` is how many bytes of the file
    it covered (complete batches plus quarantined units), reconciled by the job against file sizes;
    ``task_recovered`` how many of its records were read after a resynchronisation;
    ``task_max_row_bytes`` the raw bytes of its largest row (key + value, or a unit's raw bytes).
    """
    rows = _Rows(snapshot_id, task)
    accounted = recovered = 0
    for item in iter_segment(task.source_file, task.start, task.end,
                             max_batch_bytes=limits.max_batch_bytes,
                             max_decompressed=limits.max_decompressed_bytes):
        if isinstance(item, RecordBatch):
            accounted += item.batch_length
            recovered += len(item.records) if item.recovered else 0
            rows.add_batch(item)
        else:
            accounted += item.length
            rows.add_unit(item)
        del item                  # the decoded batch is not kept while its rows wait
        if rows.count >= ROWS_PER_BATCH or rows.bytes >= limits.arrow_batch_bytes:
            yield rows.flush()
    rows.add_accounting(accounted, recovered)
    yield rows.flush()


def read_tasks(snapshot_id: str, tasks: Iterable[RangeTask],
               limits: ReadLimits = ReadLimits()) -> Iterator[pa.RecordBatch]:
    for task in tasks:
        yield from read_range(snapshot_id, task, limits)

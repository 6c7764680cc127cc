"""``offsetlake ingest``: a snapshot into the ``raw_records`` and ``quarantine`` Delta tables.

Extract: the driver only lists segment files and cuts them into byte ranges; executors read the
ranges (``jobs.stages.segment_rows`` over ``decoders.log``) in Spark tasks that stage each range's
rows as a Parquet file of their own (:func:`write_range`). A capture directory
(Parquet in the bronze schema plus ``manifest.json``) is read as it is. Load: both tables are
replaced for the snapshot id, so a rerun changes nothing. The job reconciles what it read: every
record read is a row written, and every byte of every segment is in a batch read or quarantined.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa

from decoders.log import list_segments, plan_ranges
from jobs.lake.bronze import CAPTURE_RECORDS_DIR, QUARANTINE_COLUMNS, RAW_RECORDS_COLUMNS
from jobs.runtime.config import DEFAULT_RANGE_MB, load_config
from jobs.lake import QUARANTINE, RAW_RECORDS, committed_rows, replace_snapshot, table_path
from jobs.lake.delta import table_version
from jobs.stages.segment_rows import (ACCOUNTING, RECORD, ROW_SCHEMA, RangeTask, ReadLimits,
                                     read_tasks)
from jobs.stages.frames import from_arrow_type, local_frame, nullable, session_with
from jobs.stages.segment_rows import QUARANTINE as QUARANTINE_ROW

INGEST_STAGES = "stage IN ('batch', 'segment')"  # the quarantine rows this job owns
STAGING = "_staging"   # <lake>/_staging/<snapshot id>: a job's staged rows, never a table


@dataclass
class IngestReport:
    snapshot_id: str
    source: str
    files: int
    ranges: int
    bytes_total: int
    bytes_accounted: int
    records_read: int
    rows_written: int
    rows_quarantined: int
    seconds: float
    records_recovered: int = 0   # read only by resynchronising after damage (decoders.log.framing)

    @property
    def reconciled(self) -> bool:
        return (self.records_read == self.rows_written
                and (self.source == "capture" or self.bytes_accounted == self.bytes_total))

    def summary(self) -> str:
        verdict = "reconciled" if self.reconciled else "NOT RECONCILED"
        return (f"snapshot {self.snapshot_id}: {self.records_read} records read "
                f"({self.records_recovered} recovered after damage) from "
                f"{self.files} file(s) in {self.ranges} range(s), {self.rows_written} rows "
                f"written to {RAW_RECORDS}, {self.rows_quarantined} unit(s) quarantined, "
                f"{self.bytes_accounted}/{self.bytes_total} bytes accounted for: {verdict} "
                f"({self.seconds:.1f}s)")


def plan_tasks(paths: list[str], range_bytes: int) -> tuple[list[RangeTask], int, int]:
    """(tasks, segment files, bytes): every segment file under ``paths`` cut into byte ranges of
    at most ``range_bytes`` (:func:`decoders.log.plan_ranges`; an empty file has none)."""
    tasks, files, total = [], 0, 0
    for seg in list_segments(paths):
        files += 1
        total += seg.size
        tasks += [RangeTask(str(seg.path), seg.partition, start, end)
                  for start, end in plan_ranges(seg.size, range_bytes)]
    return tasks, files, total


def read_in_driver(paths: list[str], settings) -> bool:
    """Whether :func:`stage_snapshot` reads ``paths`` in the driver: segment files (not a
    capture) of at most ``ingest.local_bytes`` (``settings``: the ingest section) in all.
    A job asks before its session starts, to start a JVM suited to a short run."""
    if _is_capture(paths):
        return False
    total = sum(seg.size for seg in list_segments(paths))
    return 0 < total <= ReadLimits.from_settings(settings).local_bytes


def _is_capture(paths: list[str]) -> bool:
    return len(paths) == 1 and (Path(paths[0]) / "manifest.json").is_file()


def capture_manifest(paths: list[str]) -> dict | None:
    """The ``manifest.json`` of a capture directory (the one path), None for segment files."""
    return json.loads((Path(paths[0]) / "manifest.json").read_text()) if _is_capture(paths) else None


def resolve_snapshot_id(paths: list[str], snapshot_id: str | None) -> str:
    """The given id, else a capture's manifest id, else the snapshot directory's name."""
    if snapshot_id:
        return snapshot_id
    manifest = capture_manifest(paths)
    if manifest is not None:
        return manifest.get("snapshot_id") or Path(paths[0]).name
    return default_snapshot_id(paths)


@dataclass
class Staged:
    """A snapshot read once (and decoded, when asked) into Parquet under the lake's staging
    directory: every stage after it reads these rows instead of the segments or the tables."""
    snapshot_id: str
    source: str
    files: int
    ranges: int
    bytes_total: int
    bytes_accounted: int
    records_read: int
    records_recovered: int
    units_quarantined: int
    data_records: int = 0          # decode: records that are not transaction markers
    decode_errors: int = 0         # decode: of those, the ones that did not decode
    rows: object = None            # the staged DataFrame (ROW_SCHEMA [+ decoded columns])
    local: bool = False            # rows held by the driver (a small snapshot), not staged on disk
    largest_row_bytes: int | None = None  # raw bytes of the largest row; None: not known (capture)
    columnar_rows: int | None = None      # rows per vectorized Parquet batch; None: row by row
    path: str | None = None               # where the rows are staged (None: held by the driver)

    def report(self, rows_written: int, seconds: float) -> IngestReport:
        return IngestReport(self.snapshot_id, self.source, self.files, self.ranges,
                            self.bytes_total, self.bytes_accounted, self.records_read,
                            rows_written, self.units_quarantined, seconds, self.records_recovered)


def staged_schema(decode: bool) -> pa.Schema:
    """The schema of the staged rows: the ingest rows, plus the decoded columns when decoding."""
    from jobs.stages.decode import with_decoded_schema

    return with_decoded_schema(ROW_SCHEMA) if decode else ROW_SCHEMA


TOTALS_SCHEMA = pa.schema([("row_kind", pa.string()), ("is_data", pa.bool_()),
                           ("failed", pa.bool_()), ("n", pa.int64()), ("bytes", pa.int64()),
                           ("recovered", pa.int64()), ("largest", pa.int64())])


def merge_totals(parts, decode: bool) -> list[dict]:
    """Totals of several parts of the staged rows (each as :func:`_arrow_totals` gives them)
    merged as one aggregate over all the rows would give them: counts add, sums and the max
    skip nulls and are null when every part's is."""
    keys = ("row_kind", "is_data", "failed") if decode else ("row_kind", "is_data")
    merged: dict[tuple, dict] = {}
    for part in parts:
        key = tuple(part[k] for k in keys)
        into = merged.setdefault(key, {**{k: part[k] for k in keys}, "n": 0, "bytes": None,
                                       "recovered": None, "largest": None})
        into["n"] += part["n"]
        for name, combine in (("bytes", int.__add__), ("recovered", int.__add__), ("largest", max)):
            if part[name] is not None:
                into[name] = part[name] if into[name] is None else combine(into[name], part[name])
    return list(merged.values())


def parquet_options(settings: Mapping[str, str]) -> dict:
    """``pyarrow.parquet.ParquetWriter`` options writing the staged rows as Spark would under
    ``settings`` (the session's conf): its codec, and no dictionary or statistics for the
    columns ``spark.hadoop.parquet.enable.dictionary#<column>`` or
    ``spark.hadoop.parquet.column.statistics.enabled#<column>`` turn off.

    >>> parquet_options({"spark.sql.parquet.compression.codec": "zstd",
    ...                  "spark.hadoop.parquet.enable.dictionary#value": "false"})["compression"]
    'zstd'
    """
    def off(prefix: str) -> set[str]:
        return {k[len(prefix):] for k, v in settings.items()
                if k.startswith(prefix) and str(v).lower() == "false"}

    codec = str(settings.get("spark.sql.parquet.compression.codec", "snappy")).lower()
    codec = {"uncompressed": "none", "lz4raw": "lz4", "lz4_raw": "lz4"}.get(codec, codec)
    return {"compression": codec if codec in {"none", "snappy", "gzip", "brotli", "lz4", "zstd"}
            else "snappy",
            "no_dictionary": off("spark.hadoop.parquet.enable.dictionary#"),
            "no_statistics": off("spark.hadoop.parquet.column.statistics.enabled#")}


def write_range(target: Path, index: int, snapshot_id: str, task: RangeTask, limits: ReadLimits,
                decode: bool, options: Mapping) -> list[dict]:
    """Read (and decode) one range and write its rows as ``target/part-<index>.parquet``;
    returns their totals (:func:`merge_totals`). Plain pyarrow, run by a Spark task.

    The rows are written a batch at a time (one row group each, so memory stays what
    :func:`read_tasks` bounds) to a hidden file renamed into place once complete: a retried or
    repeated task replaces the file whole; a failing one removes its hidden file, and a killed
    one leaves it behind, which readers skip and the next run's staging removes."""
    import os

    import pyarrow.parquet as pq

    from jobs.stages.decode import decode_rows

    schema = staged_schema(decode)
    names = [f.name for f in schema]
    part = target / f"part-{index:05d}.parquet"
    hidden = target / f".{part.name}.{os.getpid()}.tmp"
    totals = []
    try:
        with pq.ParquetWriter(str(hidden), schema, compression=options["compression"],
                              use_dictionary=[n for n in names if n not in options["no_dictionary"]],
                              write_statistics=[n for n in names
                                                if n not in options["no_statistics"]]) as out:
            for rows in read_tasks(snapshot_id, [task], limits):
                if decode:
                    rows = decode_rows(rows)
                out.write_batch(rows)
                totals += _arrow_totals(pa.Table.from_batches([rows]), decode)
        os.replace(hidden, part)
    except BaseException:
        hidden.unlink(missing_ok=True)
        raise
    return merge_totals(totals, decode)


def _stage_ranges(spark, tasks: list[RangeTask], snapshot_id: str, limits: ReadLimits,
                  decode: bool, target: Path) -> list[dict]:
    """Stage the ranges' rows under ``target``, one Parquet file per range, each written by the
    Spark task (Python worker) that reads it: the rows never pass through the JVM, which took
    about three times as long to take them in and write them as reading and decoding them
    did. Returns the staged rows' totals."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    options = parquet_options({**dict(spark.sparkContext.getConf().getAll()),
                               **spark.conf.getAll})
    task_ids = spark.range(0, len(tasks), 1, max(1, len(tasks)))

    def write(batches):
        for batch in batches:
            for i in batch.column(0).to_pylist():
                parts = write_range(target, i, snapshot_id, tasks[i], limits, decode, options)
                yield pa.RecordBatch.from_pylist(parts, schema=TOTALS_SCHEMA)

    from pyspark.sql.pandas.types import from_arrow_schema
    parts = task_ids.mapInArrow(write, from_arrow_schema(TOTALS_SCHEMA)).collect()
    return merge_totals([row.asDict() for row in parts], decode)


def read_here(snapshot_id: str, tasks: list[RangeTask], limits: ReadLimits,
              decode: bool) -> pa.Table | None:
    """The snapshot's rows read (and decoded) in this process, the same rows the executors would
    stage; ``None`` as soon as they pass ``limits.local_bytes`` (the executors read them then)."""
    from jobs.stages.decode import decode_rows

    batches, size = [], 0
    for rows in read_tasks(snapshot_id, tasks, limits):
        batch = decode_rows(rows) if decode else rows
        size += batch.nbytes
        if size > limits.local_bytes:
            return None
        batches.append(batch)
    if not batches:   # nothing to read (an incremental run that holds every batch)
        return staged_schema(decode).empty_table()
    return pa.Table.from_batches(batches, staged_schema(decode))


def _arrow_totals(table: pa.Table, decode: bool) -> list[dict]:
    """What the staged rows' ``totals`` query returns, computed on the driver's Arrow table."""
    import pyarrow.compute as pc

    is_data = pc.and_kleene(pc.equal(table["row_kind"], RECORD), pc.invert(table["is_control"]))
    keys = {"row_kind": table["row_kind"], "is_data": pc.fill_null(is_data, False)}
    if decode:
        keys["failed"] = pc.is_valid(table["error_reason"])
    grouped = pa.table({**keys, "task_bytes": table["task_bytes"],
                        "task_recovered": table["task_recovered"],
                        "task_max_row_bytes": table["task_max_row_bytes"]}).group_by(list(keys)).aggregate(
        [("row_kind", "count"), ("task_bytes", "sum"), ("task_recovered", "sum"),
         ("task_max_row_bytes", "max")])
    return [{**{k: r[k] for k in keys}, "n": r["row_kind_count"], "bytes": r["task_bytes_sum"],
             "recovered": r["task_recovered_sum"], "largest": r["task_max_row_bytes_max"]}
            for r in grouped.to_pylist()]


def _capture_rows(spark, path, snapshot_id, progress, decode: bool):
    """A capture's rows in the ingest row schema. A capture reads records through the client,
    which has already validated the framing, so nothing is quarantined at this stage."""
    from pyspark.sql import functions as F

    from jobs.stages.decode import decode_frame

    print(f"ingest: capture {path} (snapshot {snapshot_id})", file=progress)
    records = (spark.read.parquet(str(Path(path) / CAPTURE_RECORDS_DIR))
               .withColumn("snapshot_id", F.lit(snapshot_id)))
    rows = records.select(*[
        F.lit(RECORD).alias(f.name) if f.name == "row_kind"
        else F.col(f.name).cast(from_arrow_type(f.type)) if f.name in records.columns
        else F.lit(None).cast(from_arrow_type(f.type)).alias(f.name)
        for f in ROW_SCHEMA])
    return decode_frame(rows, ROW_SCHEMA) if decode else rows


def stage_snapshot(spark, paths: list[str], snapshot_id: str, staging: Path, *, decode: bool,
                   range_bytes: int = DEFAULT_RANGE_MB << 20, progress=None,
                   limits: ReadLimits | None = None,
                   plan: tuple[list[RangeTask], int, int] | None = None) -> Staged:
    """Read (and decode) the snapshot once; returns its counts and rows.

    The rows are staged as Parquet under ``staging`` by the executors, or, when they come to at
    most ``limits.local_bytes``, read here and held by the driver (``Staged.local``): a small
    snapshot then starts no Spark task to read it and no Python worker at all.

    ``plan``: ``(tasks, files, bytes)`` to read instead of every byte of every segment file (an
    incremental run reads only the batches the lake does not hold: :mod:`jobs.stages.increment`)."""
    progress = sys.stderr if progress is None else progress  # now, not at import
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    limits = limits or ReadLimits.from_settings(load_config().ingest)
    here = None
    if _is_capture(paths):
        rows, files, ranges, total, source = (_capture_rows(spark, paths[0], snapshot_id, progress,
                                                            decode), 1, 1, 0, "capture")
    else:
        tasks, files, total = plan or plan_tasks(paths, range_bytes)
        if not files:
            raise FileNotFoundError(f"no __consumer_offsets segment files (*.log) under {paths}")
        print(f"ingest: {files} segment file(s), {total} bytes, {len(tasks)} range(s)", file=progress)
        ranges, source = len(tasks), "segments"
        if total <= limits.local_bytes:
            here = read_here(snapshot_id, tasks, limits, decode)
    if here is not None:
        staged, totals = local_frame(spark, here), _arrow_totals(here, decode)
    elif source == "segments":
        target = str(staging / "rows")
        totals = _stage_ranges(spark, tasks, snapshot_id, limits, decode, Path(target))
        staged = spark.read.schema(nullable(from_arrow_schema(staged_schema(decode)))).parquet(
            target)
    else:
        target = str(staging / "rows")
        rows.write.mode("overwrite").parquet(target)
        staged = spark.read.parquet(target)
        is_data = (F.col("row_kind") == RECORD) & ~F.col("is_control")
        keys = [F.col("row_kind"), is_data.alias("is_data")]
        if decode:
            keys.append(F.col("error_reason").isNotNull().alias("failed"))
        totals = staged.groupBy(*keys).agg(
            F.count(F.lit(1)).alias("n"), F.sum("task_bytes").alias("bytes"),
            F.sum("task_recovered").alias("recovered"),
            F.max("task_max_row_bytes").alias("largest")).collect()

    def count(kind=None, data=None, failed=None):
        return sum(r["n"] for r in totals if (kind is None or r["row_kind"] == kind)
                   and (data is None or r["is_data"] == data)
                   and (failed is None or r["failed"] == failed))

    accounting = [r for r in totals if r["row_kind"] == ACCOUNTING]
    known = [r["largest"] for r in accounting]
    largest = None if not known or None in known else int(max(known))
    return Staged(snapshot_id, source, files, ranges, total,
                  sum(int(r["bytes"] or 0) for r in accounting), count(RECORD),
                  sum(int(r["recovered"] or 0) for r in accounting), count(QUARANTINE_ROW),
                  count(RECORD, True), count(RECORD, True, True) if decode else 0, staged,
                  local=here is not None,
                  largest_row_bytes=largest,
                  columnar_rows=columnar_batch_rows(largest, limits.columnar_batch_bytes),
                  path=None if here is not None else target)


# Spark's own rows per vectorized Parquet batch, and the fewest worth a batch at all.
PARQUET_BATCH_ROWS = 4096
COLUMNAR_MIN_ROWS = 64
COLUMNAR_CONF = ("spark.sql.parquet.enableVectorizedReader",
                  "spark.sql.parquet.columnarReaderBatchSize")


def columnar_batch_rows(largest: int | None, budget: int) -> int | None:
    """Rows per vectorized Parquet batch of the staged rows: as many as fit ``budget`` bytes
    when every row were as large as the largest (raw key + value), at most Spark's 4096;
    ``None`` (read row by row) when fewer than 64 fit, when the largest is not known, or when
    ``budget`` is 0.

    >>> columnar_batch_rows(200, 32 << 20), columnar_batch_rows(64 << 10, 32 << 20)
    (4096, 512)
    >>> columnar_batch_rows(48 << 20, 32 << 20) is None
    True
    """
    if largest is None or budget <= 0:
        return None
    rows = min(PARQUET_BATCH_ROWS, budget // max(largest, 1))
    return rows if rows >= COLUMNAR_MIN_ROWS else None


def read_back(spark, staged: Staged) -> Staged:
    """``staged`` with its rows read a batch of ``staged.columnar_rows`` rows at a time (Spark's
    vectorized Parquet reader, much faster), or as it is when that is None: row by row, as
    ``conf/offsetlake.yaml`` reads everything else, since a vectorized batch holds every row of
    it per column, which for records of tens of MiB would be gigabytes.

    The batched rows belong to a session of their own (``spark.newSession()`` with this
    session's settings), so ``spark`` itself is never changed: another job on it, in another
    thread, plans and runs its reads with the settings it had. Frames derived from these rows
    (and their writes) run in that session; ``frame.sparkSession`` names it."""
    if staged.columnar_rows is None or staged.path is None:
        return staged
    # Spark reads Parquet a batch at a time only under whole-stage code generation, which a
    # short job's session (spark.short_run_conf) has off.
    reader = session_with(spark, {COLUMNAR_CONF[0]: "true",
                                  COLUMNAR_CONF[1]: str(staged.columnar_rows),
                                  "spark.sql.codegen.wholeStage": "true"})
    return replace(staged, rows=reader.read.schema(staged.rows.schema).parquet(staged.path))


def raw_records_rows(staged):
    from pyspark.sql import functions as F

    return staged.where(F.col("row_kind") == RECORD).select(*[c for c, _, _ in RAW_RECORDS_COLUMNS])


def ingest_quarantine_rows(staged):
    from pyspark.sql import functions as F

    return staged.where(F.col("row_kind") == QUARANTINE_ROW).select(
        *[c for c, _, _ in QUARANTINE_COLUMNS])


def ingest(spark, lake: Path, paths: list[str], snapshot_id: str | None = None,
           range_bytes: int = DEFAULT_RANGE_MB << 20, progress=None,
           limits: ReadLimits | None = None) -> IngestReport:
    """Ingest a snapshot (no decoding); returns the reconciliation report.

    >>> report = ingest(spark, Path("lake"), ["/data/__consumer_offsets-7"])  # doctest: +SKIP
    >>> report.reconciled  # doctest: +SKIP
    True
    """
    progress = sys.stderr if progress is None else progress  # now, not at import
    started = time.monotonic()
    snapshot_id = resolve_snapshot_id(paths, snapshot_id)
    staging = staging_dir(lake, snapshot_id)
    try:
        staged = stage_snapshot(spark, paths, snapshot_id, staging, decode=False,
                                range_bytes=range_bytes, progress=progress, limits=limits)
        rows = read_back(spark, staged).rows
        before = table_version(lake, RAW_RECORDS)
        replace_snapshot(raw_records_rows(rows), lake, RAW_RECORDS, snapshot_id)
        written = committed_rows(lake, RAW_RECORDS, since=before)
        replace_snapshot(ingest_quarantine_rows(rows), lake, QUARANTINE, snapshot_id,
                         only=INGEST_STAGES)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return staged.report(written, time.monotonic() - started)


def staging_dir(lake: Path, snapshot_id: str) -> Path:
    """Where a job stages a snapshot's rows (deleted when it ends; a crashed run's are replaced)."""
    return Path(table_path(lake, STAGING)) / snapshot_id


def default_snapshot_id(paths: list[str]) -> str:
    """The snapshot directory's name: stable, so a rerun replaces rather than adds."""
    return Path(paths[0]).resolve().name if len(paths) == 1 else "+".join(
        sorted(Path(p).resolve().name for p in paths))

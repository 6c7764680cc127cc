"""``offsetlake ingest``: a snapshot into the ``raw_records`` and ``quarantine`` Delta tables.

Extract: the driver only lists segment files and cuts them into byte ranges; executors read the
ranges (``jobs.stages.segment_rows`` over ``decoders.log``) through ``mapInArrow``. A capture directory
(Parquet in the bronze schema plus ``manifest.json``) is read as it is. Load: both tables are
replaced for the snapshot id, so a rerun changes nothing. The job reconciles what it read: every
record read is a row written, and every byte of every segment is in a batch read or quarantined.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from decoders.log import list_segments, plan_ranges
from jobs.lake.bronze import CAPTURE_RECORDS_DIR, QUARANTINE_COLUMNS, QUARANTINE_SCHEMA, RAW_RECORDS_COLUMNS
from jobs.runtime.config import DEFAULT_RANGE_MB, load_config
from jobs.lake import QUARANTINE, RAW_RECORDS, read_snapshot, replace_snapshot
from jobs.stages.segment_rows import (ACCOUNTING, RECORD, ROW_SCHEMA, RangeTask, ReadLimits,
                                     read_tasks)
from jobs.stages.segment_rows import QUARANTINE as QUARANTINE_ROW

INGEST_STAGES = "stage IN ('batch', 'segment')"  # the quarantine rows this job owns


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


def _is_capture(paths: list[str]) -> bool:
    return len(paths) == 1 and (Path(paths[0]) / "manifest.json").is_file()


def _ingest_segments(spark, paths, snapshot_id, range_bytes, progress, limits: ReadLimits):
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    from jobs.runtime.session import materialise_on_disk

    tasks, files, total = plan_tasks(paths, range_bytes)
    if not files:
        raise FileNotFoundError(f"no __consumer_offsets segment files (*.log) under {paths}")
    print(f"ingest: {files} segment file(s), {total} bytes, {len(tasks)} range(s)", file=progress)
    task_df = spark.createDataFrame([asdict(t) for t in tasks],
                                    "source_file string, partition int, start long, end long")
    task_df = task_df.repartition(max(1, len(tasks)))

    def read(batches):
        for batch in batches:
            yield from read_tasks(snapshot_id, (RangeTask(**row) for row in batch.to_pylist()),
                                  limits)

    rows = materialise_on_disk(task_df.mapInArrow(read, from_arrow_schema(ROW_SCHEMA)))
    totals = {r["row_kind"]: r for r in rows.groupBy("row_kind").agg(
        F.count(F.lit(1)).alias("n"), F.sum("task_bytes").alias("bytes"),
        F.sum("task_recovered").alias("recovered")).collect()}
    records = rows.where(F.col("row_kind") == RECORD).select(*[c for c, _, _ in RAW_RECORDS_COLUMNS])
    bad = rows.where(F.col("row_kind") == QUARANTINE_ROW).select(
        *[F.col(c) if c in rows.columns else F.lit(None).alias(c) for c, _, _ in QUARANTINE_COLUMNS])
    counts = {k: v["n"] for k, v in totals.items()}
    accounting = totals.get(ACCOUNTING) or {"bytes": 0, "recovered": 0}
    accounted, recovered = int(accounting["bytes"] or 0), int(accounting["recovered"] or 0)
    return (records, bad, rows, counts.get(RECORD, 0), accounted, total, files, len(tasks),
            recovered)


def _ingest_capture(spark, path, snapshot_id, progress):
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    manifest = json.loads((Path(path) / "manifest.json").read_text())
    snapshot_id = snapshot_id or manifest.get("snapshot_id") or Path(path).name
    print(f"ingest: capture {path} (snapshot {snapshot_id})", file=progress)
    columns = [c for c, _, _ in RAW_RECORDS_COLUMNS]
    records = (spark.read.parquet(str(Path(path) / CAPTURE_RECORDS_DIR))
               .withColumn("snapshot_id", F.lit(snapshot_id)).select(*columns))
    # A capture reads records through the client, which has already validated the framing, so
    # nothing can be quarantined at this stage; the empty write still clears a previous run's rows.
    bad = spark.createDataFrame([], from_arrow_schema(QUARANTINE_SCHEMA))
    read_count = records.count()
    return snapshot_id, records, bad, read_count


def ingest(spark, lake: Path, paths: list[str], snapshot_id: str | None = None,
           range_bytes: int = DEFAULT_RANGE_MB << 20, progress=sys.stderr,
           limits: ReadLimits | None = None) -> IngestReport:
    """Ingest a snapshot; returns the reconciliation report.

    >>> report = ingest(spark, Path("lake"), ["/data/__consumer_offsets-7"])  # doctest: +SKIP
    >>> report.reconciled  # doctest: +SKIP
    True
    """
    started = time.monotonic()
    limits = limits or ReadLimits.from_settings(load_config().ingest)
    recovered = 0
    if _is_capture(paths):
        snapshot_id, records, bad, read_count = _ingest_capture(spark, paths[0], snapshot_id, progress)
        accounted = total = 0
        files, ranges, source = 1, 1, "capture"
    else:
        snapshot_id = snapshot_id or default_snapshot_id(paths)
        (records, bad, _, read_count, accounted, total, files, ranges,
         recovered) = _ingest_segments(spark, paths, snapshot_id, range_bytes, progress, limits)
        source = "segments"
    replace_snapshot(records, lake, RAW_RECORDS, snapshot_id)
    replace_snapshot(bad, lake, QUARANTINE, snapshot_id, only=INGEST_STAGES)
    written = read_snapshot(spark, lake, RAW_RECORDS, snapshot_id).count()
    quarantined = read_snapshot(spark, lake, QUARANTINE, snapshot_id).where(INGEST_STAGES).count()
    return IngestReport(snapshot_id, source, files, ranges, total, accounted, read_count, written,
                        quarantined, time.monotonic() - started, recovered)


def default_snapshot_id(paths: list[str]) -> str:
    """The snapshot directory's name: stable, so a rerun replaces rather than adds."""
    return Path(paths[0]).resolve().name if len(paths) == 1 else "+".join(
        sorted(Path(p).resolve().name for p in paths))

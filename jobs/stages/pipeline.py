"""``offsetlake run``: ingest, decode and replay a snapshot into the lake's tables.

Thin by design: each stage is a library function (``jobs.stages.ingest``, ``jobs.stages.decode``,
``jobs.stages.offsets``, ``jobs.stages.replay``); this module orders them, writes every table
idempotently for the snapshot id, reconciles the counts and prints what happened.

Records are decoded once, into a staged Parquet copy under ``<lake>/_staging/<snapshot>`` (bounded:
disk, not cache) that feeds ``records``, decode quarantine, the SQL offset replay and the Python
group replay; the two replay results are staged the same way because several tables read each.
Row counts come from each Delta commit's metrics rather than a re-read of the table.
"""

from __future__ import annotations

import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from jobs.lake import QUARANTINE, RAW_RECORDS, RECORDS, read_snapshot, replace_snapshot, table_path
from jobs.replay import TABLE_COLUMNS
from jobs.stages.decode import (DECODE_STAGE, decode_snapshot, quarantine_columns, records_columns,
                                staged_columns)
from jobs.stages.ingest import IngestReport, ingest
from jobs.stages.progress import Progress

STAGING = "_staging"
OFFSET_TABLES = ("offsets", "offset_commits", "transactions")


@dataclass
class PipelineReport:
    ingest: IngestReport
    data_records: int = 0
    decoded: int = 0
    decode_quarantined: int = 0
    table_rows: dict[str, int] = field(default_factory=dict)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def snapshot_id(self) -> str:
        return self.ingest.snapshot_id

    @property
    def reconciled(self) -> bool:
        return self.ingest.reconciled and self.data_records == self.decoded + self.decode_quarantined

    def summary(self) -> str:
        lines = [self.ingest.summary(),
                 f"decode: {self.data_records} data records -> {self.decoded} in {RECORDS}, "
                 f"{self.decode_quarantined} quarantined"
                 + ("" if self.reconciled else "  NOT RECONCILED"),
                 "replay: " + ", ".join(f"{t} {n}" for t, n in self.table_rows.items()),
                 f"total {self.seconds:.1f}s"]
        return "\n".join(lines)


def written_rows(spark, lake: Path, table: str) -> int:
    """Rows the last commit of ``table`` wrote (its ``numOutputRows`` metric): no table scan."""
    from delta.tables import DeltaTable

    metrics = DeltaTable.forPath(spark, table_path(lake, table)).history(1).collect()[0]
    return int((metrics["operationMetrics"] or {}).get("numOutputRows", 0))


def _write(spark, df, lake: Path, table: str, snapshot_id: str, only: str | None = None) -> int:
    replace_snapshot(df, lake, table, snapshot_id, only=only)
    return written_rows(spark, lake, table)


def decode(spark, lake: Path, snapshot_id: str, staging: Path) -> tuple[int, int, int]:
    from pyspark.sql import functions as F

    raw = read_snapshot(spark, lake, RAW_RECORDS, snapshot_id)
    staged_columns(decode_snapshot(raw)).write.mode("overwrite").parquet(str(staging / "decoded"))
    staged = spark.read.parquet(str(staging / "decoded"))
    ok = F.col("error_reason").isNull()
    written = _write(spark, staged.where(ok).select(*records_columns()), lake, RECORDS, snapshot_id)
    replace_snapshot(quarantine_columns(staged.where(~ok)), lake, QUARANTINE, snapshot_id,
                     only=DECODE_STAGE)
    # Counted, not taken from the commit's numOutputRows: a replaceWhere on a data column
    # rewrites the files it shares with the ingest stage's rows, and the metric counts those too.
    bad = read_snapshot(spark, lake, QUARANTINE, snapshot_id).where(DECODE_STAGE).count()
    return staged.count(), written, bad


def replay(spark, lake: Path, snapshot_id: str, staging: Path, progress: Progress) -> dict[str, int]:
    from pyspark.sql import functions as F

    from jobs.stages import offsets as sql
    from jobs.stages.replay import GROUP_TABLES, TOPIC_IDS, replay_groups, table_rows

    staged = spark.read.parquet(str(staging / "decoded")).where(F.col("error_reason").isNull())
    is_offset = F.col("record_type").isin(0, 1)
    markers = (read_snapshot(spark, lake, RAW_RECORDS, snapshot_id).where("is_control")
               .select("partition", "offset", "producer_id", "control_type"))
    progress.stage("replay: offsets (SQL)")
    sql.resolve_commits(staged.where(is_offset), markers).write.mode("overwrite").parquet(
        str(staging / "commits"))
    resolved = spark.read.parquet(str(staging / "commits"))
    membership = staged.where(~is_offset)
    tombstones = membership.where("is_tombstone").select("partition", "group_id", "offset")
    progress.stage("replay: groups (Python)")
    replay_groups(membership, sql.touches(resolved, tombstones)).write.mode("overwrite").parquet(
        str(staging / "groups"))
    wide = spark.read.parquet(str(staging / "groups"))
    progress.stage("replay: writing tables")
    snap = F.lit(snapshot_id).alias("snapshot_id")
    columns = {t: [name for name, _ in TABLE_COLUMNS[t]] for t in TABLE_COLUMNS}
    frames = {t: table_rows(wide, t, snapshot_id) for t in GROUP_TABLES}
    frames["violations"] = frames["violations"].unionByName(
        sql.violation_rows(resolved).select(snap, *columns["violations"]))
    frames["offsets"] = sql.offset_rows(resolved, table_rows(wide, TOPIC_IDS, snapshot_id),
                                        columns["offsets"]).select(snap, "*")
    frames["offset_commits"] = resolved.select(snap, *columns["offset_commits"])
    frames["transactions"] = sql.transaction_rows(resolved).select(snap, *columns["transactions"])
    return {t: _write(spark, frames[t], lake, t, snapshot_id) for t in TABLE_COLUMNS}


def run_pipeline(spark, lake: Path, paths: list[str], snapshot_id: str | None = None,
                 progress=sys.stderr) -> PipelineReport:
    """Ingest, decode and replay one snapshot; every table is replaced for its snapshot id.

    >>> report = run_pipeline(spark, Path("lake"), ["samples/kafka-4.3.1"])  # doctest: +SKIP
    >>> report.reconciled  # doctest: +SKIP
    True
    """
    started = time.monotonic()
    meter = Progress(spark, progress)
    with meter:
        meter.stage("ingest")
        report = PipelineReport(ingest(spark, lake, paths, snapshot_id, progress=progress))
        meter.total = report.ingest.records_read
        report.stage_seconds["ingest"] = time.monotonic() - started
        staging = Path(table_path(lake, STAGING)) / report.snapshot_id
        try:
            mark = time.monotonic()
            meter.stage("decode")
            print(f"decode: snapshot {report.snapshot_id}", file=progress)
            report.data_records, report.decoded, report.decode_quarantined = decode(
                spark, lake, report.snapshot_id, staging)
            report.stage_seconds["decode"] = time.monotonic() - mark
            mark = time.monotonic()
            print(f"replay: snapshot {report.snapshot_id}", file=progress)
            report.table_rows = replay(spark, lake, report.snapshot_id, staging, meter)
            report.stage_seconds["replay"] = time.monotonic() - mark
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    report.seconds = time.monotonic() - started
    return report

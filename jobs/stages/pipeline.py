"""``offsetlake run``: ingest, decode and replay a snapshot into the lake's tables.

Thin by design: each stage is a library function (``jobs.stages.ingest``, ``jobs.stages.decode``,
``jobs.stages.offsets``, ``jobs.stages.replay``); this module orders them, writes every table
idempotently for the snapshot id, reconciles the counts and prints what happened.

Records are read and decoded once, on the executors that read the segments, into a staged Parquet
copy under ``<lake>/_staging/<snapshot>`` (bounded: disk, not cache). It feeds ``raw_records``,
``records``, ``quarantine``, the SQL offset replay and the Python group replay; the two replay
results are staged the same way because several tables read each. The fencing audit and the
insight rules run over those same frames, once, and the audit reads what they found. Tables are
written by a few threads at once (Spark runs their jobs side by side), each as soon as its input
is staged, and row counts come from each Delta commit's metrics rather than a re-read of the
table.
"""

from __future__ import annotations

import shutil
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from jobs.lake import QUARANTINE, RAW_RECORDS, RECORDS, committed_rows, replace_snapshot
from jobs.lake.delta import table_version
from jobs.lake.findings import FENCING_AUDITS, FENCING_FINDINGS, INSIGHT_AUDITS, INSIGHT_FINDINGS
from jobs.replay import TABLE_COLUMNS
from jobs.stages.broker_configs import BROKER_CONFIGS, submit_broker_configs
from jobs.lake.downgrade import RECORD_FACTS
from jobs.stages.decode import quarantine_columns, record_facts_columns, records_columns
from jobs.stages.frames import hold
from jobs.stages.ingest import (IngestReport, Staged, ingest_quarantine_rows, raw_records_rows,
                                read_back, resolve_snapshot_id, stage_snapshot, staging_dir)
from jobs.stages.lag import LAG, submit_lag
from jobs.stages.progress import Progress

OFFSET_TABLES = ("offsets", "offset_commits", "transactions")
WRITERS = 4   # tables written at once: their Delta commits overlap, Spark shares the cores


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


class Writer:
    """Tables written on a few threads; each write replaces the snapshot's rows of its table."""

    def __init__(self, spark, lake: Path, snapshot_id: str):
        self.spark, self.lake, self.snapshot_id = spark, lake, snapshot_id
        self.pool = ThreadPoolExecutor(WRITERS, thread_name_prefix="offsetlake-write")
        self.pending: dict[str, Future] = {}
        self.frames: dict = {}   # what each table was written from, for a stage after the run

    def submit(self, table: str, df) -> None:
        self.frames[table] = df
        def write() -> int:
            before = table_version(self.lake, table)
            replace_snapshot(df, self.lake, table, self.snapshot_id)
            return committed_rows(self.lake, table, since=before)
        self.pending[table] = self.pool.submit(write)

    def rows(self, table: str) -> int:
        return self.pending[table].result()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def bronze(writer: Writer, staged: Staged) -> None:
    """``raw_records``, ``records``, ``quarantine`` and ``record_facts`` (ingest and decode units)
    of the snapshot."""
    from pyspark.sql import functions as F

    rows = staged.rows
    data = (F.col("row_kind") == "record") & ~F.col("is_control")
    ok = F.col("error_reason").isNull()
    writer.submit(RAW_RECORDS, raw_records_rows(rows))
    writer.submit(RECORDS, rows.where(data & ok).select(*records_columns()))
    writer.submit(QUARANTINE, ingest_quarantine_rows(rows).unionByName(
        quarantine_columns(rows.where(data & ~ok))))
    writer.submit(RECORD_FACTS, rows.where(data).select(*record_facts_columns()))


def replay(spark, writer: Writer, staged: Staged, staging: Path, progress: Progress,
           audit: bool = True, learned=None):
    """The replay's tables of the staged rows, submitted to ``writer``; returns the replayed
    groups' topic id -> name pairs (:func:`jobs.stages.replay.learned_pairs`). ``learned``:
    pairs of groups not replayed here, which name the replayed groups' rows too (an
    incremental run's; a full run replays every group)."""
    from pyspark.sql import functions as F

    from jobs.stages import offsets as sql
    from jobs.stages.audit import fencing_frames
    from jobs.stages.replay import (GROUP_TABLES, TOPIC_IDS, learned_pairs, replay_groups,
                                    replay_groups_here, table_rows)

    def once(frame, name: str):
        """A result several tables read, computed once: staged as Parquet, or held by the
        driver when the snapshot is (a small one)."""
        return hold(spark, frame, staging, name, staged.local)

    snapshot_id = staged.snapshot_id
    rows = staged.rows.where(F.col("row_kind") == "record")
    decoded = rows.where(~F.col("is_control") & F.col("error_reason").isNull())
    is_offset = F.col("record_type").isin(0, 1)
    markers = rows.where("is_control").select("partition", "offset", "producer_id", "control_type")
    progress.stage("replay: offsets (SQL)")
    resolved = once(sql.resolve_commits(decoded.where(is_offset), markers), "commits")
    snap = F.lit(snapshot_id).alias("snapshot_id")
    columns = {t: [name for name, _ in TABLE_COLUMNS[t]] for t in TABLE_COLUMNS}
    writer.submit("offset_commits", resolved.select(snap, *columns["offset_commits"]))
    writer.submit("transactions", sql.transaction_rows(resolved).select(snap, *columns["transactions"]))
    membership = decoded.where(~is_offset)
    tombstones = membership.where("is_tombstone").select("partition", "group_id", "offset")
    progress.stage("replay: groups (Python)")
    touches = sql.touches(resolved, tombstones)
    wide = (replay_groups_here(spark, membership, touches) if staged.local
            else once(replay_groups(membership, touches), "groups"))
    progress.stage("replay: writing tables")
    frames = {t: table_rows(wide, t, snapshot_id, learned) for t in GROUP_TABLES}
    frames["violations"] = frames["violations"].unionByName(
        sql.violation_rows(resolved).select(snap, *columns["violations"]))
    topic_ids = table_rows(wide, TOPIC_IDS, snapshot_id)
    frames["offsets"] = sql.offset_rows(resolved, topic_ids, columns["offsets"]).select(snap, "*")
    for table, frame in frames.items():
        writer.submit(table, frame)
    if audit:   # else the caller audits (an incremental run: jobs.stages.increment_run)
        progress.stage("replay: fencing audit (Python)")
        audits, found = fencing_frames(writer.frames, snapshot_id, here=staged.local,
                                       membership=membership)
        writer.submit(FENCING_FINDINGS, found)
        writer.submit(FENCING_AUDITS, audits)
    return learned_pairs(topic_ids)


def insights(spark, writer: Writer, lake: Path, snapshot_id: str, progress: Progress) -> None:
    """The insight rules over the tables the run has just written (every one is submitted by
    now): ``insight_findings`` and ``insight_audits``, read by the audit instead of running the
    rules again."""
    from jobs.stages.insights import insight_frames

    progress.stage("insights (SQL)")
    audits, found = insight_frames(spark, lake, snapshot_id, writer.frames)
    writer.submit(INSIGHT_FINDINGS, found)
    writer.submit(INSIGHT_AUDITS, audits)


def _size(n: int | None) -> str:
    return "not known" if n is None else f"{n} bytes"


def run_pipeline(spark, lake: Path, paths: list[str], snapshot_id: str | None = None,
                 progress=None, then=None) -> PipelineReport:
    """Ingest, decode and replay one snapshot; every table is replaced for its snapshot id.

    ``then(snapshot_id, frames)``, when given, runs once every table is written and before the
    staged rows are removed: ``frames`` maps each table to the DataFrame it was written from
    (staged rows, not the table), so a later stage of the same run (``run --audit``) reads
    nothing twice.

    >>> report = run_pipeline(spark, Path("lake"), ["samples/kafka-4.3.1"])  # doctest: +SKIP
    >>> report.reconciled  # doctest: +SKIP
    True
    """
    progress = sys.stderr if progress is None else progress  # now, not at import
    started = time.monotonic()
    snapshot_id = resolve_snapshot_id(paths, snapshot_id)
    staging = staging_dir(lake, snapshot_id)
    meter = Progress(spark, progress)
    writer = Writer(spark, lake, snapshot_id)
    seconds: dict[str, float] = {}
    try:
        with meter:
            meter.stage("ingest")
            staged = stage_snapshot(spark, paths, snapshot_id, staging, decode=True,
                                    progress=progress)
            meter.total = staged.records_read
            seconds["ingest"] = time.monotonic() - started
            mark = time.monotonic()
            meter.stage("decode")
            if not staged.local:
                how = ("row by row" if staged.columnar_rows is None
                       else f"{staged.columnar_rows} rows at a time")
                print(f"decode: staged rows read back {how} (largest row "
                      f"{_size(staged.largest_row_bytes)})", file=progress)
            staged = read_back(spark, staged)
            print(f"decode: snapshot {snapshot_id}", file=progress)
            bronze(writer, staged)
            print(f"replay: snapshot {snapshot_id}", file=progress)
            replay(spark, writer, staged, staging, meter)
            submit_lag(spark, writer, paths)
            submit_broker_configs(spark, writer, paths)
            seconds["replay"] = time.monotonic() - mark
            mark = time.monotonic()
            insights(spark, writer, lake, snapshot_id, meter)
            seconds["insights"] = time.monotonic() - mark
            mark = time.monotonic()
            raw_written, records_written = writer.rows(RAW_RECORDS), writer.rows(RECORDS)
            writer.rows(QUARANTINE)
            writer.rows(RECORD_FACTS)
            table_rows = {t: writer.rows(t) for t in (*TABLE_COLUMNS, LAG, BROKER_CONFIGS)}
            for table in (FENCING_FINDINGS, FENCING_AUDITS, INSIGHT_FINDINGS, INSIGHT_AUDITS):
                writer.rows(table)
            seconds["writes"] = time.monotonic() - mark
        if then is not None:
            then(snapshot_id, writer.frames)
    finally:
        writer.close()
        shutil.rmtree(staging, ignore_errors=True)
    report = PipelineReport(staged.report(raw_written, seconds["ingest"]),
                            data_records=staged.data_records, decoded=records_written,
                            decode_quarantined=staged.decode_errors, table_rows=table_rows,
                            stage_seconds=seconds)
    report.seconds = time.monotonic() - started
    return report

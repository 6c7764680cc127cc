"""``offsetlake run``: ingest, decode and replay a snapshot into the lake's tables.

Thin by design: each stage is a library function (``jobs.stages.ingest``, ``jobs.stages.decode``,
``jobs.stages.replay``); this module orders them, writes every table idempotently for the
snapshot id, reconciles the counts and prints what happened.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from jobs.runtime.config import load_config
from jobs.stages.decode import DECODE_STAGE, decode_snapshot, quarantine_columns, records_columns
from jobs.stages.ingest import IngestReport, ingest
from jobs.lake import QUARANTINE, RAW_RECORDS, read_snapshot, replace_snapshot
from jobs.replay import TABLE_COLUMNS
from jobs.stages.replay import replay_snapshot, table_rows

RECORDS = "records"


@dataclass
class PipelineReport:
    ingest: IngestReport
    data_records: int = 0
    decoded: int = 0
    decode_quarantined: int = 0
    table_rows: dict[str, int] = field(default_factory=dict)
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


def decode(spark, lake: Path, snapshot_id: str) -> tuple[int, int, int]:
    from pyspark.sql import functions as F

    from jobs.runtime.session import materialise_on_disk

    raw = read_snapshot(spark, lake, RAW_RECORDS, snapshot_id)
    decoded = materialise_on_disk(decode_snapshot(raw))   # byte-bounded, see its docstring
    ok = F.col("error_reason").isNull()
    replace_snapshot(decoded.where(ok).select(*records_columns()), lake, RECORDS, snapshot_id)
    replace_snapshot(quarantine_columns(decoded.where(~ok)), lake, QUARANTINE, snapshot_id,
                     only=DECODE_STAGE)
    data = raw.where(~F.col("is_control")).count()
    written = read_snapshot(spark, lake, RECORDS, snapshot_id).count()
    bad = read_snapshot(spark, lake, QUARANTINE, snapshot_id).where(DECODE_STAGE).count()
    return data, written, bad


def replay(spark, lake: Path, snapshot_id: str) -> dict[str, int]:
    from jobs.runtime.session import materialise_on_disk

    records = read_snapshot(spark, lake, RECORDS, snapshot_id)
    raw = read_snapshot(spark, lake, RAW_RECORDS, snapshot_id)
    replayed = materialise_on_disk(replay_snapshot(records, raw))
    counts = {}
    for table in TABLE_COLUMNS:
        replace_snapshot(table_rows(replayed, table, snapshot_id), lake, table, snapshot_id)
        counts[table] = read_snapshot(spark, lake, table, snapshot_id).count()
    return counts


def run_pipeline(spark, lake: Path, paths: list[str], snapshot_id: str | None = None,
                 progress=sys.stderr) -> PipelineReport:
    """Ingest, decode and replay one snapshot; every table is replaced for its snapshot id.

    >>> report = run_pipeline(spark, Path("lake"), ["samples/kafka-4.3.1"])  # doctest: +SKIP
    >>> report.reconciled  # doctest: +SKIP
    True
    """
    started = time.monotonic()
    report = PipelineReport(ingest(spark, lake, paths, snapshot_id, progress=progress))
    print(f"decode: snapshot {report.snapshot_id}", file=progress)
    report.data_records, report.decoded, report.decode_quarantined = decode(
        spark, lake, report.snapshot_id)
    print(f"replay: snapshot {report.snapshot_id}", file=progress)
    report.table_rows = replay(spark, lake, report.snapshot_id)
    report.seconds = time.monotonic() - started
    return report

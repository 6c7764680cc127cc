"""Where the lake's Delta tables live and how they are written.

Every table is partitioned by ``snapshot_id`` and written with ``replaceWhere`` on it, so a rerun
of a snapshot replaces exactly that snapshot's rows: never a blind append, never a duplicate, and
other snapshots' history untouched.
"""

from __future__ import annotations

import json
from pathlib import Path

# Table names: the bronze rows as read, the data records decoded from them, and what could not be read.
RAW_RECORDS = "raw_records"
RECORDS = "records"
QUARANTINE = "quarantine"


def table_path(lake: Path, table: str) -> str:
    return str(Path(lake).resolve() / table)


def _sql_literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def replace_snapshot(df, lake: Path, table: str, snapshot_id: str, only: str | None = None) -> None:
    """Write ``df`` (rows of one snapshot) as that snapshot's whole content of ``table``.

    ``only`` narrows what is replaced to the rows one stage owns when several stages write the
    same table (``quarantine``: ``stage = 'decode'``); ``df`` must satisfy it.

    >>> replace_snapshot(rows, Path("lake"), "raw_records", "2026-11-22")  # doctest: +SKIP
    """
    predicate = f"snapshot_id = {_sql_literal(snapshot_id)}" + (f" AND ({only})" if only else "")
    (df.write.format("delta")
       .mode("overwrite")
       .option("replaceWhere", predicate)
       .partitionBy("snapshot_id")
       .save(table_path(lake, table)))


def committed_rows(lake: Path, table: str) -> int:
    """Rows the last commit of ``table`` wrote (its ``numOutputRows`` metric), read from the
    commit file itself: no scan, no Spark job. Exact for a replace of a whole snapshot; a replace
    narrowed by ``only=`` may count rows it rewrote from files it shares with other stages."""
    log = Path(table_path(lake, table)) / "_delta_log"
    commits = sorted(p for p in log.glob("*.json") if p.stem.isdigit())
    if not commits:
        return 0
    for line in commits[-1].read_text().splitlines():
        info = json.loads(line).get("commitInfo")
        if info is not None:
            return int((info.get("operationMetrics") or {}).get("numOutputRows", 0))
    return 0


def read_table(spark, lake: Path, table: str):
    return spark.read.format("delta").load(table_path(lake, table))


def read_snapshot(spark, lake: Path, table: str, snapshot_id: str):
    """The rows of one snapshot in ``table``."""
    return read_table(spark, lake, table).where(f"snapshot_id = {_sql_literal(snapshot_id)}")

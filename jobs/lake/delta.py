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


def _commits(lake: Path, table: str) -> list[Path]:
    log = Path(table_path(lake, table)) / "_delta_log"
    return sorted(p for p in log.glob("*.json") if p.stem.isdigit())


def table_version(lake: Path, table: str) -> int:
    """The version of ``table``'s last commit, -1 before its first."""
    commits = _commits(lake, table)
    return int(commits[-1].stem) if commits else -1


def committed_rows(lake: Path, table: str, since: int | None = None) -> int:
    """Rows the last commit of ``table`` wrote (its ``numOutputRows`` metric), read from the
    commit file itself: no scan, no Spark job. Exact for a replace of a whole snapshot; a replace
    narrowed by ``only=`` may count rows it rewrote from files it shares with other stages.
    ``since``: the version before the write; no commit after it (Delta commits nothing when an
    empty write replaces nothing) means 0 rows, not the previous commit's count."""
    commits = _commits(lake, table)
    if not commits or (since is not None and int(commits[-1].stem) <= since):
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

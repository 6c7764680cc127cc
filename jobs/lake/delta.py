"""Where the lake's Delta tables live and how they are written.

Every table is partitioned by ``snapshot_id`` and written with ``replaceWhere`` on it, so a rerun
of a snapshot replaces exactly that snapshot's rows: never a blind append, never a duplicate, and
other snapshots' history untouched.
"""

from __future__ import annotations

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


def committed_rows(spark, lake: Path, table: str) -> int:
    """Rows the last commit of ``table`` wrote (its ``numOutputRows`` metric), without a scan.
    Exact for a replace of a whole snapshot; a replace narrowed by ``only=`` may count rows it
    rewrote from the files it shares with other stages."""
    from delta.tables import DeltaTable

    last = DeltaTable.forPath(spark, table_path(lake, table)).history(1).collect()[0]
    return int((last["operationMetrics"] or {}).get("numOutputRows", 0))


def read_table(spark, lake: Path, table: str):
    return spark.read.format("delta").load(table_path(lake, table))


def read_snapshot(spark, lake: Path, table: str, snapshot_id: str):
    """The rows of one snapshot in ``table``."""
    return read_table(spark, lake, table).where(f"snapshot_id = {_sql_literal(snapshot_id)}")

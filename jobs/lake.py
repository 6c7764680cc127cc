"""Where the lake's Delta tables live and how they are written.

Every table is partitioned by ``snapshot_id`` and written with ``replaceWhere`` on it, so a rerun
of a snapshot replaces exactly that snapshot's rows: never a blind append, never a duplicate, and
other snapshots' history untouched.
"""

from __future__ import annotations

from pathlib import Path

RAW_RECORDS = "raw_records"
QUARANTINE = "quarantine"


def table_path(lake: Path, table: str) -> str:
    return str(Path(lake).resolve() / table)


def _sql_literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def replace_snapshot(df, lake: Path, table: str, snapshot_id: str) -> None:
    """Write ``df`` (rows of one snapshot) as that snapshot's whole content of ``table``.

    >>> replace_snapshot(rows, Path("lake"), "raw_records", "2026-11-22")  # doctest: +SKIP
    """
    (df.write.format("delta")
       .mode("overwrite")
       .option("replaceWhere", f"snapshot_id = {_sql_literal(snapshot_id)}")
       .partitionBy("snapshot_id")
       .save(table_path(lake, table)))


def read_table(spark, lake: Path, table: str):
    return spark.read.format("delta").load(table_path(lake, table))

"""Small hand-written lakes: rows given as dicts, written as real Delta tables with the contracts'
columns (a column a row leaves out is null), so views, quality suites and reports can be tested on
exactly the situation a test needs."""

from __future__ import annotations

from pathlib import Path

from jobs.lake.delta import replace_snapshot


def write_table(spark, lake: Path, table: str, rows: list[dict]) -> None:
    """Write ``rows`` (each with a ``snapshot_id``) as ``table`` of ``lake``, one snapshot at a time."""
    from jobs.lake.views import contract_columns

    columns = contract_columns()[table]
    ddl = ", ".join(f"`{name}` {dtype}" for name, dtype in columns)
    unknown = {key for row in rows for key in row} - {name for name, _ in columns}
    assert not unknown, f"{table}: no such columns {sorted(unknown)}"
    for snapshot_id in sorted({row["snapshot_id"] for row in rows}):
        values = [tuple(row.get(name) for name, _ in columns)
                  for row in rows if row["snapshot_id"] == snapshot_id]
        replace_snapshot(spark.createDataFrame(values, ddl), lake, table, snapshot_id)


def write_lake(spark, lake: Path, tables: dict[str, list[dict]]) -> Path:
    for table, rows in tables.items():
        write_table(spark, lake, table, rows)
    return lake


SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "kafka-4.3.1"
_MADE: dict[str, Path] = {}


def sample_lake(spark, tmp_path_factory) -> Path:
    """The bundled sample run through the pipeline (snapshot id ``kafka-4.3.1``), once per session.
    Tests that change it work on a copy."""
    if "sample" not in _MADE:
        from jobs.stages.pipeline import run_pipeline

        lake = tmp_path_factory.mktemp("sample") / "lake"
        assert run_pipeline(spark, lake, [str(SAMPLE)], None).reconciled
        _MADE["sample"] = lake
    return _MADE["sample"]


def operate_lake(spark, tmp_path_factory) -> Path:
    """The hand-written lake of :mod:`support.operate_lake`, once per session."""
    if "operate" not in _MADE:
        from support.operate_lake import TABLES

        _MADE["operate"] = write_lake(spark, tmp_path_factory.mktemp("operate") / "lake", TABLES)
    return _MADE["operate"]

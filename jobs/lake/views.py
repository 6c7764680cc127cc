"""The lake as a SQL catalog: its Delta tables and the views in ``sql/``, queryable by name.

Every Delta table under the lake is a temporary view under its directory name. A table the views
read that the lake does not hold (a lake written before the audit existed has no ``findings``) is
registered empty with its contract's columns, so every view answers: an empty result, never an
error. Then each ``sql/<name>.sql`` (one ``select``, dbt style) becomes the view ``<name>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from jobs.runtime.config import PROJECT_ROOT

SQL_DIR = PROJECT_ROOT / "sql"

@dataclass
class Catalog:
    """What :func:`register_lake` made queryable."""

    tables: list[str] = field(default_factory=list)        # Delta tables found in the lake
    placeholders: list[str] = field(default_factory=list)  # absent tables registered empty
    views: list[str] = field(default_factory=list)         # sql/ views

    def names(self) -> list[str]:
        return sorted(self.tables + self.placeholders + self.views)


def contract_columns() -> dict[str, list[tuple[str, str]]]:
    """Every lake table with its columns as (name, Spark SQL type) (:data:`jobs.lake.tables.TABLES`):
    a table absent from a lake is registered empty with its real contract, so a view over it
    answers empty."""
    from jobs.lake.tables import TABLES

    return {name: table.pairs() for name, table in TABLES.items()}


def lake_tables(lake: Path) -> list[str]:
    """Names of the Delta tables in ``lake`` (directories holding a ``_delta_log``)."""
    lake = Path(lake)
    if not lake.is_dir():
        return []
    return sorted(p.name for p in lake.iterdir() if (p / "_delta_log").is_dir())


def view_files(sql_dir: Path = SQL_DIR) -> dict[str, Path]:
    """``sql/<name>.sql`` by view name, in name order."""
    return {p.stem: p for p in sorted(Path(sql_dir).glob("*.sql"))}


def _sql_literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def register_lake(spark, lake: Path, snapshot_id: str | None = None,
                  sql_dir: Path = SQL_DIR) -> Catalog:
    """Register the lake's tables (only ``snapshot_id``'s rows when given) and the ``sql/`` views."""
    catalog = Catalog()
    for name in lake_tables(lake):
        df = spark.read.format("delta").load(str(Path(lake).resolve() / name))
        if snapshot_id is not None and "snapshot_id" in df.columns:
            df = df.where(f"snapshot_id = {_sql_literal(snapshot_id)}")
        df.createOrReplaceTempView(name)
        catalog.tables.append(name)
    for name, columns in contract_columns().items():
        if name not in catalog.tables:
            ddl = ", ".join(f"`{col}` {dtype}" for col, dtype in columns)
            spark.createDataFrame([], ddl).createOrReplaceTempView(name)
            catalog.placeholders.append(name)
    for name, path in view_files(sql_dir).items():
        spark.sql(f"create or replace temporary view `{name}` as\n{path.read_text()}")
        catalog.views.append(name)
    return catalog


def snapshot_ids(spark, lake: Path) -> list[str]:
    """The snapshot ids in the lake's ``raw_records``, in order (the last is the default)."""
    if "raw_records" not in lake_tables(lake):
        return []
    df = spark.read.format("delta").load(str(Path(lake).resolve() / "raw_records"))
    return sorted(r[0] for r in df.select("snapshot_id").distinct().collect())


def report_dir(lake: Path) -> Path:
    """Where quality Data Docs and reports of ``lake`` go (``report.dir`` in conf/, inside the lake
    when relative)."""
    from jobs.runtime.config import load_section

    configured = Path(str(load_section("report").get("dir", "_reports"))).expanduser()
    return configured if configured.is_absolute() else Path(lake) / configured

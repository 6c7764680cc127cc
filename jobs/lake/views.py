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
SETTINGS_VIEW = "settings"
# Views other views read over and over, small next to the tables they come from: with
# ``register_lake(..., materialize=True)`` (the audit's insight rules, the report) each is
# computed once and held (a local checkpoint), so the views above them read it instead of
# scanning ``records`` and ``raw_records`` again. Temporary views resolve the views they read by
# name when queried, so holding one changes what every view reads, not what it answers.
MATERIALIZED = ("snapshot_time", "membership_records")
# The ``settings`` view's columns: (column, conf key of the ``insights`` section, scale to the
# column's unit (None: a string), the value when a configuration file lacks the key:
# conf/offsetlake.yaml's; the broker settings at Kafka's defaults, GroupCoordinatorConfig 4.3.1).
SETTINGS = (
    ("offsets_retention_ms", "offsets_retention_minutes", 60_000, 10080),
    ("offsets_retention_check_interval_ms", "offsets_retention_check_interval_ms", 1, 600_000),
    ("consumer_group_max_size", "group_consumer_max_size", 1, 2147483647),
    ("classic_group_max_size", "group_max_size", 1, 2147483647),
    ("consumer_group_migration_policy", "group_consumer_migration_policy", None, "bidirectional"),
    ("expiry_warning_ms", "expiry_warning_hours", 3_600_000, 24),
    ("recent_activity_ms", "recent_activity_hours", 3_600_000, 72),
    ("ghost_idle_ms", "ghost_idle_hours", 3_600_000, 24),
    ("storm_epoch_bumps_per_hour", "storm_epoch_bumps_per_hour", 1, 20),
)
# The broker configs among them (GroupCoordinatorConfig 4.3.1 names), by the conf key each stands
# for: a snapshot's ``broker_configs`` rows (what its capture's DescribeConfigs answered) override
# conf/ for that snapshot. Each conf key is in its config's unit (minutes, ms, a count, the policy
# name), so the value carries over as Kafka gave it; SETTINGS' scale makes the column's unit.
BROKER_SETTINGS = {
    "offsets.retention.minutes": "offsets_retention_minutes",
    "offsets.retention.check.interval.ms": "offsets_retention_check_interval_ms",
    "group.consumer.max.size": "group_consumer_max_size",
    "group.max.size": "group_max_size",
    "group.consumer.migration.policy": "group_consumer_migration_policy",
}


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


def settings_frame(spark, settings: dict | None = None):
    """One row: what the insight views assume (broker settings, thresholds), from ``settings``
    (conf keys of the ``insights`` section; default: conf/), each a long (ms, a count) or a
    string."""
    from jobs.runtime.config import load_section

    section = load_section("insights") if settings is None else settings
    row = tuple(str(section.get(key, default)) if scale is None
                else int(float(section.get(key, default)) * scale)
                for _, key, scale, default in SETTINGS)
    return spark.createDataFrame([row], ", ".join(
        f"{col} {'string' if scale is None else 'bigint'}" for col, _, scale, _ in SETTINGS))


def snapshot_settings(spark, snapshot_id: str | None, settings: dict | None) -> dict:
    """The ``insights`` keys for the ``settings`` row: conf/ (``settings``, when given, instead),
    overridden by ``snapshot_id``'s broker configs (read from the registered ``broker_configs``
    view, already the snapshot's rows), and those by ``settings`` again: an explicit value wins
    over the captured cluster's, the cluster's over conf/ and the defaults."""
    from jobs.lake.tables import BROKER_CONFIGS
    from jobs.runtime.config import load_section

    base = dict(load_section("insights")) if settings is None else {}
    broker = {}
    if snapshot_id is not None:
        rows = spark.sql(f"select name, value from {BROKER_CONFIGS} "
                         f"where value is not null").collect()
        broker = {BROKER_SETTINGS[r.name]: r.value for r in rows if r.name in BROKER_SETTINGS}
    return {**base, **broker, **(settings or {})}


def view_files(sql_dir: Path = SQL_DIR) -> dict[str, Path]:
    """``sql/<name>.sql`` by view name, in name order."""
    return {p.stem: p for p in sorted(Path(sql_dir).glob("*.sql"))}


def _sql_literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def read_by(queries, files: dict[str, Path], tables) -> tuple[dict[str, Path], set[str]]:
    """The views of ``files`` and the ``tables`` that ``queries`` (SQL texts) read, directly or
    through the views they read: every name a query's text holds, as a word, counts (a column or
    an alias of the same name only adds a view or table not needed). Spark resolves a view by its
    name, so a view a query reads always appears in its text."""
    import re

    words = re.compile(r"[a-z_][a-z0-9_]*")
    texts = {name: path.read_text().lower() for name, path in files.items()}
    seen: set[str] = set()
    pending = [text.lower() for text in queries]
    while pending:
        for word in set(words.findall(pending.pop())) - seen:
            seen.add(word)
            if word in texts:
                pending.append(texts[word])
    return {name: path for name, path in files.items() if name in seen}, set(tables) & seen


def register_lake(spark, lake: Path, snapshot_id: str | None = None,
                  sql_dir: Path = SQL_DIR, settings: dict | None = None,
                  frames: dict | None = None, materialize: bool = False,
                  needed_by=None) -> Catalog:
    """Register the lake's tables (only ``snapshot_id``'s rows when given; in an incremental
    lake, each table as of the snapshot: :func:`jobs.lake.snapshot_views.as_of`), the one-row
    ``settings`` view (``settings``, default the ``insights`` section of conf/; with a
    ``snapshot_id``, its captured broker configs over conf/: :func:`snapshot_settings`) and the
    ``sql/`` views. ``frames`` (table -> DataFrame of ``snapshot_id``'s rows, as a run holds them) stand
    in for the lake's tables of the same name. ``materialize``: compute each view of
    :data:`MATERIALIZED` once and hold it, for a caller about to run many views.
    ``needed_by``: SQL texts, the only queries the caller will run: only the tables and views they
    read are registered (:func:`read_by`; each view costs an analysis when registered: the
    insight rules read 7 of the 20)."""
    from jobs.lake.delta import direct_snapshot
    from jobs.lake.snapshot_views import as_of, is_incremental
    from jobs.lake.tables import BROKER_CONFIGS

    catalog = Catalog()
    frames = frames or {}
    incremental = snapshot_id is not None and is_incremental(lake)
    files = view_files(sql_dir)
    present = set(lake_tables(lake)) | set(frames)
    names = present | set(contract_columns())   # what is registered: a table or a placeholder
    if needed_by is not None:
        # broker_configs: read for the settings row (snapshot_settings)
        files, names = read_by([*needed_by, BROKER_CONFIGS], files, names)
    for name in sorted(names & present):
        df = frames.get(name)
        if df is None and incremental:
            df = as_of(spark, lake, name, snapshot_id)   # None: written whole per snapshot
            if df is not None:   # joins every view would repeat: computed once, when first read
                df = df.localCheckpoint(eager=False)
        if df is None and snapshot_id is not None:
            df = direct_snapshot(spark, lake, name, snapshot_id)  # None: through Delta, below
        if df is None:
            df = spark.read.format("delta").load(str(Path(lake).resolve() / name))
        elif df.sparkSession is not spark:
            df = _in_session(spark, df)
        if snapshot_id is not None and "snapshot_id" in df.columns:
            df = df.where(f"snapshot_id = {_sql_literal(snapshot_id)}")
        df.createOrReplaceTempView(name)
        catalog.tables.append(name)
    for name, columns in contract_columns().items():
        if name not in catalog.tables and name in names:
            ddl = ", ".join(f"`{col}` {dtype}" for col, dtype in columns)
            spark.createDataFrame([], ddl).createOrReplaceTempView(name)
            catalog.placeholders.append(name)
    settings = snapshot_settings(spark, snapshot_id, settings)
    settings_frame(spark, settings).createOrReplaceTempView(SETTINGS_VIEW)
    catalog.views.append(SETTINGS_VIEW)
    _register_views(spark, files, catalog)
    if materialize:
        for name in MATERIALIZED:
            if name in catalog.views:
                spark.table(name).localCheckpoint(eager=True).createOrReplaceTempView(name)
    return catalog


def _in_session(spark, df):
    """``df`` as a DataFrame of ``spark``: a temporary view lives in the session of the DataFrame
    it is made from, and a run's frames come from more than one (its staged rows are read back in
    a session of their own, ``jobs.stages.ingest.read_back``), while the views query ``spark``.
    The same plan, planned with ``spark``'s settings."""
    from pyspark.sql import DataFrame

    jvm = spark._jvm
    return DataFrame(jvm.org.apache.spark.sql.classic.Dataset.ofRows(
        spark._jsparkSession, df._jdf.logicalPlan()), spark)


def _register_views(spark, files: dict[str, Path], catalog: Catalog) -> None:
    """Each file as a view, a view that reads another after it (name order otherwise): a view
    Spark cannot resolve yet waits for a later pass; none left that resolves is an error."""
    from pyspark.errors import AnalysisException

    pending = list(files.items())
    while pending:
        waiting = []
        for name, path in pending:
            try:
                spark.sql(f"create or replace temporary view `{name}` as\n{path.read_text()}")
            except AnalysisException as exc:
                if getattr(exc, "getCondition", lambda: None)() != "TABLE_OR_VIEW_NOT_FOUND":
                    raise
                waiting.append((name, path, exc))
                continue
            catalog.views.append(name)
        if len(waiting) == len(pending):
            raise waiting[0][2]
        pending = [(name, path) for name, path, _ in waiting]


def snapshot_ids(spark, lake: Path, table: str = "raw_records") -> list[str]:
    """The snapshot ids in the lake's ``table``, in order (the last is the default): from the
    table's Delta log (:func:`jobs.lake.delta.logged_snapshot_ids`), or a scan when the log
    cannot tell. In an incremental lake, every table's rows sit under the snapshot that first
    held them, so the lake's snapshots are the ones it lists (``snapshots``), in their order,
    whatever ``table``, after its backfills (older snapshots stored beside them)."""
    from jobs.lake.delta import logged_snapshot_ids
    from jobs.lake.snapshot_views import LakeOrder, backfills, is_incremental

    if is_incremental(lake):
        return backfills(spark, lake) + LakeOrder.read(spark, lake).ids
    if table not in lake_tables(lake):
        return []
    logged = logged_snapshot_ids(lake, table)
    if logged is not None:
        return logged
    df = spark.read.format("delta").load(str(Path(lake).resolve() / table))
    return sorted(r[0] for r in df.select("snapshot_id").distinct().collect())


def report_dir(lake: Path) -> Path:
    """Where quality Data Docs and reports of ``lake`` go (``report.dir`` in conf/, inside the lake
    when relative)."""
    from jobs.runtime.config import load_section

    configured = Path(str(load_section("report").get("dir", "_reports"))).expanduser()
    return configured if configured.is_absolute() else Path(lake) / configured

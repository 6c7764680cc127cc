"""``offsetlake vacuum``: an incremental lake's retention (docs/lake.md, "Across snapshots", Retention).

Snapshots are kept by number (the newest ``keep``) or by age (taken within ``older_than_ms`` of
``now_ms``; the newest is always kept). Of every older one, the per-snapshot rows no kept
snapshot reads are deleted:

* per-group state: a group's rows at an old snapshot go once a later snapshot, up to the oldest
  kept one, replayed the group again (the kept snapshots read the latest replay up to them, so
  the rows they read all stay), with their ``replayed_groups`` and ``group_topic_names`` rows;
  a group's fold (``fencing_folds``) goes once a later snapshot kept another;
* the tables written whole per snapshot (lag, broker_configs, fencing_audits, insight tables);

and the old snapshot is listed in ``vacuums``, so its own views refuse to answer. Records,
removals, batches, quarantine and history stay: they are the lake's memory of every record.
Then Delta's ``VACUUM`` removes the files no table version newer than ``retain_hours`` reads.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from jobs.lake.delta import read_table, replace_snapshot, table_path, unreferenced_files
from jobs.lake.increments import (FENCING_FOLDS, GROUP_STATE_TABLES, GROUP_TOPIC_NAMES,
                                  REPLAYED_GROUPS, VACUUMS, VACUUMS_COLUMNS)
from jobs.lake.snapshot_views import LakeOrder, in_ids
from jobs.lake.views import lake_tables

PER_SNAPSHOT_TABLES = ("lag", "broker_configs", "fencing_audits", "insight_audits",
                       "insight_findings")


@dataclass
class VacuumReport:
    kept: list[str]
    vacuumed: list[str]
    rows_deleted: dict[str, int]
    # tables Delta's VACUUM was not run on: every data file in them is one they read
    nothing_to_vacuum: list[str] = field(default_factory=list)

    def summary(self) -> str:
        deleted = ", ".join(f"{t} {n}" for t, n in self.rows_deleted.items() if n) or "none"
        return (f"vacuum: kept {len(self.kept)} snapshot(s) ({', '.join(self.kept)}); "
                f"{len(self.vacuumed)} older one(s) vacuumed; rows deleted: {deleted}; "
                f"{len(self.nothing_to_vacuum)} table(s) with no file to vacuum")


def choose(order: LakeOrder, times: dict[str, int | None], keep: int | None,
           older_than_ms: int | None, now_ms: int) -> list[str]:
    """The snapshots to keep: the newest ``keep``, or those taken (newest record time) within
    ``older_than_ms`` of ``now_ms``; always at least the newest.

    >>> order = LakeOrder([("a", 1, None), ("b", 2, None), ("c", 3, None)])
    >>> choose(order, {}, 2, None, 0)
    ['b', 'c']
    >>> choose(order, {"a": 0, "b": 50, "c": 90}, None, 45, 100)
    ['b', 'c']
    """
    ids = [sid for sid, _, _ in order.rows]
    if keep is not None:
        kept = ids[-max(keep, 1):]
    else:
        kept = [sid for sid in ids if (times.get(sid) or 0) >= now_ms - older_than_ms]
    return kept or ids[-1:]


def vacuum_lake(spark, lake: Path, keep: int | None = None, older_than_ms: int | None = None,
                now_ms: int = 0, retain_hours: float = 168.0) -> VacuumReport:
    """Apply the retention above; returns what was kept, vacuumed and deleted."""
    from pyspark.sql import functions as F

    from jobs.lake import committed_rows
    from jobs.lake.delta import table_version
    from jobs.lake.increments import SNAPSHOTS

    order = LakeOrder.read(spark, lake)
    times = {r[0]: r[1] for r in read_table(spark, lake, SNAPSHOTS)
             .select("snapshot_id", "newest_timestamp").collect()}
    kept = choose(order, times, keep, older_than_ms, now_ms)
    oldest_kept = kept[0]
    old = order.before(dict((s, q) for s, q, _ in order.rows)[oldest_kept])
    deleted: dict[str, int] = {}
    if old:
        seq = F.create_map(*[x for sid, s, _ in order.rows for x in (F.lit(sid), F.lit(s))])
        replays = (read_table(spark, lake, REPLAYED_GROUPS)
                   .where(in_ids("snapshot_id", order.upto(oldest_kept)))
                   .withColumn("seq", seq[F.col("snapshot_id")]))
        latest = replays.groupBy("group_id").agg(F.max("seq").alias("latest"))
        # (group, old snapshot) whose rows no kept snapshot reads: a later replay up to the oldest
        # kept snapshot supersedes them
        doomed = (replays.where(in_ids("snapshot_id", old)).join(latest, "group_id")
                  .where(F.col("seq") < F.col("latest")).select("group_id", "snapshot_id")
                  .localCheckpoint(eager=True))
        present = set(lake_tables(lake))
        ids = {r[0] for r in doomed.select("snapshot_id").distinct().collect()}
        doomed_in = {t: (doomed, ids)
                     for t in (*GROUP_STATE_TABLES, GROUP_TOPIC_NAMES, REPLAYED_GROUPS)}
        if FENCING_FOLDS in present:
            # only each group's newest fold is ever read (the next audit resumes it)
            folds = (read_table(spark, lake, FENCING_FOLDS).select("group_id", "snapshot_id")
                     .withColumn("seq", seq[F.col("snapshot_id")]))
            newest = folds.groupBy("group_id").agg(F.max("seq").alias("newest"))
            superseded = (folds.where(in_ids("snapshot_id", old)).join(newest, "group_id")
                          .where(F.col("seq") < F.col("newest")).select("group_id", "snapshot_id")
                          .localCheckpoint(eager=True))
            doomed_in[FENCING_FOLDS] = (superseded, {r[0] for r in superseded.select(
                "snapshot_id").distinct().collect()})

        def thin(table: str) -> int:
            """Rewrite the old snapshots' rows of a per-group table without the doomed ones."""
            gone, (doomed_rows, doomed_ids) = 0, doomed_in[table]
            for sid in sorted(doomed_ids):
                rows = read_table(spark, lake, table).where(F.col("snapshot_id") == sid)
                keep_rows = rows.join(doomed_rows.where(F.col("snapshot_id") == sid),
                                      ["group_id", "snapshot_id"], "left_anti")
                before, total = table_version(lake, table), rows.count()
                replace_snapshot(keep_rows.select(*rows.columns).localCheckpoint(eager=True),
                                 lake, table, sid)
                gone += total - committed_rows(lake, table, since=before)
            return gone

        def clear(table: str) -> int:
            """Remove the old snapshots' rows of a table written whole per snapshot."""
            rows = read_table(spark, lake, table).where(in_ids("snapshot_id", old))
            total = rows.count()
            if total:
                for sid in old:
                    replace_snapshot(rows.limit(0), lake, table, sid)
            return total

        jobs = {t: thin for t in doomed_in if t in present}
        jobs.update({t: clear for t in PER_SNAPSHOT_TABLES if t in present})
        with ThreadPoolExecutor(4, thread_name_prefix="offsetlake-vacuum") as pool:
            counts = dict(zip(jobs, pool.map(lambda t: jobs[t](t), jobs)))
        deleted = {t: n for t, n in counts.items() if n}
        for sid in old:
            replace_snapshot(spark.createDataFrame(
                [(sid, now_ms)], ", ".join(f"`{n}` {t}" for n, t, _ in VACUUMS_COLUMNS)),
                lake, VACUUMS, sid)
    skipped = _delta_vacuum(spark, lake, retain_hours)
    return VacuumReport(kept, old, deleted, skipped)


def _delta_vacuum(spark, lake: Path, retain_hours: float) -> list[str]:
    """Delta's VACUUM of every table that holds a data file its version does not read, a few at
    a time; the others, whose every file is read, are returned. Such a table is skipped: VACUUM
    would delete nothing there and still cost about 20 Spark jobs (vacuuming a two-snapshot lake
    of the bundled sample: 538 jobs and 164 s with every table, 60 jobs and 55 s with the 23
    tables that had nothing to delete skipped, beside another busy test run). ``LITE``: the
    files to delete come from the Delta log's remove actions, not from listing and comparing
    every file (the full mode took about 45 s per table here, LITE 3-6 s); when the log no
    longer reaches back far enough for that, the full mode. A retention under Delta's 7-day
    default is allowed: the lake's writer is this project's, which holds the lake's write lock
    meanwhile."""
    from pyspark.errors import PySparkException

    check = "spark.databricks.delta.retentionDurationCheck.enabled"
    before = spark.conf.get(check, "true")
    spark.conf.set(check, "false")

    def vacuum(table: str) -> None:
        path = table_path(lake, table).replace("`", "``")
        try:
            spark.sql(f"VACUUM delta.`{path}` LITE RETAIN {retain_hours:g} HOURS").collect()
        except PySparkException:
            spark.sql(f"VACUUM delta.`{path}` RETAIN {retain_hours:g} HOURS").collect()

    tables = lake_tables(lake)
    read_whole = [t for t in tables if unreferenced_files(lake, t) == []]
    try:
        with ThreadPoolExecutor(4, thread_name_prefix="offsetlake-vacuum") as pool:
            list(pool.map(vacuum, [t for t in tables if t not in read_whole]))
    finally:
        spark.conf.set(check, before)
    return read_whole

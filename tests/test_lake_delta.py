"""Idempotent writes: ``replace_snapshot`` replaces exactly one snapshot's rows (or one stage's)."""

from __future__ import annotations

from chispa import assert_df_equality

from jobs.lake import read_snapshot, read_table, replace_snapshot

SCHEMA = "snapshot_id string, stage string, group_id string, payload binary"


def _rows(spark, rows):
    return spark.createDataFrame(rows, SCHEMA)


def test_rerun_replaces_only_its_own_snapshot(spark, tmp_path):
    replace_snapshot(_rows(spark, [("a", "x", "g1", b"\x00"), ("a", "x", "g2", None)]), tmp_path, "t", "a")
    replace_snapshot(_rows(spark, [("b", "x", "émoji-☃", b"")]), tmp_path, "t", "b")
    replace_snapshot(_rows(spark, [("a", "x", "g3", b"\x01")]), tmp_path, "t", "a")
    expected = _rows(spark, [("a", "x", "g3", b"\x01"), ("b", "x", "émoji-☃", b"")])
    assert_df_equality(read_table(spark, tmp_path, "t"), expected, ignore_row_order=True,
                       ignore_column_order=True, ignore_nullable=True)


def test_a_snapshot_s_first_write_into_a_table_appends_and_a_rewrite_replaces(spark, tmp_path):
    """Where the log shows no file of the snapshot, the write is an append (Delta reads no table
    state for it); once it has one, a rewrite replaces the snapshot's rows."""
    import json

    from jobs.lake.delta import _commits

    def modes() -> list[tuple[str, str | None]]:
        infos = [json.loads(line)["commitInfo"] for commit in _commits(tmp_path, "t")
                 for line in commit.read_text().splitlines() if "commitInfo" in line]
        return [(i["operationParameters"]["mode"], i["operationParameters"].get("predicate"))
                for i in infos]

    def groups(sid: str) -> list[str]:
        return sorted(r.group_id for r in read_snapshot(spark, tmp_path, "t", sid).collect())

    replace_snapshot(_rows(spark, [("a", "x", "g1", None)]), tmp_path, "t", "a")   # creates t
    replace_snapshot(_rows(spark, [("b", "x", "g2", None)]), tmp_path, "t", "b")
    replace_snapshot(_rows(spark, [("b", "x", "g3", None)]), tmp_path, "t", "b")
    assert [m for m, _ in modes()] == ["Overwrite", "Append", "Overwrite"]
    assert "snapshot_id = 'b'" in modes()[-1][1]
    assert (groups("a"), groups("b")) == (["g1"], ["g3"])


def test_only_narrows_the_replacement_to_one_stage(spark, tmp_path):
    replace_snapshot(_rows(spark, [("a", "batch", "g", None), ("a", "decode", "old", None)]),
                     tmp_path, "quarantine", "a")
    replace_snapshot(_rows(spark, [("a", "decode", "new", None)]), tmp_path, "quarantine", "a",
                     only="stage = 'decode'")
    got = {(r.stage, r.group_id) for r in read_snapshot(spark, tmp_path, "quarantine", "a").collect()}
    assert got == {("batch", "g"), ("decode", "new")}


def test_snapshot_ids_are_quoted_not_interpolated(spark, tmp_path):
    """A snapshot id is data: quotes and backslashes in it neither break nor widen the predicate."""
    odd = "it's \\ odd"
    replace_snapshot(_rows(spark, [("plain", "x", "keep", None)]), tmp_path, "t", "plain")
    replace_snapshot(_rows(spark, [(odd, "x", "g", None)]), tmp_path, "t", odd)
    replace_snapshot(_rows(spark, [(odd, "x", "g2", None)]), tmp_path, "t", odd)
    assert [r.group_id for r in read_snapshot(spark, tmp_path, "t", odd).collect()] == ["g2"]
    assert [r.group_id for r in read_snapshot(spark, tmp_path, "t", "plain").collect()] == ["keep"]


def test_unreferenced_files_are_what_vacuum_deletes(spark, tmp_path):
    """The files a table's version does not read, from its log and a listing (offsetlake vacuum
    skips Delta's VACUUM where there is none): a replaced snapshot's old files (in a partition
    directory whose name the log writes URL-encoded) and a stray file; none after VACUUM."""
    from urllib.parse import unquote

    from jobs.lake.delta import log_state, table_path, unreferenced_files

    odd = "it's 50% odd"
    replace_snapshot(_rows(spark, [(odd, "x", "g", None)]), tmp_path, "t", odd)
    replace_snapshot(_rows(spark, [("b", "x", "g", None)]), tmp_path, "t", "b")
    assert unreferenced_files(tmp_path, "t") == []
    first = sorted(log_state(tmp_path, "t").files)
    replace_snapshot(_rows(spark, [(odd, "x", "g2", None)]), tmp_path, "t", odd)
    root = tmp_path / "t"
    (root / "stray.parquet").write_bytes(b"PAR1")
    replaced = [f for f in first if f not in log_state(tmp_path, "t").files]
    assert len(replaced) == 1 and "%" in replaced[0]
    assert unreferenced_files(tmp_path, "t") == sorted([unquote(replaced[0]), "stray.parquet"])
    assert (root / unquote(replaced[0])).is_file()
    spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    try:
        spark.sql(f"VACUUM delta.`{table_path(tmp_path, 't')}` RETAIN 0 HOURS").collect()
    finally:
        spark.conf.unset("spark.databricks.delta.retentionDurationCheck.enabled")
    assert unreferenced_files(tmp_path, "t") == []
    assert unreferenced_files(tmp_path, "missing") is None


def test_an_empty_write_counts_no_rows_not_the_previous_commits(spark, tmp_path):
    """Delta commits nothing for an empty write that replaces nothing: the count must say 0, not
    repeat the last commit's (the run's summary and reconciliation read it)."""
    from jobs.lake.delta import committed_rows, table_version

    assert table_version(tmp_path, "t") == -1
    replace_snapshot(_rows(spark, [("a", "x", "g1", None), ("a", "x", "g2", None)]), tmp_path, "t", "a")
    assert committed_rows(tmp_path, "t", since=-1) == 2
    before = table_version(tmp_path, "t")
    replace_snapshot(spark.createDataFrame([], SCHEMA), tmp_path, "t", "b")
    assert committed_rows(tmp_path, "t") == 2          # the last commit's metric: a's write
    assert committed_rows(tmp_path, "t", since=before) == 0
    before = table_version(tmp_path, "t")
    replace_snapshot(_rows(spark, [("b", "x", "g3", None)]), tmp_path, "t", "b")
    assert committed_rows(tmp_path, "t", since=before) == 1


def test_snapshot_ids_from_the_log_are_the_ids_a_scan_finds(spark, tmp_path):
    """``logged_snapshot_ids`` (the Delta log: the checkpoint, then the commits) against Spark's
    ``distinct`` after each write (snapshots added, rewritten, emptied and narrowed) until past
    a checkpoint (every 4 commits for this table), then with the commits before it gone."""
    import random

    from jobs.lake.delta import logged_snapshot_ids, table_version

    def scanned() -> list[str]:
        return sorted(r[0] for r in read_table(spark, tmp_path, "t").select("snapshot_id")
                      .distinct().collect())

    assert logged_snapshot_ids(tmp_path, "t") is None          # not written yet
    interval = "spark.databricks.delta.properties.defaults.checkpointInterval"
    before = spark.conf.get(interval, None)
    spark.conf.set(interval, "4")
    try:
        replace_snapshot(_rows(spark, [("a", "x", "g", None)]), tmp_path, "t", "a")
    finally:
        spark.conf.unset(interval) if before is None else spark.conf.set(interval, before)
    rng = random.Random(7)
    step = 0
    while table_version(tmp_path, "t") < 6:
        step += 1
        sid = rng.choice(["a", "b", "c", "it's odd", "d/e", "f:g %h"])
        rows = [(sid, rng.choice(["x", "decode"]), f"g{step}-{i}", None)
                for i in range(rng.choice([0, 1, 1, 3]))]
        only = "stage = 'decode'" if rng.random() < 0.2 else None
        rows = [r for r in rows if only is None or r[1] == "decode"]
        replace_snapshot(_rows(spark, rows), tmp_path, "t", sid, only=only)
        assert logged_snapshot_ids(tmp_path, "t") == scanned(), step
        _assert_direct_reads_are_delta_reads(spark, tmp_path, "t",
                                             ["a", "b", "c", "it's odd", "d/e", "f:g %h",
                                              "never"])
    log = tmp_path / "t" / "_delta_log"
    assert (log / "_last_checkpoint").is_file()
    for commit in log.glob("*.json"):   # as log cleanup leaves it: the checkpoint and after
        if int(commit.stem) < 4:
            commit.unlink()
    assert logged_snapshot_ids(tmp_path, "t") == scanned()
    _assert_direct_reads_are_delta_reads(spark, tmp_path, "t",
                                         ["a", "b", "c", "it's odd", "d/e", "f:g %h"])
    (log / f"{5:020d}.json").unlink()                          # a gap: the reader declines
    assert logged_snapshot_ids(tmp_path, "t") is None


def _content(df) -> list[str]:
    import json

    return sorted(json.dumps(r.asDict(recursive=True), sort_keys=True, default=repr)
                  for r in df.collect())


def _assert_direct_reads_are_delta_reads(spark, lake, table, snapshot_ids) -> None:
    """``read_snapshot`` read the snapshot's Parquet files itself (the log allowed it) and found
    what Delta finds, column for column; so did ``read_snapshots`` of several snapshots at once
    (directly: in one scan, and in one scan a file when Spark's listing threshold is 1; and
    through Delta past :data:`~jobs.lake.delta.DIRECT_SNAPSHOTS`), and of none."""
    from pyspark.sql import functions as F

    import jobs.lake.delta as delta_module
    from jobs.lake.delta import _sql_literal, read_snapshots, snapshot_files

    for sid in snapshot_ids:
        assert snapshot_files(lake, table, sid) is not None, (table, sid)
        direct = read_snapshot(spark, lake, table, sid)
        delta = read_table(spark, lake, table).where(f"snapshot_id = {_sql_literal(sid)}")
        assert direct.columns == delta.columns, (table, sid)
        assert _content(direct) == _content(delta), (table, sid)
    some = snapshot_ids[::2] + snapshot_ids[:1]   # a repeated id reads its rows once
    delta = read_table(spark, lake, table).where(F.col("snapshot_id").isin(some))
    limit = delta_module.DIRECT_SNAPSHOTS
    threshold = "spark.sql.sources.parallelPartitionDiscovery.threshold"
    before = spark.conf.get(threshold, None)
    for allowed, per_scan in ((limit, None), (limit, "1"), (1, None)):
        delta_module.DIRECT_SNAPSHOTS = allowed
        if per_scan is not None:
            spark.conf.set(threshold, per_scan)
        try:
            several = read_snapshots(spark, lake, table, some)
        finally:
            delta_module.DIRECT_SNAPSHOTS = limit
            spark.conf.unset(threshold) if before is None else spark.conf.set(threshold, before)
        assert several.columns == delta.columns, (table, some, allowed, per_scan)
        assert _content(several) == _content(delta), (table, some, allowed, per_scan)
    assert read_snapshots(spark, lake, table, []).count() == 0


def test_every_table_of_a_run_reads_directly_as_through_delta(spark, tmp_path_factory):
    """The bundled sample's lake, every table (variant columns, binary keys, empty tables):
    the direct read is the Delta read."""
    from jobs.lake.views import lake_tables
    from support.lake_fixture import sample_lake

    lake = sample_lake(spark, tmp_path_factory)
    tables = lake_tables(lake)
    assert {"records", "raw_records", "groups", "offsets", "insight_findings"} <= set(tables)
    for table in tables:
        if table == "records":   # variant: compared as JSON text (a variant has no equality)
            continue
        _assert_direct_reads_are_delta_reads(spark, lake, table, ["kafka-4.3.1"])
    direct = read_snapshot(spark, lake, "records", "kafka-4.3.1")
    delta = read_table(spark, lake, "records")
    as_text = [f"to_json({c})" if t == "variant" else c for c, t in direct.dtypes]
    assert _content(direct.selectExpr(*as_text)) == _content(delta.selectExpr(*as_text))


def test_a_table_with_deletion_vectors_is_read_through_delta(spark, tmp_path):
    """Rows a deletion vector removes are still in the Parquet file: such a table is never read
    directly, and ``read_snapshot`` still leaves them out."""
    from jobs.lake.delta import snapshot_files, table_path

    key = "spark.databricks.delta.properties.defaults.enableDeletionVectors"
    spark.conf.set(key, "true")
    try:
        replace_snapshot(_rows(spark, [("a", "x", f"g{i}", None) for i in range(50)]),
                         tmp_path, "t", "a")
    finally:
        spark.conf.unset(key)
    assert snapshot_files(tmp_path, "t", "a") is None     # the protocol names deletionVectors
    spark.sql(f"delete from delta.`{table_path(tmp_path, 't')}` where group_id = 'g7'")
    assert snapshot_files(tmp_path, "t", "a") is None
    got = {r.group_id for r in read_snapshot(spark, tmp_path, "t", "a").collect()}
    assert got == {f"g{i}" for i in range(50)} - {"g7"}


def test_a_lake_whose_path_spark_would_read_as_a_pattern_is_read_through_delta(spark, tmp_path):
    from jobs.lake.delta import snapshot_files

    lake = tmp_path / "lake[1]"
    replace_snapshot(_rows(spark, [("a", "x", "g", None)]), lake, "t", "a")
    assert snapshot_files(lake, "t", "a") is None
    assert [r.group_id for r in read_snapshot(spark, lake, "t", "a").collect()] == ["g"]


def test_group_state_takes_each_group_from_its_latest_replay_after_every_rewrite(spark, tmp_path):
    """A per-group table as of a snapshot: each group's rows at the latest snapshot up to it that
    replayed the group. The (group, snapshot) pairs are aggregated once per version of
    ``replayed_groups`` and ``snapshots``: a rewrite of the newest snapshot's replays is read,
    not the pairs of the version before it."""
    from jobs.lake.snapshot_views import group_state

    def write(table: str, schema: str, rows: list[tuple], sid: str) -> None:
        replace_snapshot(spark.createDataFrame(rows, schema), tmp_path, table, sid)

    def offsets(sid: str) -> set[tuple]:
        return {tuple(r) for r in group_state(spark, tmp_path, "offsets", sid).collect()}

    order, replays = "snapshot_id string, seq int, cluster_id string", "snapshot_id string, group_id string"
    values = "snapshot_id string, group_id string, committed_offset long"
    write("snapshots", order, [("s1", 1, "c")], "s1")
    write("snapshots", order, [("s2", 2, "c")], "s2")
    write("replayed_groups", replays, [("s1", "g"), ("s1", "h")], "s1")
    write("replayed_groups", replays, [("s2", "g")], "s2")
    write("offsets", values, [("s1", "g", 1), ("s1", "h", 5)], "s1")
    write("offsets", values, [("s2", "g", 2)], "s2")
    assert offsets("s1") == {("s1", "g", 1), ("s1", "h", 5)}
    assert offsets("s2") == {("s2", "g", 2), ("s2", "h", 5)}
    # s2 run again: it replays h too (its offset moved on) and g with no offset left
    write("offsets", values, [("s2", "h", 6)], "s2")
    write("replayed_groups", replays, [("s2", "g"), ("s2", "h")], "s2")
    assert offsets("s2") == {("s2", "h", 6)}
    assert offsets("s1") == {("s1", "g", 1), ("s1", "h", 5)}

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

"""The whole pipeline in Spark: ingest → decode → replay, on scenario snapshots."""

from __future__ import annotations

import json

import pytest

from decoders.log.writer import encode_batch
from jobs.lake import read_snapshot
from jobs.stages.pipeline import run_pipeline
from jobs.replay import TABLE_COLUMNS, replay_partition
from support.partition_dirs import events_from_partition_dir
from support.scenarios import Scenario


def _snapshot(tmp_path):
    """One partition, three groups: a KIP-848 consumer group mid-rebalance with a committed and an
    aborted transaction, a classic group, and a consumer group that was deleted."""
    s = (Scenario("orders")
         .consumer_join("A", ["foo"]).compute_target({"A": {"foo": [0, 1]}}).converge("A")
         .consumer_join("B", ["foo"]).compute_target({"A": {"foo": [0]}, "B": {"foo": [1]}})
         .converge("B").revoke("A")
         .offset_commit({"foo": {0: 10, 1: 11}})
         .transactional_commit(7, {"foo": {0: 20}})
         .txn_offset_commit(8, {"foo": {1: 99}}).end_txn(8, "ABORT")
         .group("billing").classic_rebalance({"c1": {"subscribe": ["bar"], "assignment": {"bar": [0]}}})
         .offset_commit({"bar": {0: 5}})
         .group("gone").consumer_join("X", ["foo"]).compute_target({"X": {"foo": [2]}})
         .converge("X").leave("X").delete_group())
    root = tmp_path / "snap"
    s.write(root)
    return s, root


@pytest.fixture(scope="module")
def lake_with_snapshot(spark, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pipeline")
    scenario, root = _snapshot(tmp)
    lake = tmp / "lake"
    report = run_pipeline(spark, lake, [str(root)], "s1")
    return scenario, root, lake, report


def _rows(spark, lake, table):
    return [{k: v for k, v in r.asDict(recursive=True).items() if k != "snapshot_id"}
            for r in read_snapshot(spark, lake, table, "s1").collect()]


def _canon(rows):
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def test_pipeline_reconciles(lake_with_snapshot):
    _, _, _, report = lake_with_snapshot
    assert report.reconciled, report.summary()
    assert report.decode_quarantined == 0
    assert report.data_records == report.decoded > 0


def test_spark_tables_equal_the_reference_replay(spark, lake_with_snapshot):
    _, root, lake, _ = lake_with_snapshot
    expected = replay_partition(events_from_partition_dir(root / "__consumer_offsets-0")).tables
    for table in TABLE_COLUMNS:
        assert _canon(_rows(spark, lake, table)) == _canon(expected[table]), table


def test_groups_members_and_offsets_content(spark, lake_with_snapshot):
    _, _, lake, _ = lake_with_snapshot
    groups = {r["group_id"]: (r["group_type"], r["group_state"], r["group_epoch"],
                              r["target_assignment_epoch"]) for r in _rows(spark, lake, "groups")}
    assert groups == {"orders": ("consumer", "Reconciling", 2, 2),
                      "billing": ("classic", "Stable", None, None)}
    members = sorted((r["group_id"], r["member_id"], r["member_epoch"], r["member_state"])
                     for r in _rows(spark, lake, "members"))
    assert members == [("billing", "c1", None, None),
                       ("orders", "A", 1, "UNREVOKED_PARTITIONS"),
                       ("orders", "B", 2, "UNRELEASED_PARTITIONS")]
    assignments = sorted((r["group_id"], r["member_id"], r["topic_name"], r["partition"],
                          r["assignment_epoch"], r["is_pending_revocation"])
                         for r in _rows(spark, lake, "member_assignments"))
    # A still owns foo-1 while revoking it, so B waits for it (UNRELEASED_PARTITIONS).
    assert assignments == [("billing", "c1", "bar", 0, 1, False), ("orders", "A", "foo", 0, 1, False),
                           ("orders", "A", "foo", 1, 1, True)]
    offsets = sorted((r["group_id"], r["topic"], r["partition"], r["committed_offset"])
                     for r in _rows(spark, lake, "offsets"))
    assert offsets == [("billing", "bar", 0, 5), ("orders", "foo", 0, 20), ("orders", "foo", 1, 11)]
    outcomes = sorted((r["producer_id"], r["outcome"]) for r in _rows(spark, lake, "transactions"))
    assert outcomes == [(7, "committed"), (8, "aborted")]


def test_records_table_types_every_record(spark, lake_with_snapshot):
    _, _, lake, _ = lake_with_snapshot
    records = read_snapshot(spark, lake, "records", "s1")
    epochs = records.where("record_type = 3").selectExpr(
        "group_id", "value:data.epoch::int as epoch").collect()
    assert ("orders", 2) in [tuple(r) for r in epochs]
    commits = records.where("record_type = 1 and not is_tombstone").selectExpr(
        "group_id", "topic", "topic_partition", "committed_offset").collect()
    assert ("billing", "bar", 0, 5) in [tuple(r) for r in commits]


def test_rerun_changes_nothing_and_bad_records_are_quarantined(spark, tmp_path):
    _, root = _snapshot(tmp_path)
    seg = root / "__consumer_offsets-0" / "00000000000000000000.log"
    events = list(events_from_partition_dir(root / "__consumer_offsets-0"))
    next_offset = events[-1].offset + 1
    with open(seg, "ab") as f:  # an unknown record type and a value of an unknown version
        f.write(encode_batch([(b"\x7f\xff\x00\x01g", b"\x00\x00", 1),
                              (b"\x00\x03\x00\x01g", b"\x00\x09", 1)], base_offset=next_offset))
    lake = tmp_path / "lake"
    first = run_pipeline(spark, lake, [str(root)], "s2")
    assert first.reconciled and first.decode_quarantined == 2
    reasons = sorted(r["reason"] for r in read_snapshot(spark, lake, "quarantine", "s2").collect())
    assert reasons == ["unknown_type", "unknown_version"]
    before = {t: _canon(r.asDict(recursive=True) for r in read_snapshot(spark, lake, t, "s2").collect())
              for t in ("raw_records", "records", "quarantine", *TABLE_COLUMNS)}
    second = run_pipeline(spark, lake, [str(root)], "s2")
    assert second.table_rows == first.table_rows
    after = {t: _canon(r.asDict(recursive=True) for r in read_snapshot(spark, lake, t, "s2").collect())
             for t in before}
    assert after == before


def test_sql_queries_tables_by_name(spark, lake_with_snapshot):
    import io

    from jobs.commands.sql import lake_tables, register_tables, write_rows

    _, _, lake, _ = lake_with_snapshot
    assert {"groups", "members", "offsets", "records", "raw_records"} <= set(lake_tables(lake))
    register_tables(spark, lake)
    query = "select group_id, group_state, group_epoch from groups order by group_id"
    out = io.StringIO()
    assert write_rows(spark.sql(query), "json", out) == 2
    assert [json.loads(line) for line in out.getvalue().splitlines()] == [
        {"group_id": "billing", "group_state": "Stable", "group_epoch": None},
        {"group_id": "orders", "group_state": "Reconciling", "group_epoch": 2}]
    out = io.StringIO()
    write_rows(spark.sql(query), "csv", out)
    assert out.getvalue().splitlines() == ["group_id,group_state,group_epoch",
                                           "billing,Stable,", "orders,Reconciling,2"]


def _documented_tables(*docs):
    """{table: [(column, type)]} from the markdown tables of docs/*.md."""
    import re
    from pathlib import Path

    tables, current = {}, None
    for doc in docs:
        for line in (Path(__file__).resolve().parents[1] / "docs" / doc).read_text().splitlines():
            heading = re.match(r"## `(\w+)`", line)
            if heading:
                current = tables.setdefault(heading.group(1), [])
            cell = re.match(r"\| `(\w+)` \| ([^|]+) \|", line)
            if cell and current is not None:
                current.append((cell.group(1), cell.group(2).strip()))
    return tables


def test_docs_describe_every_table_and_column_the_pipeline_writes(spark, lake_with_snapshot):
    from jobs.commands.sql import lake_tables

    _, _, lake, _ = lake_with_snapshot
    documented = _documented_tables("lake.md", "tables.md")
    assert set(documented) == set(lake_tables(lake))
    for table, columns in documented.items():
        schema = read_snapshot(spark, lake, table, "s1").schema
        actual = [(f.name, f.dataType.simpleString()) for f in schema]
        if table in TABLE_COLUMNS:  # tables.md leaves out the snapshot_id every table starts with
            columns = [("snapshot_id", "string")] + columns
        assert actual == columns, table

"""The downgrade stage in Spark: raw_records and record_facts -> downgrade_findings, on the real
4.3.1 sample; the same rows when each record is decoded again (a lake without record_facts)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from jobs.audits.downgrade import aggregate, audit_facts
from support.partition_dirs import facts_from_partition_dir
from jobs.lake import RAW_RECORDS, read_snapshot, replace_snapshot
from jobs.lake.downgrade import DOWNGRADE_FINDINGS, DOWNGRADE_FINDINGS_COLUMNS, RECORD_FACTS
from jobs.stages.downgrade import downgrade_findings
from jobs.stages.pipeline import run_pipeline
from support.lake_fixture import sample_lake

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "kafka-4.3.1"
TARGETS = ["3.9", "3.9+new-coordinator", "4.0", "4.2"]
SID = "kafka-4.3.1"   # the snapshot id of the session's sample lake


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory):
    """A copy of the session's sample lake, with the stage's table written into it."""
    lake = tmp_path_factory.mktemp("downgrade") / "lake"
    shutil.copytree(sample_lake(spark, tmp_path_factory), lake)
    raw = read_snapshot(spark, lake, RAW_RECORDS, SID)
    kept = read_snapshot(spark, lake, RECORD_FACTS, SID)
    replace_snapshot(downgrade_findings(spark, None, raw, SID, TARGETS, kept_df=kept), lake,
                     DOWNGRADE_FINDINGS, SID)
    return lake


@pytest.fixture(scope="module")
def rows(spark, lake):
    return [r.asDict() for r in read_snapshot(spark, lake, DOWNGRADE_FINDINGS, SID).collect()]


def _key(row: dict) -> tuple:
    return tuple(row[name] if not isinstance(row[name], list) else tuple(row[name])
                 for name, _, _ in DOWNGRADE_FINDINGS_COLUMNS)


def test_the_table_follows_its_contract(spark, lake):
    table = read_snapshot(spark, lake, DOWNGRADE_FINDINGS, SID)
    assert table.columns == [name for name, _, _ in DOWNGRADE_FINDINGS_COLUMNS]


def test_spark_rows_are_the_pure_audit_of_the_segment_files(spark, lake, rows):
    facts = [f for p in range(3) for f in facts_from_partition_dir(SAMPLE / f"__consumer_offsets-{p}")]
    expected = aggregate(audit_facts(facts, TARGETS), SID)
    assert sorted(map(_key, rows)) == sorted(map(_key, expected))
    # and when each record is decoded again, as for a lake without record_facts
    raw = read_snapshot(spark, lake, RAW_RECORDS, SID)
    decoded = [r.asDict() for r in downgrade_findings(spark, None, raw, SID, TARGETS).collect()]
    assert sorted(map(_key, decoded)) == sorted(map(_key, rows))


def test_4_0_fails_closed_on_the_share_group_partition_at_its_first_type_11_record(rows):
    breaks = [r for r in rows if r["target_version"] == "4.0" and r["class"] == "BREAK"]
    assert [(r["partition"], r["group_id"], r["rule_id"], r["failure_mode"], r["first_offset"])
            for r in breaks] == [(0, "wl-share", "DU-3", "fail-closed", 1)]


def test_3_9_drops_the_live_consumer_group_records_and_warns_of_resurrection(rows):
    live = {(r["partition"], r["group_id"], r["class"]) for r in rows
            if r["target_version"] == "3.9" and r["rule_id"] == "DU-1" and r["severity"] != "info"}
    assert {(2, "wl-consumer", "DROP"), (2, "wl-consumer", "RESURRECT"),
            (1, "wl-static", "DROP"), (1, "wl-drained", "DROP"), (0, "wl-share", "DROP")} <= live
    assert not any(r["class"] == "BREAK" for r in rows if r["target_version"] in ("3.9", "4.2"))


def test_markers_reach_their_groups_and_orphans_in_spark_as_in_the_pure_audit(spark, tmp_path):
    """A committed transaction (its marker goes to group g) and a marker whose records compaction
    removed (it reaches the loader all the same): 3.6's loader fails on the first control batch,
    3.7 on none; the Spark rows equal the pure audit's."""
    from decoders.codec import encode_key, encode_value
    from decoders.log.writer import encode_batch, encode_control_batch, write_segment

    key = encode_key(1, {"group": "g", "topic": "t", "partition": 0})
    value = encode_value(1, 3, {"offset": 5, "leaderEpoch": -1, "metadata": "", "commitTimestamp": 1})
    part = tmp_path / "snap" / "__consumer_offsets-0"
    part.mkdir(parents=True)
    write_segment(part / f"{0:020d}.log", [
        encode_control_batch(1, 0, offset=3, producer_id=9, producer_epoch=0, timestamp=1),
        encode_batch([(key, value, 1)], base_offset=4, producer_id=7, producer_epoch=0,
                     is_transactional=True),
        encode_control_batch(1, 0, offset=5, producer_id=7, producer_epoch=0, timestamp=1)])
    lake = tmp_path / "lake"
    run_pipeline(spark, lake, [str(tmp_path / "snap")], "m")
    raw = read_snapshot(spark, lake, RAW_RECORDS, "m")
    kept = read_snapshot(spark, lake, RECORD_FACTS, "m")
    targets = ["3.6+new", "3.7+new"]
    pure = aggregate(audit_facts(facts_from_partition_dir(part), targets), "m")
    for kept_df in (kept, None):
        spark_rows = [r.asDict() for r in
                      downgrade_findings(spark, None, raw, "m", targets, kept_df=kept_df).collect()]
        assert sorted(map(_key, spark_rows), key=repr) == sorted(map(_key, pure), key=repr)
    # each group's load stops at its first marker; the partition's, at the orphan one (offset 3)
    assert sorted((r["target_version"], r["group_id"] or "", r["rule_id"], r["first_offset"])
                  for r in pure if r["class"] == "BREAK") == [
        ("3.6+new-coordinator", "", "DU-4", 3), ("3.6+new-coordinator", "g", "DU-4", 5)]

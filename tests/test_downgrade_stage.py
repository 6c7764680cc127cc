"""The downgrade stage in Spark: raw_records -> downgrade_findings, on the real 4.3.1 sample."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.audits.downgrade import aggregate, audit_facts
from jobs.audits.downgrade_facts import facts_from_partition_dir
from jobs.lake import RAW_RECORDS, read_snapshot, replace_snapshot
from jobs.lake.downgrade import DOWNGRADE_FINDINGS, DOWNGRADE_FINDINGS_COLUMNS
from jobs.stages.downgrade import downgrade_findings
from jobs.stages.ingest import ingest

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "kafka-4.3.1"
TARGETS = ["3.9", "3.9+new-coordinator", "4.0", "4.2"]


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory):
    lake = tmp_path_factory.mktemp("downgrade") / "lake"
    ingest(spark, lake, [str(SAMPLE)], "s1")
    raw = read_snapshot(spark, lake, RAW_RECORDS, "s1")
    replace_snapshot(downgrade_findings(spark, None, raw, "s1", TARGETS), lake,
                     DOWNGRADE_FINDINGS, "s1")
    return lake


@pytest.fixture(scope="module")
def rows(spark, lake):
    return [r.asDict() for r in read_snapshot(spark, lake, DOWNGRADE_FINDINGS, "s1").collect()]


def _key(row: dict) -> tuple:
    return tuple(row[name] if not isinstance(row[name], list) else tuple(row[name])
                 for name, _, _ in DOWNGRADE_FINDINGS_COLUMNS)


def test_the_table_follows_its_contract(spark, lake):
    table = read_snapshot(spark, lake, DOWNGRADE_FINDINGS, "s1")
    assert table.columns == [name for name, _, _ in DOWNGRADE_FINDINGS_COLUMNS]


def test_spark_rows_are_the_pure_audit_of_the_segment_files(rows):
    facts = [f for p in range(3) for f in facts_from_partition_dir(SAMPLE / f"__consumer_offsets-{p}")]
    expected = aggregate(audit_facts(facts, TARGETS), "s1")
    assert sorted(map(_key, rows)) == sorted(map(_key, expected))


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

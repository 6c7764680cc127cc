"""The run finds the insight rules once, over the tables it has just written (``insight_audits``,
``insight_findings``), and the audit reads those rows instead of running the rules again: they
are what the rules find from the lake's tables. Other settings or SQL than the run's, or the two
tables disagreeing (a run that died between their writes), and the audit runs the rules itself."""

from __future__ import annotations

import json
import shutil

import pytest
from support.scenarios import Scenario

from jobs.audits.insights import rule_files
from jobs.lake import read_snapshot, replace_snapshot
from jobs.lake.findings import INSIGHT_AUDITS, INSIGHT_FINDINGS
from jobs.stages.audit import audit_lake
from jobs.stages.insights import insight_findings, insight_fingerprint
from jobs.stages.pipeline import run_pipeline

HOUR = 3_600_000
WEEK = 7 * 24 * HOUR   # offsets.retention.minutes at its default, 10080


@pytest.fixture(scope="module")
def source(spark, tmp_path_factory):
    """g (member A, subscribed to foo) committed bar-0, a topic it does not subscribe to, a week
    less two hours before the snapshot: it expires two hours after it (EX-01). h committed once,
    has never had a member and has been idle since (GH-01)."""
    tmp = tmp_path_factory.mktemp("run-insights")
    s = (Scenario("g").consumer_join("A", ["foo"]).compute_target({"A": {"foo": [0]}})
         .converge("A"))
    s.offset_commit({"bar": {0: 5}})
    s.group("h").offset_commit({"foo": {0: 3}})
    s.advance(WEEK - 2 * HOUR)
    s.group("g").offset_commit({"foo": {0: 10}})
    s.write(tmp / "snap")
    run_pipeline(spark, tmp / "lake", [str(tmp / "snap")], "s1")
    return tmp / "lake"


@pytest.fixture
def lake(source, tmp_path):
    shutil.copytree(source, tmp_path / "lake")
    return tmp_path / "lake"


def _rows(rows) -> list[str]:
    return sorted(json.dumps({k: v for k, v in (r if isinstance(r, dict) else r.asDict()).items()
                              if k != "snapshot_id"}, sort_keys=True, default=str) for r in rows)


def _insights(result) -> list[dict]:
    return [f for f in result.findings if f["rule_id"] in rule_files()]


def test_the_run_finds_what_the_rules_find_from_the_lake(spark, source):
    """The rules found again from the lake in a session of their own (no view another test left):
    only the tables and views they read are registered, and one they read but were not given
    would be an error here."""
    from jobs.runtime.config import load_config
    from jobs.runtime.session import keep_short

    found = read_snapshot(spark, source, INSIGHT_FINDINGS, "s1").collect()
    [audited] = read_snapshot(spark, source, INSIGHT_AUDITS, "s1").collect()
    fresh = spark.newSession()
    keep_short(fresh, load_config())

    assert {(r["rule_id"], r["group_id"]) for r in found} >= {("EX-01", "g"), ("GH-01", "h")}
    [ex01] = [r for r in found if r["rule_id"] == "EX-01"]
    assert (ex01["topic"], ex01["partition"], ex01["severity"]) == ("bar", 0, "low")
    assert (audited["findings"], audited["fingerprint"]) == (len(found), insight_fingerprint())
    assert _rows(found) == _rows(insight_findings(fresh, source, "s1").collect())
    registered = {r.tableName for r in fresh.sql("show tables").where("isTemporary").collect()}
    assert {"offset_expiry", "group_churn", "ghost_groups", "recreated_topics", "settings",
            "snapshot_time", "membership_records", "offsets", "broker_configs"} <= registered
    assert not {"group_overview", "coordinator_load", "findings_summary", "quarantine"} & registered


def test_the_audit_reads_the_runs_rows(spark, lake):
    from pyspark.sql import functions as F

    replace_snapshot(read_snapshot(spark, lake, INSIGHT_FINDINGS, "s1")
                     .withColumn("message", F.lit("as the run found it")).localCheckpoint(),
                     lake, INSIGHT_FINDINGS, "s1")

    insights = _insights(audit_lake(spark, lake, "s1"))

    assert insights and {f["message"] for f in insights} == {"as the run found it"}


def test_other_settings_are_found_again(spark, lake, monkeypatch):
    """An hour of warning instead of 24: bar-0 expires two hours after the snapshot, so no EX-01;
    the run's rows, found under 24, are not read."""
    monkeypatch.setenv("OFFSETLAKE_INSIGHTS__EXPIRY_WARNING_HOURS", "1")
    assert insight_fingerprint() != read_snapshot(
        spark, lake, INSIGHT_AUDITS, "s1").first()["fingerprint"]

    rules = {(f["rule_id"], f["group_id"]) for f in _insights(audit_lake(spark, lake, "s1"))}

    assert ("GH-01", "h") in rules and ("EX-01", "g") not in rules


def test_tables_that_disagree_are_found_again(spark, lake):
    found = read_snapshot(spark, lake, INSIGHT_FINDINGS, "s1")
    rows = found.collect()
    replace_snapshot(spark.createDataFrame(rows[1:], found.schema), lake, INSIGHT_FINDINGS, "s1")

    assert _rows(_insights(audit_lake(spark, lake, "s1"))) == _rows(rows)

"""``offsetlake audit`` end to end with real Spark and Delta: the bundled 4.3.1 sample passes the
``--fail-on high`` gate; a scenario snapshot with double ownership fails it, naming CG-01; the
findings table is replaced per snapshot; topic names are resolved across groups in Spark too."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.scenarios import Scenario

from jobs.cli import main as offsetlake
from jobs.commands.inputs import EXIT_FINDINGS, EXIT_NO_SEGMENTS
from jobs.lake import read_snapshot
from jobs.lake.findings import FINDINGS, FINDINGS_COLUMNS
from jobs.stages.pipeline import run_pipeline
from support.lake_fixture import sample_lake


def _double_ownership(root: Path) -> Scenario:
    """g: A owns foo-0..2; a current-assignment record gives foo-2 to B as well. h owns foo-3
    and never commits (its topic name comes from g's commit)."""
    s = (Scenario("g").consumer_join("A", ["foo"]).consumer_join("B", ["foo"])
         .compute_target({"A": {"foo": [0, 1, 2]}, "B": {"foo": [3]}}).converge("A"))
    s.raw(8, {"groupId": "g", "memberId": "B"}, {
        "memberEpoch": 2, "previousMemberEpoch": 0, "state": 0,
        "assignedPartitions": [{"topicId": s.topic_id("foo"), "partitions": [2],
                                "assignmentEpochs": [2]}],
        "partitionsPendingRevocation": []})
    s.offset_commit({"foo": {0: 10}})
    s.group("h").consumer_join("C", ["foo"]).compute_target({"C": {"foo": [3]}}).converge("C")
    s.write(root)
    return s


@pytest.fixture(scope="module")
def lakes(spark, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("audit")
    scenario = _double_ownership(tmp / "snap")
    shutil.copytree(sample_lake(spark, tmp_path_factory), tmp / "sample-lake")
    run_pipeline(spark, tmp / "lake", [str(tmp / "snap")], "s1")
    return scenario, tmp / "sample-lake", tmp / "lake"


def test_the_bundled_sample_passes_the_high_gate(lakes, capsys):
    _, sample_lake, _ = lakes
    code = offsetlake(["audit", "--lake", str(sample_lake), "--fail-on", "high", "--format", "json"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]

    assert code == 0
    assert rows and {r["rule_id"] for r in rows} <= {"WIN-01", "OF-05"}
    assert {(r["rule_id"], r["group_id"], r["log_partition"], r["log_offset"])
            for r in rows if r["rule_id"] == "OF-05"} == {("OF-05", "wl-offdel", 1, 50),
                                                          ("OF-05", "wl-offdel", 1, 51)}


def test_double_ownership_fails_the_gate_naming_cg01(spark, lakes, capsys):
    scenario, _, lake = lakes
    position = scenario.steps[-5].start_offset   # the hand-built type-8 record

    code = offsetlake(["audit", "--lake", str(lake), "--format", "json"])
    out = capsys.readouterr().out
    rows = [json.loads(line) for line in out.splitlines()]

    assert code == EXIT_FINDINGS
    assert ("CG-01", "critical", "g", "B", 0, position) in {
        (r["rule_id"], r["severity"], r["group_id"], r["member_id"], r["log_partition"],
         r["log_offset"]) for r in rows}
    table = read_snapshot(spark, lake, FINDINGS, "s1")
    assert table.columns == [name for name, _, _ in FINDINGS_COLUMNS]
    assert sorted(r["rule_id"] for r in table.collect()) == sorted(r["rule_id"] for r in rows)


def test_filters_and_rerun_replace_the_snapshot(spark, lakes, capsys):
    _, _, lake = lakes
    assert offsetlake(["audit", "--lake", str(lake), "--rule", "CG-01", "--fail-on", "critical",
                       "--format", "csv"]) == EXIT_FINDINGS
    csv_lines = capsys.readouterr().out.splitlines()
    assert csv_lines[0].startswith("rule_id,severity,verdict,group_id")
    assert len(csv_lines) == 2 and csv_lines[1].startswith("CG-01,critical,violation,g,B,")
    assert offsetlake(["audit", "--lake", str(lake), "--group", "h"]) == 0
    first = sorted(json.dumps(r.asDict(), default=str)
                   for r in read_snapshot(spark, lake, FINDINGS, "s1").collect())
    assert first and first == sorted(json.dumps(r.asDict(), default=str) for r in
                                     read_snapshot(spark, lake, FINDINGS, "s1").collect())


def test_assignment_topic_names_are_resolved_across_groups(spark, lakes):
    _, _, lake = lakes
    rows = read_snapshot(spark, lake, "member_assignments", "s1").where("group_id = 'h'").collect()
    assert [(r["member_id"], r["topic_name"], r["partition"]) for r in rows] == [("C", "foo", 3)]


def test_an_unknown_target_version_is_a_usage_error(tmp_path, capsys):
    assert offsetlake(["audit", "--lake", str(tmp_path), "--target-version", "banana"]) == 2
    assert "banana" in capsys.readouterr().err


def test_unknown_rule_is_a_usage_error(tmp_path, capsys):
    assert offsetlake(["audit", "--lake", str(tmp_path), "--rule", "XX-9"]) == 2
    assert "unknown rule XX-9" in capsys.readouterr().err


def test_a_lake_without_tables_or_snapshot_is_nothing_to_read_not_findings(lakes, tmp_path,
                                                                          capsys):
    """Exit 5 (nothing to read), distinct from 3 (no such path) and 8 (findings)."""
    assert offsetlake(["audit", "--lake", str(tmp_path)]) == EXIT_NO_SEGMENTS
    assert "has no records table; run 'offsetlake run" in capsys.readouterr().err
    _, _, lake = lakes
    assert offsetlake(["audit", "--lake", str(lake), "--snapshot", "nope"]) == EXIT_NO_SEGMENTS
    assert "snapshot nope is not in" in capsys.readouterr().err


def test_all_expands_to_every_release_line_once():
    from jobs.audits.downgrade_targets import ALL_TARGETS
    from jobs.commands.audit import parse_targets

    assert parse_targets(["4.0", "all", "4.0"]) == ["4.0", *[t for t in ALL_TARGETS if t != "4.0"]]
    assert parse_targets(["banana"]) is None


@pytest.mark.submit
def test_the_audit_runs_under_spark_submit(lakes):
    """The same module is the spark-submit job; its exit code gates the same way."""
    import os
    import subprocess
    import sys

    from jobs.runtime.config import load_config
    from jobs.runtime.session import delta_jars

    _, _, lake = lakes
    root = Path(__file__).resolve().parents[1]
    jars = ",".join(str(j) for j in delta_jars(load_config().jars_dir))
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "PYTHONPATH": str(root)}
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("spark-submit")), "--master", "local[1]", "--jars", jars,
         "--conf", "spark.ui.showConsoleProgress=false", str(root / "jobs" / "commands" / "audit.py"),
         "--lake", str(lake), "--rule", "CG-01", "--fail-on", "critical"],
        capture_output=True, text=True, env=env, timeout=1800)
    assert proc.returncode == EXIT_FINDINGS, proc.stderr[-3000:]
    assert proc.stdout.startswith("CG-01  critical violation g  @0:8")


def test_json_output_carries_the_downgrade_findings_and_verdicts(lakes, capsys):
    _, sample_lake, _ = lakes
    code = offsetlake(["audit", "--lake", str(sample_lake), "--target-version", "4.0",
                       "--target-version", "4.3", "--fail-on", "never", "--format", "json"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]

    assert code == 0
    by_kind = {}
    for line in lines:
        by_kind.setdefault(line["kind"], []).append(line)
    assert set(by_kind) == {"finding", "downgrade_finding", "downgrade_verdict"}
    breaks = {(r["target_version"], r["partition"], r["rule_id"], r["first_offset"])
              for r in by_kind["downgrade_finding"] if r["class"] == "BREAK"}
    # 4.0.2's broker stops at offset 1 of partition 0 (a 4.1+ ShareGroupMetadata it misreads).
    assert breaks == {("4.0", 0, "DU-3", 1)}
    verdicts = {v["target_version"]: v for v in by_kind["downgrade_verdict"]}
    assert verdicts["4.3"]["safe"] is True and verdicts["4.3"]["partitions"] == []
    assert not verdicts["4.0"]["safe"]
    assert [(p["partition"], p["fate"]) for p in verdicts["4.0"]["partitions"]] == [(0, "fails")]
    assert verdicts["4.0"]["headline"].startswith("safe to downgrade to 4.0: no - partition 0 does not load")


def test_run_audit_report_in_one_session(spark, tmp_path, capsys, monkeypatch):
    """``run --audit --report``: the tables, the findings, the gate summary and the page, from one
    command; its exit code is the audit's gate. Its audit reads the run's own frames, never a
    table the run wrote, and finds what ``offsetlake audit`` finds in those tables."""
    from jobs.stages import audit as audit_stage

    def no_reading(*args):
        raise AssertionError(f"run --audit read a table of the lake: {args[2:]}")

    lake, page = tmp_path / "lake", tmp_path / "page.html"
    sample = Path(__file__).resolve().parents[1] / "samples" / "kafka-4.3.1"
    with monkeypatch.context() as m:
        m.setattr(audit_stage, "_optional", no_reading)
        m.setattr(audit_stage, "_snapshot", no_reading)
        code = offsetlake(["run", str(sample), "--full", "--lake", str(lake), "--audit",
                           "--fail-on", "low",
                           "--target-version", "4.0", "--report", str(page)])
    out = capsys.readouterr().out
    assert code == EXIT_FINDINGS
    assert "OF-05  low      violation wl-offdel  @1:50" in out
    assert "safe to downgrade to 4.0: no" in out
    summary = json.loads((lake / "_reports" / "audit-kafka-4.3.1.json").read_text())
    # the two OF-05 and the 4.0 load failure (critical)
    assert (summary["verdict"], summary["gating"], summary["fail_on"]) == ("fail", 3, "low")
    assert "Gate: FAIL" in page.read_text()
    assert {r["rule_id"] for r in read_snapshot(spark, lake, FINDINGS, "kafka-4.3.1").collect()} \
        == {"OF-05", "WIN-01"}

    def audit_tables():
        return {t: sorted(json.dumps(r.asDict(recursive=True), sort_keys=True, default=str)
                          for r in read_snapshot(spark, lake, t, "kafka-4.3.1").collect())
                for t in (FINDINGS, "downgrade_findings")}
    from_run = audit_tables()
    assert offsetlake(["audit", "--lake", str(lake), "--target-version", "4.0",
                       "--fail-on", "never"]) == 0
    assert audit_tables() == from_run and from_run["downgrade_findings"]


def test_the_default_incremental_run_audits_and_reports_each_snapshot_as_of_it(spark, tmp_path,
                                                                             capsys):
    """``run --audit --report`` into a new lake (incremental, the default), twice: the second
    snapshot adds no record, yet its audit sees every record it holds (as of it, through the
    lake), so both snapshots get the same findings, gate and page as a full run's."""
    lake = tmp_path / "lake"
    sample = Path(__file__).resolve().parents[1] / "samples" / "kafka-4.3.1"
    findings = {}
    for snapshot_id in ("first", "second"):
        page = tmp_path / f"{snapshot_id}.html"
        code = offsetlake(["run", str(sample), "--lake", str(lake), "--snapshot-id", snapshot_id,
                           "--audit", "--fail-on", "low", "--target-version", "4.0",
                           "--report", str(page)])
        out = capsys.readouterr().out
        assert code == EXIT_FINDINGS, out
        assert "OF-05  low      violation wl-offdel  @1:50" in out
        assert "safe to downgrade to 4.0: no" in out
        assert "Gate: FAIL" in page.read_text() and f"snapshot {snapshot_id}" in page.read_text()
        summary = json.loads((lake / "_reports" / f"audit-{snapshot_id}.json").read_text())
        assert (summary["verdict"], summary["gating"]) == ("fail", 3)
        findings[snapshot_id] = sorted(
            json.dumps(r.asDict(recursive=True), sort_keys=True, default=str)
            for r in read_snapshot(spark, lake, FINDINGS, snapshot_id).drop("snapshot_id").collect())
    assert "snapshot second (#2 of the lake): 182 records, 0 new" in out
    assert findings["first"] == findings["second"]
    assert {json.loads(r)["rule_id"] for r in findings["second"]} == {"OF-05", "WIN-01"}


def test_run_target_version_needs_audit(tmp_path, capsys):
    sample = Path(__file__).resolve().parents[1] / "samples" / "kafka-4.3.1"
    assert offsetlake(["run", str(sample), "--lake", str(tmp_path), "--target-version",
                       "4.0"]) == 2
    assert "--target-version needs --audit" in capsys.readouterr().err


def test_every_table_a_run_and_an_audit_write_is_its_contract(spark, lakes, capsys):
    """``jobs.lake.tables.TABLES`` is the one contract: each Delta table of a run plus an audit
    with a downgrade target has exactly its columns, in order, with its types."""
    from jobs.lake.tables import TABLES
    from jobs.lake.views import lake_tables

    _, sample_lake, _ = lakes
    assert offsetlake(["audit", "--lake", str(sample_lake), "--target-version", "3.9",
                       "--fail-on", "never"]) == 0
    capsys.readouterr()
    written = lake_tables(sample_lake)
    assert set(written) == set(TABLES)
    for name in written:
        schema = spark.read.format("delta").load(str(sample_lake / name)).schema
        assert [(f.name, f.dataType.simpleString()) for f in schema] == TABLES[name].pairs(), name


def test_the_audit_reads_the_fencing_audit_of_the_run_and_it_is_what_the_audit_finds(
        spark, lakes, tmp_path):
    """The run audits fencing as it replays (``fencing_audits``, ``fencing_findings``) and the
    audit reads those rows instead of replaying the groups again: they are what the audit finds
    from the tables without them. A regime other than the run's, or the two tables disagreeing
    (a run that died between their writes), is audited again."""
    import shutil

    from jobs.audits.insights import rule_files
    from jobs.lake import replace_snapshot
    from jobs.lake.findings import FENCING_AUDITS, FENCING_FINDINGS
    from jobs.stages.audit import audit_lake
    from pyspark.sql import functions as F

    _, _, source = lakes
    lake = tmp_path / "lake"
    shutil.copytree(source, lake)
    fencing = read_snapshot(spark, lake, FENCING_FINDINGS, "s1").collect()
    [audited] = read_snapshot(spark, lake, FENCING_AUDITS, "s1").collect()
    assert (audited["findings"], audited["snapshot_id"]) == (len(fencing), "s1")
    assert "CG-01" in {r["rule_id"] for r in fencing}

    # Read, not found again: a changed message in the run's rows is what the audit reports.
    replace_snapshot(read_snapshot(spark, lake, FENCING_FINDINGS, "s1")
                     .withColumn("message", F.lit("as the run found it")).localCheckpoint(),
                     lake, FENCING_FINDINGS, "s1")
    read_back = audit_lake(spark, lake, "s1")
    assert read_back.regime == audited["regime"]
    assert sum(f["message"] == "as the run found it" for f in read_back.findings) == len(fencing)
    other = "strict" if audited["regime"] != "strict" else "relaxed"
    assert not any(f["message"] == "as the run found it"
                   for f in audit_lake(spark, lake, "s1", regime=other).findings)

    # One row fewer than the run counted: audited again, and what the run found, message and all.
    replace_snapshot(spark.createDataFrame(fencing[1:], read_snapshot(
        spark, lake, FENCING_FINDINGS, "s1").schema), lake, FENCING_FINDINGS, "s1")
    again = audit_lake(spark, lake, "s1")
    insight_rules = set(rule_files())
    assert again.regime == audited["regime"]
    assert sorted(json.dumps(f, sort_keys=True, default=str)
                  for f in again.findings if f["rule_id"] not in insight_rules) == \
        sorted(json.dumps({k: v for k, v in r.asDict().items() if k != "snapshot_id"},
                          sort_keys=True, default=str) for r in fencing)

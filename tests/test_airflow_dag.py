"""The Airflow 3 DAG: it parses cleanly (no Spark at parse time), and real ``airflow dags test``
runs on the bundled sample with spark-submit on local[2]: a clean interval passes the gate; the
same interval judged at a lower ``fail_on`` still gets its quality run and report, then the gate
task fails the run.

Airflow runs in subprocesses with their own AIRFLOW_HOME (a tmp dir, SQLite), so nothing leaks
into the test session or the machine.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, UTC
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DAGS = ROOT / "airflow_dags"
SAMPLE = ROOT / "samples" / "kafka-4.3.1"
EXPECTED = ROOT / "samples" / "kafka-4.3.1.expected" / "tables"
VENV_BIN = Path(sys.executable).parent

PARSE = """
import json, sys
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder=sys.argv[1])
dag = bag.dags.get("offsetlake")
vacuum = bag.dags.get("offsetlake_vacuum")
print(json.dumps({
    "errors": {k: str(v)[-3000:] for k, v in bag.import_errors.items()},
    "dags": sorted(bag.dags),
    "downstream": {t.task_id: sorted(t.downstream_task_ids) for t in dag.tasks} if dag else None,
    "operators": {t.task_id: type(t).__name__ for t in dag.tasks} if dag else None,
    "retries": {t.task_id: t.retries for t in dag.tasks} if dag else None,
    "trigger_rules": {t.task_id: getattr(t.trigger_rule, "value", t.trigger_rule)
                      for t in dag.tasks} if dag else None,
    "params": sorted(dag.params) if dag else None,
    "schedule": str(dag.schedule) if dag else None,
    "vacuum": {"downstream": {t.task_id: sorted(t.downstream_task_ids) for t in vacuum.tasks},
               "params": sorted(vacuum.params), "schedule": str(vacuum.schedule)}
              if vacuum else None,
    "heavy_imports": sorted(m for m in sys.modules
                            if m.split(".")[0] in ("pyspark", "great_expectations", "delta")),
}))
"""


def airflow_env(home: Path) -> dict:
    return {**os.environ,
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home}/airflow.db",
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO",
            "PYTHONPATH": str(ROOT),
            "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_dagbag_imports_the_dag_with_its_tasks_in_order(tmp_path):
    proc = subprocess.run([sys.executable, "-c", PARSE, str(DAGS)], capture_output=True, text=True,
                          env=airflow_env(tmp_path), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    parsed = json.loads(proc.stdout.strip().splitlines()[-1])
    assert parsed["errors"] == {}
    assert parsed["dags"] == ["offsetlake", "offsetlake_vacuum"]
    assert parsed["downstream"] == {"snapshot": ["run"], "run": ["audit", "quality", "report"],
                                    "audit": ["gate", "quality"], "quality": ["report"],
                                    "report": ["gate"], "gate": []}
    assert parsed["operators"] == {"snapshot": "_PythonDecoratedOperator",
                                   "run": "RunSubmitOperator", "audit": "AuditSubmitOperator",
                                   "quality": "SparkSubmitOperator", "report": "SparkSubmitOperator",
                                   "gate": "_PythonDecoratedOperator"}
    # quality, report and gate run once run succeeded, whatever the task before them did.
    assert parsed["trigger_rules"] == {"snapshot": "all_success", "run": "all_success",
                                       "audit": "all_success",
                                       "quality": "all_done_min_one_success",
                                       "report": "all_done_min_one_success",
                                       "gate": "all_done_min_one_success"}
    # conf/: retries 2; a finding does not go away on retry.
    assert parsed["retries"] == {"snapshot": 2, "run": 2, "audit": 2, "quality": 2, "report": 2,
                                 "gate": 0}
    assert parsed["params"] == ["fail_on", "full", "kafka_conn_id", "lake", "landing_dir", "source",
                                "target_versions"]
    assert "@hourly" in parsed["schedule"] or "0 * * * *" in parsed["schedule"]
    # Retention on a schedule of its own (conf/: daily), skipped for a lake that is not incremental.
    vacuum = parsed["vacuum"]
    assert vacuum["downstream"] == {"incremental": ["vacuum"], "vacuum": []}
    assert vacuum["params"] == ["keep", "lake", "retain_hours"]
    assert "@daily" in vacuum["schedule"] or "0 0 * * *" in vacuum["schedule"]
    assert parsed["heavy_imports"] == []


def test_snapshot_id_and_landing_choice_depend_on_the_interval_only(tmp_path):
    sys.path.insert(0, str(DAGS))
    try:
        import offsetlake_dag as module
    finally:
        sys.path.remove(str(DAGS))
    start = datetime(2026, 11, 23, 10, tzinfo=UTC)
    assert module.snapshot_id_for(start) == "interval-20261123T100000Z"
    old, new = tmp_path / "snap-a", tmp_path / "snap-b"
    old.mkdir(), new.mkdir()
    os.utime(old, (start.timestamp() - 600,) * 2)
    os.utime(new, (start.timestamp() + 7200,) * 2)
    # The rerun of the 10:00-11:00 interval picks what had landed by 11:00, not the newer one.
    assert module.newest_landing_snapshot(tmp_path, start + timedelta(hours=1)) == old
    assert module.newest_landing_snapshot(tmp_path, start + timedelta(hours=3)) == new
    with pytest.raises(FileNotFoundError):
        module.newest_landing_snapshot(tmp_path, start - timedelta(hours=1))


def _expected_group_epochs() -> dict:
    rows = [json.loads(line) for line in (EXPECTED / "groups.jsonl").read_text().splitlines()]
    return {r["group_id"]: (r["group_epoch"], r["generation"], r["member_count"]) for r in rows}


@dataclass
class Interval:
    """One ``airflow dags test`` of an interval: its task and run states, its log, and what it left
    in the lake (read at once: a later run of the same interval replaces them)."""

    states: dict[str, str]
    run_state: str
    log: str
    snapshot_id: str
    summary: dict
    report: str


@pytest.fixture(scope="module")
def airflow(tmp_path_factory) -> dict:
    """An AIRFLOW_HOME migrated once, a landing dir holding the sample, a lake, and an interval
    that ends after the sample landed (its mtime), so the landing dir has it by then."""
    tmp = tmp_path_factory.mktemp("airflow-dag")
    home, landing, lake = tmp / "airflow", tmp / "landing", tmp / "lake"
    landing.mkdir()
    (landing / "kafka-4.3.1").symlink_to(SAMPLE)
    env = {**airflow_env(home), "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps(
        {"conn_type": "spark", "host": "local[2]"})}
    migrate = subprocess.run([str(VENV_BIN / "airflow"), "db", "migrate"], capture_output=True,
                             text=True, env=env, timeout=900)
    assert migrate.returncode == 0, migrate.stderr[-3000:]
    logical = (datetime.now(UTC) + timedelta(hours=1)).replace(minute=0, second=0, microsecond=0)
    return {"home": home, "env": env, "landing": landing, "lake": lake, "logical": logical}


def airflow_dags_test(airflow: dict, dag_id: str, conf: dict, *options: str) -> tuple[str, str, dict]:
    """``airflow dags test`` of one DAG: its log, run state and task states."""
    proc = subprocess.run([str(VENV_BIN / "airflow"), "dags", "test", dag_id,
                           airflow["logical"].isoformat(), "-c", json.dumps(conf), *options],
                          capture_output=True, text=True, env=airflow["env"], timeout=5400)
    with sqlite3.connect(airflow["home"] / "airflow.db") as db:
        run_id, run_state = db.execute("select run_id, state from dag_run where dag_id = ? "
                                       "order by id desc", (dag_id,)).fetchone()
        states = dict(db.execute("select task_id, state from task_instance where run_id = ? "
                                 "and dag_id = ?", (run_id, dag_id)).fetchall())
    return proc.stdout + proc.stderr, run_state, states


def dags_test(airflow: dict, conf: dict, *options: str) -> Interval:
    lake = airflow["lake"]
    conf = {"landing_dir": str(airflow["landing"]), "lake": str(lake), **conf}
    log, run_state, states = airflow_dags_test(airflow, "offsetlake", conf, *options)
    snapshots = [p.name for p in (lake / "groups").iterdir() if p.name.startswith("snapshot_id=")]
    assert len(snapshots) == 1, (snapshots, log[-6000:])
    snapshot_id = snapshots[0].split("=", 1)[1]
    reports = lake / "_reports"
    summary = json.loads((reports / f"audit-{snapshot_id}.json").read_text())
    report = (reports / f"report-{snapshot_id}.html").read_text()
    return Interval(states, run_state, log, snapshot_id, summary, report)


@pytest.fixture(scope="module")
def clean_interval(airflow) -> Interval:
    # 4.3: the version that wrote the sample, so the downgrade audit has nothing to gate on.
    return dags_test(airflow, {"fail_on": "high", "target_versions": ["4.3"]})


@pytest.fixture(scope="module")
def failing_interval(airflow, clean_interval) -> Interval:
    """The same interval judged at ``low``: the sample's two OF-05 findings (manual commits of
    wl-offdel, graded low) reach it. The clean run left this interval's tables and its quality
    results, neither of which depends on ``fail_on``, so ``run`` and ``quality`` are marked
    successful instead of running again; audit, report and gate run for real."""
    return dags_test(airflow, {"fail_on": "low", "target_versions": []},
                     "--mark-success-pattern", "^(run|quality)$")


def test_airflow_dags_test_runs_the_pipeline_on_the_sample(spark, airflow, clean_interval):
    """snapshot (landing dir) -> run -> audit -> quality -> report -> gate (passes at high)."""
    interval, lake = clean_interval, airflow["lake"]
    assert interval.states == {"snapshot": "success", "run": "success", "audit": "success",
                               "quality": "success", "report": "success", "gate": "success"}, \
        interval.log[-6000:]
    assert interval.run_state == "success"
    snapshot_id = interval.snapshot_id
    assert snapshot_id.startswith("interval-")
    groups = spark.read.format("delta").load(str(lake / "groups")).collect()
    assert {g.group_id: (g.group_epoch, g.generation, g.member_count) for g in groups} == \
        _expected_group_epochs()
    findings = spark.read.format("delta").load(str(lake / "findings")).collect()
    assert {f.snapshot_id for f in findings} == {snapshot_id}
    assert not [f for f in findings if f.severity in ("high", "critical")]
    quality = json.loads((lake / "_reports" / "quality" / f"{snapshot_id}.json").read_text())
    assert quality["success"] and quality["snapshot_id"] == snapshot_id
    assert (interval.summary["snapshot_id"], interval.summary["fail_on"],
            interval.summary["gating"], interval.summary["verdict"]) == \
        (snapshot_id, "high", 0, "pass")
    assert f"snapshot {snapshot_id}" in interval.report and "wl-consumer" in interval.report
    assert "<p class='ok'>Gate: pass — no finding at or above high</p>" in interval.report
    assert "Gate: pass — no finding at or above high" in interval.log


def test_findings_at_fail_on_fail_the_run_after_quality_and_report(failing_interval):
    interval = failing_interval
    assert interval.states == {"snapshot": "success", "run": "success", "audit": "success",
                               "quality": "success", "report": "success", "gate": "failed"}, \
        interval.log[-6000:]
    assert interval.run_state == "failed"
    summary = dict(interval.summary)
    first = summary.pop("first")
    assert summary == {"snapshot_id": interval.snapshot_id, "fail_on": "low",
                       "counts": {"critical": 0, "high": 0, "medium": 0, "low": 2, "info": 3},
                       "gating": 2, "verdict": "fail"}
    assert [(f["rule_id"], f["severity"], f["group_id"], f["message"].split(" while ")[0])
            for f in first] == [
        ("OF-05", "low", "wl-offdel", "offset for wl-events-0 committed at log offset 50"),
        ("OF-05", "low", "wl-offdel", "offset for wl-events-1 committed at log offset 51")]
    # The report of this run (the clean run's said pass) shows the verdict the gate failed on.
    assert "<p class='bad'>Gate: FAIL — 2 findings at or above low</p>" in interval.report
    assert "<td>OF-05</td><td>low</td><td>wl-offdel</td>" in interval.report
    assert f"Gate: FAIL — 2 findings at or above low in snapshot {interval.snapshot_id}; " \
           "5 findings counted: 2 low, 3 info" in interval.log
    assert "OF-05 low wl-offdel: offset for wl-events-0 committed at log offset 50" in interval.log


def test_the_vacuum_dag_drops_old_snapshots_state_and_keeps_history(spark, airflow,
                                                                     clean_interval,
                                                                     failing_interval, capsys):
    """The DAG's lake is incremental (the run's default). A later snapshot joins it; then
    ``offsetlake_vacuum`` keeping one snapshot vacuums the interval's snapshot: its rows of the
    tables written whole per snapshot go, what the later snapshot reads (its groups as of it,
    every record and history row) stays."""
    from jobs.cli import main as offsetlake
    from jobs.lake.snapshot_views import as_of

    lake = airflow["lake"]
    assert (lake / "snapshots" / "_delta_log").is_dir()   # the DAG's run built an incremental lake
    assert offsetlake(["run", str(SAMPLE), "--lake", str(lake), "--snapshot-id", "later"]) == 0
    assert "snapshot later (#2 of the lake)" in capsys.readouterr().out

    def kept() -> dict:
        tables = {t: spark.read.format("delta").load(str(lake / t))
                  for t in ("raw_records", "offset_commits", "epochs")}
        tables["groups as of later"] = as_of(spark, lake, "groups", "later")
        return {t: sorted(map(str, df.collect())) for t, df in tables.items()}
    before = kept()
    assert before["groups as of later"]
    log, run_state, states = airflow_dags_test(
        airflow, "offsetlake_vacuum", {"lake": str(lake), "keep": 1, "retain_hours": 0})
    assert (run_state, states) == ("success", {"incremental": "success", "vacuum": "success"}), \
        log[-6000:]
    assert "vacuum: kept 1 snapshot(s) (later); 1 older one(s) vacuumed" in log
    vacuumed = spark.read.format("delta").load(str(lake / "vacuums")).collect()
    assert [r.snapshot_id for r in vacuumed] == [clean_interval.snapshot_id]
    assert kept() == before
    audits = spark.read.format("delta").load(str(lake / "fencing_audits")).collect()
    assert {r.snapshot_id for r in audits} == {"later"}

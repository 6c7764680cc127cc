"""The Airflow 3 DAG: it parses cleanly (no Spark at parse time), and a real ``airflow dags test``
runs it end to end on the bundled sample with spark-submit on local[2].

Airflow runs in subprocesses with their own AIRFLOW_HOME (a tmp dir, SQLite), so nothing leaks
into the test session or the machine.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
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
print(json.dumps({
    "errors": {k: str(v)[-3000:] for k, v in bag.import_errors.items()},
    "dags": sorted(bag.dags),
    "downstream": {t.task_id: sorted(t.downstream_task_ids) for t in dag.tasks} if dag else None,
    "operators": {t.task_id: type(t).__name__ for t in dag.tasks} if dag else None,
    "retries": {t.task_id: t.retries for t in dag.tasks} if dag else None,
    "params": sorted(dag.params) if dag else None,
    "schedule": str(dag.schedule) if dag else None,
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
    assert parsed["dags"] == ["offsetlake"]
    assert parsed["downstream"] == {"snapshot": ["run"], "run": ["audit"], "audit": ["quality"],
                                    "quality": ["report"], "report": []}
    assert parsed["operators"] == {"snapshot": "_PythonDecoratedOperator",
                                   "run": "SparkSubmitOperator", "audit": "AuditSubmitOperator",
                                   "quality": "SparkSubmitOperator", "report": "SparkSubmitOperator"}
    assert parsed["retries"]["run"] == 2 and parsed["retries"]["audit"] == 0  # conf/: retries 2
    assert parsed["params"] == ["fail_on", "kafka_conn_id", "lake", "landing_dir", "source",
                                "target_versions"]
    assert "@hourly" in parsed["schedule"] or "0 * * * *" in parsed["schedule"]
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


def test_airflow_dags_test_runs_the_pipeline_on_the_sample(spark, tmp_path):
    """snapshot (landing dir) -> run -> audit (the sample passes --fail-on high) -> quality -> report."""
    home, landing, lake = tmp_path / "airflow", tmp_path / "landing", tmp_path / "lake"
    landing.mkdir()
    (landing / "kafka-4.3.1").symlink_to(SAMPLE)
    env = {**airflow_env(home), "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps(
        {"conn_type": "spark", "host": "local[2]"})}
    migrate = subprocess.run([str(VENV_BIN / "airflow"), "db", "migrate"], capture_output=True,
                             text=True, env=env, timeout=900)
    assert migrate.returncode == 0, migrate.stderr[-3000:]
    # The interval ends after the sample landed (its mtime), so the landing dir has it by then.
    logical = (datetime.now(UTC) + timedelta(hours=1)).replace(minute=0, second=0,
                                                                        microsecond=0)
    # 4.3: the version that wrote the sample, so the downgrade audit has nothing to gate on.
    conf = {"landing_dir": str(landing), "lake": str(lake), "fail_on": "high",
            "target_versions": ["4.3"]}
    proc = subprocess.run([str(VENV_BIN / "airflow"), "dags", "test", "offsetlake",
                           logical.isoformat(), "-c", json.dumps(conf)],
                          capture_output=True, text=True, env=env, timeout=5400)
    log = proc.stdout + proc.stderr
    with sqlite3.connect(home / "airflow.db") as db:
        states = dict(db.execute("select task_id, state from task_instance").fetchall())
    assert states == {"snapshot": "success", "run": "success", "audit": "success",
                      "quality": "success", "report": "success"}, log[-6000:]
    [snapshot_dir] = [p.name for p in (lake / "groups").iterdir() if p.name.startswith("snapshot_id=")]
    snapshot_id = snapshot_dir.split("=", 1)[1]
    assert snapshot_id.startswith("interval-")
    groups = spark.read.format("delta").load(str(lake / "groups")).collect()
    assert {g.group_id: (g.group_epoch, g.generation, g.member_count) for g in groups} == \
        _expected_group_epochs()
    findings = spark.read.format("delta").load(str(lake / "findings")).collect()
    assert {f.snapshot_id for f in findings} == {snapshot_id}
    assert not [f for f in findings if f.severity in ("high", "critical")]
    quality = json.loads((lake / "_reports" / "quality" / f"{snapshot_id}.json").read_text())
    assert quality["success"] and quality["snapshot_id"] == snapshot_id
    report = (lake / "_reports" / f"report-{snapshot_id}.html").read_text()
    assert f"snapshot {snapshot_id}" in report and "wl-consumer" in report

"""A real Spark standalone cluster: a master and a worker started on 127.0.0.1 from the pyspark
installation, the pipeline (and the audit) submitted to it with ``spark-submit --master
spark://127.0.0.1:PORT``, and every table equal to a local run of the same snapshot."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jobs.cli import main as offsetlake
from jobs.lake.views import lake_tables
from jobs.runtime.config import load_config
from jobs.runtime.session import delta_jars

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "kafka-4.3.1"
VENV_BIN = Path(sys.executable).parent
START_TIMEOUT = 300

pytestmark = pytest.mark.submit


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(log: Path, text: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        content = log.read_text(errors="replace") if log.exists() else ""
        if text in content:
            return
        if proc.poll() is not None:
            pytest.fail(f"{log.name} exited {proc.returncode}:\n{content[-3000:]}")
        time.sleep(1)
    pytest.fail(f"no '{text}' in {log.name} after {START_TIMEOUT}s:\n{log.read_text()[-3000:]}")


def _short_jvm() -> str:
    """The JVM options of a short run (conf/: C1 only, the serial collector): every JVM here
    runs a job of the bundled sample, which the full JIT does not repay."""
    return load_config().spark.short_run_java_options


def _env() -> dict:
    return {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(ROOT),
            "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
            "SPARK_DAEMON_JAVA_OPTS": _short_jvm()}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """(``spark://127.0.0.1:PORT``, the worker's work dir): one worker, 2 cores, 1 GiB."""
    tmp = tmp_path_factory.mktemp("standalone")
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    spark_class = str(VENV_BIN / "spark-class")
    started: list[subprocess.Popen] = []
    try:
        with open(tmp / "master.log", "w") as log:
            master = subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                 "--port", str(port), "--webui-port", str(free_port())],
                stdout=log, stderr=subprocess.STDOUT, env=_env())
        started.append(master)
        _wait_for(tmp / "master.log", "I have been elected leader", master)
        with open(tmp / "worker.log", "w") as log:
            worker = subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                 "--cores", "2", "--memory", "1g", "--webui-port", str(free_port()),
                 "--work-dir", str(tmp / "work")],
                stdout=log, stderr=subprocess.STDOUT, env=_env())
        started.append(worker)
        _wait_for(tmp / "worker.log", "Successfully registered with master", worker)
        yield url, tmp / "work"
    finally:
        for proc in reversed(started):
            proc.terminate()
        for proc in reversed(started):
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()


def submit(url: str, script: str, *args: str) -> subprocess.CompletedProcess:
    jars = ",".join(str(j) for j in delta_jars(load_config().jars_dir))
    command = [str(VENV_BIN / "spark-submit"), "--master", url, "--jars", jars,
               "--conf", "spark.executor.memory=512m", "--conf", "spark.cores.max=2",
               "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.ui.enabled=false",
               "--conf", f"spark.pyspark.python={sys.executable}",
               "--conf", f"spark.executorEnv.PYTHONPATH={ROOT}",
               "--conf", "spark.sql.shuffle.partitions=4",
               "--conf", f"spark.driver.extraJavaOptions={_short_jvm()}",
               "--conf", f"spark.executor.extraJavaOptions={_short_jvm()}",
               str(ROOT / "jobs" / "commands" / script), *args]
    return subprocess.run(command, capture_output=True, text=True, env=_env(), timeout=1800)


def comparable(spark, lake: Path, table: str):
    """The table without snapshot_id, VARIANT as JSON text (VARIANT has no equality)."""
    df = spark.read.format("delta").load(str(lake / table))
    columns = [f"to_json(`{f.name}`) as `{f.name}`" if f.dataType.typeName() == "variant"
               else f"`{f.name}`" for f in df.schema.fields if f.name != "snapshot_id"]
    return df.selectExpr(*columns)


def assert_same_tables(spark, left: Path, right: Path, tables: list[str]) -> None:
    """Each table holds the same rows, as many times each, on both sides; a failure shows a few
    of the rows only one side holds. The sample's tables are small: each side is collected (a
    read of the table) and compared here, not by a Spark job of its own."""
    from collections import Counter

    for table in tables:
        a, b = (Counter(map(repr, comparable(spark, lake, table).collect())) for lake in (left, right))
        assert a == b, (table, {left.name: sorted((a - b).elements())[:5],
                                right.name: sorted((b - a).elements())[:5]})


def test_pipeline_on_a_standalone_cluster_equals_the_local_run(spark, cluster, tmp_path):
    from jobs.stages.pipeline import run_pipeline

    url, work = cluster
    on_cluster, local = tmp_path / "cluster-lake", tmp_path / "local-lake"
    proc = submit(url, "run.py", str(SAMPLE), "--full", "--lake", str(on_cluster), "--snapshot-id", "s")
    assert proc.returncode == 0, proc.stderr[-5000:]
    assert "reconciled" in proc.stdout
    # The executors really ran on the worker: it made a directory for the application.
    assert [p.name for p in work.iterdir() if p.name.startswith("app-")], proc.stderr[-3000:]
    assert run_pipeline(spark, local, [str(SAMPLE)], "s").reconciled
    tables = lake_tables(on_cluster)
    assert tables == lake_tables(local)
    assert {"raw_records", "records", "groups", "members", "epochs", "offsets"} <= set(tables)
    assert_same_tables(spark, on_cluster, local, tables)
    groups = {r.group_id for r in spark.read.format("delta").load(str(on_cluster / "groups")).collect()}
    assert {"wl-consumer", "wl-share", "wl-static", "wl-classic-ck"} <= groups

    audited = submit(url, "audit.py", "--lake", str(on_cluster))
    assert audited.returncode == offsetlake(["audit", "--lake", str(local)]), audited.stderr[-5000:]
    audit_tables = sorted(set(lake_tables(on_cluster)) - set(tables))
    assert audit_tables == sorted(set(lake_tables(local)) - set(tables))
    assert_same_tables(spark, on_cluster, local, audit_tables)

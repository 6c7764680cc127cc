"""The same jobs run under spark-submit with another master, unchanged."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.runtime.config import load_config
from jobs.runtime.session import delta_jars
from support.snapshot_factory import write_offset_commits

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.submit


def test_ingest_job_runs_under_spark_submit(tmp_path):
    spark_submit = Path(sys.executable).with_name("spark-submit")
    snap = write_offset_commits(tmp_path / "snap", 500, partitions=2)
    jars = ",".join(str(j) for j in delta_jars(load_config().jars_dir))
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [str(spark_submit), "--master", "local[1]", "--jars", jars,
         "--conf", "spark.ui.showConsoleProgress=false", str(ROOT / "jobs" / "commands" / "ingest.py"),
         str(snap.root), "--lake", str(tmp_path / "lake"), "--snapshot-id", "submitted"],
        capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "snapshot submitted: 500 records read" in proc.stdout
    assert "500 rows written to raw_records" in proc.stdout and "reconciled" in proc.stdout

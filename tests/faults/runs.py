"""Running ``offsetlake run`` as a person would (a subprocess, its own process group) and reading
a lake's tables back for comparison with a clean run."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from jobs.replay import TABLE_COLUMNS

PROJECT = Path(__file__).resolve().parents[2]
TABLES = ["raw_records", "records", "quarantine", *TABLE_COLUMNS]
# Where a row came from on disk differs between copies of a snapshot; everything else must not.
PLACE_COLUMNS = {"snapshot_id", "source_file", "file_position"}


def cli_env(**extra: str) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(PROJECT), OFFSETLAKE_SPARK__MASTER="local[2]",
                OFFSETLAKE_SPARK__SHUFFLE_PARTITIONS="2", **extra)


def start_run(snapshot: Path, lake: Path, snapshot_id: str = "snap",
              **env: str) -> subprocess.Popen:
    """``offsetlake run --full`` in its own session, so the test can kill its whole tree (the
    incremental run's kill -9 is test_incremental_crash's)."""
    return subprocess.Popen([sys.executable, "-m", "jobs.cli", "run", str(snapshot), "--full",
                             "--lake", str(lake), "--snapshot-id", snapshot_id], cwd=PROJECT, env=cli_env(**env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def kill_tree(proc: subprocess.Popen) -> None:
    """SIGKILL the run's whole session (driver, JVM, Python workers): it was started by the test."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def run_cli(snapshot: Path, lake: Path, snapshot_id: str = "snap",
            timeout: float = 600) -> subprocess.CompletedProcess:
    proc = start_run(snapshot, lake, snapshot_id)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        kill_tree(proc)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def rerun_here(snapshot: Path, lake: Path, snapshot_id: str = "snap",
               incremental: bool = False) -> subprocess.CompletedProcess:
    """The rerun after a killed or refused CLI run: the same ``offsetlake run`` command line
    (``--full`` unless ``incremental``), through the CLI's own entry point (the lake's lock and
    all), but in the suite's warm session. What is under test is what the killed run left in
    the lake, which no process of its own would read differently; a cold CLI JVM per rerun
    cost the suite about a minute each (CI)."""
    import io

    from jobs.cli import main as offsetlake

    mode = "--incremental" if incremental else "--full"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = offsetlake(["run", str(snapshot), mode, "--lake", str(lake),
                           "--snapshot-id", snapshot_id])
    return subprocess.CompletedProcess(["offsetlake", "run"], code, out.getvalue(), err.getvalue())


def run_here(spark, snapshot: Path, lake: Path, snapshot_id: str = "snap",
             incremental: bool = False) -> None:
    """A reference run (the pipeline ``offsetlake run`` runs, ``--incremental`` or not) in the
    suite's own session: what the damaged-input CLI runs are compared with, and what the
    incremental crash's CLI runs start from and are compared with. Each CLI run starts a JVM of
    its own and compiles every query afresh (about three times a warm session's time on the
    sample); what is under test is those runs, not this one."""
    import io

    if incremental:
        from jobs.stages.increment_run import run_increment

        run_increment(spark, lake, [str(snapshot)], snapshot_id, progress=io.StringIO())
        return
    from jobs.stages.pipeline import run_pipeline

    assert run_pipeline(spark, lake, [str(snapshot)], snapshot_id,
                        progress=io.StringIO()).reconciled


def _rows(spark, path: Path, snapshot_id: str) -> list[str]:
    from pyspark.sql import functions as F

    df = spark.read.format("delta").load(str(path)).where(F.col("snapshot_id") == snapshot_id)
    columns = [F.col(f.name).cast("string").alias(f.name)
               if f.dataType.typeName() == "variant" else F.col(f.name)
               for f in df.schema.fields if f.name not in PLACE_COLUMNS]
    return sorted(json.dumps(json.loads(r), sort_keys=True) for r in df.select(*columns).toJSON().collect())


def lake_tables(spark, lake: Path, snapshot_id: str = "snap") -> dict[str, list[str]]:
    """Every table's rows of one snapshot as sorted JSON lines, without the on-disk place."""
    return {t: _rows(spark, lake / t, snapshot_id) for t in TABLES if _committed(lake / t)}


def _committed(table: Path) -> bool:
    """A Delta table exists once its first commit does: a failed first write (a full disk) can
    leave data files and an empty ``_delta_log`` behind, which no reader takes for a table."""
    return any((table / "_delta_log").glob("*.json"))


def assert_same_tables(got: dict, expected: dict, ignore: tuple[str, ...] = ()) -> None:
    assert sorted(got) == sorted(expected)
    for table in expected:
        if table in ignore:
            continue
        assert got[table] == expected[table], f"table {table} differs from the clean run"

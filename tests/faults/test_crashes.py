"""kill -9 of the driver and of a Python worker at several points of ``offsetlake run``, then a
rerun: the lake must end exactly as after a clean run (no duplicated, missing or stale rows)."""

from __future__ import annotations

import os
import select
import signal
import time

import pytest

from tests.faults.runs import assert_same_tables, kill_tree, lake_tables, run_cli, start_run
from tests.faults.snapshots import copy_sample


def _wait_for_line(proc, words: str, timeout: float = 300) -> None:
    """Read the run's stderr until a progress line containing ``words``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], 1.0)
        if ready:
            line = proc.stderr.readline()
            if words in line:
                return
            if not line and proc.poll() is not None:
                break
    pytest.fail(f"the run never printed {words!r} (exit {proc.poll()})")


def _descendants(pid: int) -> list[tuple[int, str]]:
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            with open(f"/proc/{parent}/task/{parent}/children") as f:
                children = [int(c) for c in f.read().split()]
        except OSError:
            continue
        for child in children:
            try:
                with open(f"/proc/{child}/cmdline", "rb") as f:
                    cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            found.append((child, cmdline))
            todo.append(child)
    return found


def _kill_python_worker(proc, timeout: float = 120) -> bool:
    """SIGKILL one PySpark Python worker of the run (a process the test started, by its id)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        workers = [pid for pid, cmd in _descendants(proc.pid)
                   if "pyspark.daemon" in cmd or "pyspark.worker" in cmd]
        if workers:
            os.kill(workers[-1], signal.SIGKILL)
            return True
        time.sleep(0.05)
    return False


# (where, what is killed): the progress lines of jobs.stages.pipeline mark the stages
POINTS = [("ingest:", "driver", 1.0), ("decode:", "driver", 0.5), ("replay:", "driver", 2.0),
          ("decode:", "worker", 0.0), ("replay:", "worker", 0.0)]


@pytest.mark.parametrize("line, target, delay", POINTS,
                         ids=[f"{t}-during-{w.rstrip(':')}" for w, t, _ in POINTS])
def test_kill_9_then_rerun_gives_the_clean_tables(tmp_path, spark, clean, line, target, delay):
    snapshot = copy_sample(tmp_path)
    lake = tmp_path / "lake"
    proc = start_run(snapshot, lake)
    try:
        _wait_for_line(proc, line)
        time.sleep(delay)
        if target == "driver":
            os.kill(proc.pid, signal.SIGKILL)
        else:
            assert _kill_python_worker(proc), "no Python worker appeared"
        proc.wait(timeout=300)
    finally:
        kill_tree(proc)
    assert proc.returncode != 0, "the run finished before it could be killed"
    done = run_cli(snapshot, lake)
    assert done.returncode == 0, done.stderr[-3000:]
    assert_same_tables(lake_tables(spark, lake), clean)

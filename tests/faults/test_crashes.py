"""kill -9 of the driver and of a Python worker at several points of ``offsetlake run``, then a
rerun (the same command, in the suite's session: ``rerun_here``): the lake must end exactly as
after a clean run (no duplicated, missing or stale rows)."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time

import pytest

from tests.faults.memory import children as process_children
from tests.faults.runs import assert_same_tables, kill_tree, lake_tables, rerun_here, start_run
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
        children = process_children(todo.pop())
        for child in children:
            try:
                with open(f"/proc/{child}/cmdline", "rb") as f:
                    cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            found.append((child, cmdline))
            todo.append(child)
    return found


def _kill_python_workers(proc, timeout: float = 120) -> int:
    """SIGKILL every PySpark Python process of the run (daemon and workers: processes the test
    started, found by their parent chain), again and again until the run ends: a task running
    Python then fails, whichever worker it had. Returns how many processes were killed."""
    deadline, killed = time.monotonic() + timeout, 0
    while time.monotonic() < deadline and proc.poll() is None:
        for pid, cmd in _descendants(proc.pid):
            if "pyspark.daemon" in cmd or "pyspark.worker" in cmd:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
        time.sleep(0.02)
    return killed


# (where, what is killed): the progress lines of jobs.stages.pipeline mark the stages. Python
# workers run while the segments are read and decoded (from "ingest:") and while groups are
# replayed (after "replay:").
POINTS = [("ingest:", "driver", 1.0), ("decode:", "driver", 0.5), ("replay:", "driver", 2.0),
          ("ingest:", "worker", 0.0), ("replay:", "worker", 0.0)]


@pytest.mark.parametrize("line, target, delay", POINTS,
                         ids=[f"{t}-during-{w.rstrip(':')}" for w, t, _ in POINTS])
def test_kill_9_then_rerun_gives_the_clean_tables(tmp_path, spark, clean, line, target, delay):
    snapshot = copy_sample(tmp_path)
    lake = tmp_path / "lake"
    # The sample is small enough to be read and replayed in the driver, which starts no Python
    # worker; the worker cases make the executors do it (ingest.local_bytes = 0).
    proc = start_run(snapshot, lake, **({} if target == "driver" else
                                        {"OFFSETLAKE_INGEST__LOCAL_BYTES": "0"}))
    try:
        _wait_for_line(proc, line)
        time.sleep(delay)
        if target == "driver":
            os.kill(proc.pid, signal.SIGKILL)
        else:
            assert _kill_python_workers(proc) > 0, "no Python worker appeared"
        proc.wait(timeout=300)
    finally:
        kill_tree(proc)
    assert proc.returncode != 0, "the run finished before it could be killed"
    done = rerun_here(snapshot, lake)
    assert done.returncode == 0, done.stderr[-3000:]
    assert_same_tables(lake_tables(spark, lake), clean)

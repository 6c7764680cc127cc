"""Peak resident memory of a process tree (a CLI run: its driver JVM and Python workers),
sampled from /proc, since RUSAGE_CHILDREN cannot add up processes alive at the same time."""

from __future__ import annotations

import os
import subprocess
import threading
import time


def children(pid: int) -> list[int]:
    """Children of every thread of ``pid``: the JVM starts Python workers from its task threads,
    and ``/proc/PID/task/TID/children`` lists only the children of that one thread."""
    found: list[int] = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found += [int(c) for c in f.read().split()]
        except OSError:
            continue
    return found


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_kib(root: int) -> int:
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += _rss_kib(pid)
        todo.extend(children(pid))
    return total


def run_measured(cmd: list[str], interval: float = 0.2, **kwargs) -> tuple[subprocess.CompletedProcess, int]:
    """Run ``cmd`` to completion; returns (completed process, peak tree RSS in KiB)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)
    peak = [0]

    def sample():
        while proc.poll() is None:
            peak[0] = max(peak[0], tree_rss_kib(proc.pid))
            time.sleep(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    sampler.join()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err), peak[0]

"""Peak resident memory of a process tree (a CLI run: its driver JVM and Python workers),
sampled from /proc, since RUSAGE_CHILDREN cannot add up processes alive at the same time."""

from __future__ import annotations

import subprocess
import threading
import time


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


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
        todo.extend(_children(pid))
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

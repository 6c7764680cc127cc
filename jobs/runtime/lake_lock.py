"""One writing job per lake at a time.

Every table is replaced per snapshot id (``replaceWhere``), but the tables are not partitioned, so
two jobs writing different snapshots into one lake at once would conflict inside Delta's
optimistic commit, or both try to create a table: whichever lost would fail half-way. Instead a
writing job holds an exclusive ``flock`` on ``<lake>/.offsetlake.lock`` for its whole run; a second
one is refused at once, before it touches anything. The kernel drops the lock when the process
dies (even ``kill -9``), so a crash never leaves the lake locked.

Scope: one machine, a local or POSIX-locking filesystem (the ``local[*]`` deployments this project
targets); a lake on object storage needs the same rule from the scheduler.
"""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Iterator

LOCK_NAME = ".offsetlake.lock"


class LakeBusyError(RuntimeError):
    """Another process holds the lake's write lock."""


@contextmanager
def lake_write_lock(lake: Path, job: str) -> Iterator[None]:
    """Hold the lake's write lock for the ``with`` block, or raise :class:`LakeBusyError`."""
    lake.mkdir(parents=True, exist_ok=True)
    fd = os.open(lake / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another job"
            raise LakeBusyError(f"lake {lake} is being written by {holder}; "
                                "run again when it has finished") from None
        try:                # who holds it, for the refusal message; best effort on a full disk
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"offsetlake {job} (pid {os.getpid()})".encode(), 0)
        except OSError:
            pass
        yield
    finally:
        os.close(fd)        # closing releases the lock

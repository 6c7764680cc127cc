"""Exit codes shared by the commands, and the one-line answers to inputs that cannot be read.

A person reads these: each condition is one plain line on stderr (``offsetlake run: PATH: ...``)
and its own exit code, listed in every command's ``--help`` (:data:`EXIT_CODES_HELP`). Cheap to
import: the segment listing is imported only when a directory has to be searched.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

EXIT_OK = 0
EXIT_FAILED = 1          # ran, but did not reconcile, or a file could not be read
EXIT_USAGE = 2           # bad options (argparse's own code)
EXIT_NO_PATH = 3         # an input path does not exist
EXIT_EMPTY = 4           # an input directory is empty
EXIT_NO_SEGMENTS = 5     # an input holds nothing to read (no .log segment, no Delta table)
EXIT_LAKE_STORAGE = 6    # the lake cannot be written (no space left, read-only, permissions)
EXIT_LAKE_BUSY = 7       # another offsetlake job is writing the same lake
EXIT_FINDINGS = 8        # the audit found findings at or above --fail-on
EXIT_LAKE_CONFLICT = 9   # the snapshot cannot join the lake (incremental lakes; nothing written)

EXIT_CODES_HELP = """\
exit codes:
  0  done
  1  done, but the counts did not reconcile, or a file could not be read
  2  bad options
  3  an input path does not exist
  4  an input directory is empty
  5  an input holds nothing to read (no __consumer_offsets .log segment, no Delta table)
  6  the lake cannot be written (no space left on device, read-only, permissions)
  7  another offsetlake job is writing the same lake (it is left untouched)
  8  the audit found findings at or above --fail-on (audit, run --audit)
  9  the snapshot cannot join the lake, nothing was written: another cluster, older than
     the lake's newest, other bytes at an offset the lake holds, or a lake of the other kind
     (incremental or full)"""


def fail(prog: str, message: str, code: int) -> int:
    """Print ``offsetlake PROG: message`` on stderr and return ``code``."""
    print(f"offsetlake {prog}: {message}", file=sys.stderr)
    return code


def _is_capture(path: Path) -> bool:
    return (path / "manifest.json").is_file()


def check_inputs(prog: str, paths: list[str], *, captures: bool = True) -> int | None:
    """None if every path can be read as a snapshot, else the exit code after saying why."""
    from decoders.log import list_segments

    for text in paths:
        path = Path(text)
        if not path.exists():
            return fail(prog, f"{text}: no such file or directory", EXIT_NO_PATH)
        if path.is_file() or (captures and _is_capture(path)):
            continue
        try:
            if not any(path.iterdir()):
                return fail(prog, f"{text}: empty directory, nothing to read", EXIT_EMPTY)
            found = list_segments(path)
        except OSError as exc:
            return fail(prog, f"{text}: {exc.strerror or exc}", EXIT_FAILED)
        if not found:
            return fail(prog, f"{text}: no __consumer_offsets segment files (*.log) in it",
                        EXIT_NO_SEGMENTS)
    return None


_STORAGE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM}
_STORAGE_WORDS = ("No space left on device", "Disk quota exceeded", "Read-only file system")


def storage_error(exc: BaseException) -> str | None:
    """A one-line description if ``exc`` (or a cause, or the JVM error it wraps) says the lake's
    storage refused a write, else None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in _STORAGE_ERRNOS:
            return os.strerror(exc.errno)
        text = str(exc)
        for words in _STORAGE_WORDS:
            if words in text:
                return words
        exc = exc.__cause__ or exc.__context__
    return None


def write_lake(prog: str, lake: Path, job) -> int:
    """Run ``job()`` (returns an exit code) holding the lake's write lock; a busy lake or a
    storage refusal becomes one line and its exit code instead of a traceback."""
    from jobs.runtime.lake_lock import LakeBusyError, lake_write_lock

    try:
        with lake_write_lock(Path(lake), prog):
            return job()
    except LakeBusyError as exc:
        return fail(prog, str(exc), EXIT_LAKE_BUSY)
    except Exception as exc:  # noqa: BLE001 - only storage refusals are answered here
        reason = storage_error(exc)
        if reason is None:
            raise
        return fail(prog, f"cannot write the lake {lake}: {reason}; tables keep their last "
                          "committed contents, run again once the storage is fixed",
                    EXIT_LAKE_STORAGE)


def small_snapshot(cfg, requested: str | None) -> bool:
    """Whether the snapshot a lake command reads (``requested``, else the last in the lake) is one
    ``offsetlake run`` would read in the driver: its ``raw_records`` files, which hold its segments'
    bytes, at most ``ingest.local_bytes``. Its job is short then (C1 only: seconds less). Asked of
    the Delta log, before the session starts; False when the log cannot tell."""
    from jobs.lake.delta import RAW_RECORDS, logged_snapshot_bytes, logged_snapshot_ids
    from jobs.stages.segment_rows import ReadLimits

    from jobs.lake.snapshot_views import is_incremental

    logged = logged_snapshot_ids(cfg.lake_path, RAW_RECORDS) or []
    if is_incremental(cfg.lake_path):
        # A snapshot's view spans the records of every snapshot up to it: all of them, at most.
        sizes = [logged_snapshot_bytes(cfg.lake_path, RAW_RECORDS, sid) for sid in logged]
        size = None if None in sizes else sum(sizes)
    else:
        snapshot_id = requested or (logged or [None])[-1]
        if snapshot_id is None:
            return False
        size = logged_snapshot_bytes(cfg.lake_path, RAW_RECORDS, snapshot_id)
    return size is not None and 0 < size <= ReadLimits.from_settings(cfg.ingest).local_bytes


def open_snapshot(prog: str, cfg, requested: str | None):
    """(spark, snapshot_id, every snapshot id) of a lake's snapshot to read: ``requested``, or the
    last id in ``raw_records``; an int exit code, said on stderr, when the lake has none."""
    from jobs.lake.views import lake_tables, snapshot_ids
    from jobs.runtime.session import get_spark

    if not lake_tables(cfg.lake_path):
        return fail(prog, f"no Delta tables in {cfg.lake_path}; run `offsetlake run` first",
                    EXIT_NO_SEGMENTS)
    spark = get_spark(cfg, app_name=f"offsetlake-{prog}",
                      short=small_snapshot(cfg, requested))
    snapshots = snapshot_ids(spark, cfg.lake_path)
    snapshot_id = requested or (snapshots or [None])[-1]
    if snapshot_id is None:
        return fail(prog, f"no snapshot in {cfg.lake_path}/raw_records", EXIT_NO_SEGMENTS)
    return spark, snapshot_id, snapshots

"""``offsetlake dump`` on several cores: one segment file per worker process, output in order.

Each worker renders one whole segment (:func:`decoders.dump.dump_lines` or the text lines) into a
temporary file and returns its path and tally; the parent copies the files to the output in the
order the segments were listed, so the bytes are exactly those of a single-process dump. Memory
stays that of one batch per worker; temporary disk holds the rendered segments not yet copied
(copying is much faster than rendering, so usually one per worker).
"""

from __future__ import annotations

import errno
import multiprocessing
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from decoders.log import SegmentFile, list_segments


@dataclass(frozen=True)
class _Job:
    segment: SegmentFile
    fmt: str
    groups: frozenset
    types: frozenset
    directory: str


def _render(job: _Job) -> tuple[str, dict]:
    from decoders.dump import dump_lines, dump_objects, text_line, write_lines

    tally: dict = {}
    if job.fmt == "jsonl":
        lines = dump_lines([job.segment], set(job.groups), set(job.types), tally)
    else:
        lines = (text_line(o) for o in dump_objects([job.segment], set(job.groups), set(job.types), tally))
    fd, path = tempfile.mkstemp(dir=job.directory, suffix=".part")
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as out:
        write_lines(lines, out)
    return path, tally


def _copy(part, stream) -> None:
    """The file's bytes to the stream: ``sendfile`` (no copy through this process) when the
    stream is a real file descriptor, else a buffered copy."""
    try:
        out = stream.fileno()
    except (AttributeError, OSError, ValueError):
        shutil.copyfileobj(part, stream, 1 << 20)
        return
    stream.flush()
    size, sent = os.fstat(part.fileno()).st_size, 0
    try:
        while sent < size:
            done = os.sendfile(out, part.fileno(), sent, size - sent)
            if done == 0:
                break
            sent += done
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOSYS) or sent:
            raise
        shutil.copyfileobj(part, stream, 1 << 20)


def workers_for(segments: list[SegmentFile], requested: int | None = None) -> int:
    cores = requested or len(os.sched_getaffinity(0))
    return max(1, min(cores, len(segments)))


def dump_parts(paths: list[str], fmt: str, groups, types, tally: dict,
               workers: int | None = None) -> Iterator[Callable]:
    """For each segment in order, a function that copies its rendered lines to a binary stream
    (and adds its counts to ``tally``)."""
    segments = list_segments(paths)
    directory = tempfile.mkdtemp(prefix="offsetlake-dump-")
    jobs = [_Job(s, fmt, frozenset(groups or ()), frozenset(types or ()), directory) for s in segments]
    context = multiprocessing.get_context("fork")
    try:
        with context.Pool(workers_for(segments, workers)) as pool:
            for path, counts in pool.imap(_render, jobs):
                for key, value in counts.items():
                    tally[key] = tally.get(key, 0) + value

                def copy(stream, path=path):
                    with open(path, "rb") as part:
                        _copy(part, stream)
                    os.unlink(path)
                yield copy
    finally:
        shutil.rmtree(directory, ignore_errors=True)

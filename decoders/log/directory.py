"""Find the segment files of ``__consumer_offsets`` in a log dir, a partition dir, or a file.

A partition directory ``__consumer_offsets-N/`` holds ``<20-digit base offset>.log`` segments and
files that are not records (``.index``, ``.timeindex``, ``.txnindex``, ``.snapshot``,
``leader-epoch-checkpoint``, ``partition.metadata``) or are in-flight artefacts (``.deleted``,
``.cleaned``): only the ``.log`` files are read.

``.swap`` policy. The log cleaner writes ``X.log.cleaned``, and only once it is complete and
flushed renames it ``X.log.swap``; it then deletes the segments it replaces (renaming them
``.deleted``) and finally renames the swap to ``X.log``. A crash in between leaves a *complete*
``.swap`` which Kafka's recovery (``LogLoader``) installs: it drops every segment whose base offset
lies in the swap's offset range ``[X, next offset of the swap)`` (or equals ``X``) and renames the
swap. We read the directory the way the broker would serve it after that recovery: the ``.swap``
replaces those ``.log`` files, so no record is read twice and none is lost if the originals were
already renamed ``.deleted``. Partial ``.cleaned`` files are ignored.

Directories that are not ``__consumer_offsets-N`` (other topics, ``-delete``/``-future``/``-stray``
directories) are ignored when a whole log dir is given.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterable

from decoders.log.framing import ENTRY, open_window, walk_frames
from decoders.log.layout import MAGIC_V2

PARTITION_DIR = re.compile(r"^__consumer_offsets-(\d+)$")
SEGMENT_NAME = re.compile(r"^(\d+)\.log$")
SWAP_NAME = re.compile(r"^(\d+)\.log\.swap$")
_V2_LAST_OFFSET_DELTA = slice(23, 27)      # see layout.BATCH_V2_FIELDS


@dataclass(frozen=True, slots=True)
class SegmentFile:
    path: str
    partition: int | None
    base_offset: int | None     # from the file name; None for a .log file not named by offset
    size: int


def parse_partition(directory: str | os.PathLike) -> int | None:
    """N of a ``__consumer_offsets-N`` directory name, else None."""
    match = PARTITION_DIR.match(Path(directory).name)
    return int(match.group(1)) if match else None


def next_offset(path: str | os.PathLike) -> int | None:
    """One past the last offset in a segment (header walk only), None if it holds no entry."""
    fd, window = open_window(path)
    try:
        last = None
        for frame in walk_frames(window):
            if frame.kind != ENTRY:
                break
            probe = window.read(frame.position, _V2_LAST_OFFSET_DELTA.stop)
            if probe[16] == MAGIC_V2 and len(probe) == _V2_LAST_OFFSET_DELTA.stop:
                entry_last = frame.base_offset + int.from_bytes(
                    probe[_V2_LAST_OFFSET_DELTA], "big", signed=True)
            else:                   # legacy: a wrapper's offset is its last inner offset
                entry_last = frame.base_offset
            last = entry_last if last is None else max(last, entry_last)
        return None if last is None else last + 1
    finally:
        os.close(fd)


def partition_segments(directory: str | os.PathLike,
                       partition: int | None = None) -> list[SegmentFile]:
    """The segments to read in one partition directory, in base-offset order (``.swap`` policy in
    the module docstring). ``partition`` overrides the number parsed from the directory name."""
    directory = Path(directory)
    if partition is None:
        partition = parse_partition(directory)
    logs: dict[int, Path] = {}
    swaps: dict[int, Path] = {}
    for entry in os.scandir(directory):
        if not entry.is_file():
            continue
        if match := SEGMENT_NAME.match(entry.name):
            logs[int(match.group(1))] = Path(entry.path)
        elif match := SWAP_NAME.match(entry.name):
            swaps[int(match.group(1))] = Path(entry.path)
    for base, swap in swaps.items():
        swap_end = next_offset(swap)
        covered_end = base if swap_end is None else swap_end
        for replaced in [b for b in logs if b == base or base <= b < covered_end]:
            del logs[replaced]
    chosen = {**logs, **swaps}
    return [SegmentFile(str(chosen[base]), partition, base, chosen[base].stat().st_size)
            for base in sorted(chosen)]


def _single_file(path: Path) -> SegmentFile:
    match = SEGMENT_NAME.match(path.name) or SWAP_NAME.match(path.name)
    return SegmentFile(str(path), parse_partition(path.parent),
                       int(match.group(1)) if match else None, path.stat().st_size)


def list_segments(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[SegmentFile]:
    """Segments from a ``.log`` file, a partition dir, or a log dir of ``__consumer_offsets-*``
    dirs (any mix, given as one path or several), in the order given; within a directory by
    partition number, then base offset."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found: list[SegmentFile] = []
    for path in map(Path, paths):
        if path.is_file():
            found.append(_single_file(path))
        elif parse_partition(path) is not None or any(
                SEGMENT_NAME.match(p.name) for p in path.iterdir()):
            found.extend(partition_segments(path))
        else:
            for child in sorted(path.iterdir(), key=lambda p: (parse_partition(p) or 0, p.name)):
                if child.is_dir() and parse_partition(child) is not None:
                    found.extend(partition_segments(child))
    return found

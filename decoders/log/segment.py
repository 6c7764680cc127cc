"""Streaming readers over ``.log`` segment files, with bounded memory.

Memory is one read-ahead window (1 MiB) plus one entry: a file is never read whole, and a declared
length is checked against the bytes actually left in the file (and against ``max_batch_bytes``)
before anything is allocated for it.

Byte-range splitting (for Spark executors): ``iter_segment(path, start, end)`` yields exactly the
items whose entry *starts* in ``[start, end)``. Boundaries come from a header walk from byte 0
(:mod:`decoders.log.framing`), which every range repeats, so all ranges agree on them: over
consecutive ranges covering the file every batch is yielded exactly once, none twice, none skipped.

Damage (a bad CRC, a corrupted length, garbage) is one BatchError spanning exactly the bytes up to
the next entry whose checksum verifies, where reading resumes; batches read after such a
resynchronisation have ``recovered=True``. Damage nothing verifiable follows is a terminal item
(TruncatedTail or an ``invalid_length`` BatchError) that only the range containing its start reports.

Example::

    for item in iter_segment("00000000000000000000.log"):
        if isinstance(item, RecordBatch):
            ...
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from decoders.errors import (BatchTooLargeError, CorruptBatchError, DecodeError,
                             InvalidLengthError)
from decoders.log.batch import decode_entry
from decoders.log.compression import DEFAULT_MAX_DECOMPRESSED
from decoders.log.directory import SegmentFile, list_segments, partition_segments
from decoders.log.framing import (CORRUPT_LENGTH, DAMAGED, TRUNCATED, FileWindow, Frame,
                                  open_window, walk_frames)
from decoders.log.layout import HEADER_PROBE, MAGIC_OFFSET
from decoders.log.types import RAW_CAP, BatchError, RecordBatch, SegmentItem, TruncatedTail

DEFAULT_MAX_BATCH_BYTES = 64 * 1024 * 1024

__all__ = ["DEFAULT_MAX_BATCH_BYTES", "SegmentFile", "batch_positions", "iter_partition_dir",
           "iter_segment", "list_segments", "plan_ranges"]


def iter_segment(path: str | os.PathLike, start: int = 0, end: int | None = None, *,
                 max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
                 max_decompressed: int = DEFAULT_MAX_DECOMPRESSED) -> Iterator[SegmentItem]:
    """RecordBatch, BatchError and TruncatedTail items of the entries starting in [start, end).

    ``end=None`` means the end of the file. Never raises for bad content: corrupt entries become
    BatchError, an incomplete tail a TruncatedTail. ``max_batch_bytes`` bounds the bytes read for one
    entry and ``max_decompressed`` its decompressed records (both default 64 MiB)."""
    fd, window = open_window(path)
    try:
        stop = window.size if end is None else min(end, window.size)
        for frame in walk_frames(window):
            if frame.position >= stop:
                return
            if frame.position >= start:
                yield _read_item(window, frame, max_batch_bytes, max_decompressed)
    finally:
        os.close(fd)


def batch_positions(path: str | os.PathLike) -> list[int]:
    """File positions of every item :func:`iter_segment` would yield (the last may be a terminal
    TruncatedTail/invalid-length item), from a walk that reads only the 12-byte prefixes."""
    fd, window = open_window(path)
    try:
        return [frame.position for frame in walk_frames(window)]
    finally:
        os.close(fd)


def plan_ranges(size: int, range_bytes: int) -> list[tuple[int, int]]:
    """Consecutive ``[start, end)`` byte ranges of at most ``range_bytes`` covering ``size`` bytes:
    hand one to each task and call ``iter_segment(path, start, end)``."""
    if range_bytes <= 0:
        raise ValueError("range_bytes must be positive")
    return [(start, min(start + range_bytes, size)) for start in range(0, size, range_bytes)]


def iter_partition_dir(directory: str | os.PathLike, partition: int | None = None,
                       **limits) -> Iterator[tuple[SegmentFile, SegmentItem]]:
    """(segment, item) for every segment of one partition directory, in base-offset order.

    Only ``.log`` files (or a completed ``.swap`` replacing some, see :mod:`directory`) are read;
    ``partition`` overrides the number parsed from ``__consumer_offsets-N``."""
    for segment in partition_segments(directory, partition):
        for item in iter_segment(segment.path, **limits):
            yield segment, item


def _raw(window: FileWindow, position: int, length: int) -> tuple[bytes, bool]:
    kept = min(length, RAW_CAP)
    return window.read(position, kept), kept < length


def _probe_magic(window: FileWindow, position: int) -> int | None:
    probe = window.read(position, HEADER_PROBE)
    if len(probe) < HEADER_PROBE:
        return None
    return probe[MAGIC_OFFSET] - 256 if probe[MAGIC_OFFSET] > 127 else probe[MAGIC_OFFSET]


def _error(window: FileWindow, frame: Frame, error: DecodeError,
           entry: bytes | None = None) -> BatchError:
    if entry is None:
        raw, capped = _raw(window, frame.position, frame.length)
    else:
        raw, capped = entry[:RAW_CAP], len(entry) > RAW_CAP
    return BatchError(file_position=frame.position, length=frame.length, reason=error.reason,
                      message=str(error), raw=raw, raw_truncated=capped,
                      base_offset=frame.base_offset,
                      magic=_probe_magic(window, frame.position), recovered=frame.recovered)


def _tail(window: FileWindow, frame: Frame, present: int | None = None) -> TruncatedTail:
    length = frame.length if present is None else present
    raw, capped = _raw(window, frame.position, length)
    return TruncatedTail(file_position=frame.position, length=length, raw=raw,
                         raw_truncated=capped, declared_length=frame.declared_length,
                         recovered=frame.recovered)


def _damaged(window: FileWindow, frame: Frame, max_batch_bytes: int,
             max_decompressed: int) -> BatchError | SegmentItem:
    """Why a damaged span could not be read: its own decoding error when its declared length is
    its span (the length was right, the content is not), else the length that did not frame it."""
    declared, end = frame.declared_length, frame.position + frame.length
    if declared != frame.length:
        what = ("no length" if declared is None else
                f"length {declared - 12}" if declared >= 12 + 14 else
                f"length {declared - 12}, below the minimum")
        after = ("nothing after it verifies up to the end of the file" if end == window.size
                 else f"the next entry that verifies starts at file position {end} "
                      f"({frame.length} byte(s) later), where reading resumed")
        return _error(window, frame, InvalidLengthError(f"entry declares {what}; {after}",
                                                        stage="segment"))
    if frame.length > max_batch_bytes:
        return _error(window, frame, CorruptBatchError(
            f"entry of {frame.length} byte(s) does not verify (checksum)", stage="segment"))
    item = _read_entry(window, frame, max_decompressed)
    if isinstance(item, RecordBatch):     # cannot happen: the walk's checksum failed
        return _error(window, frame, CorruptBatchError(
            "entry decoded although its checksum did not verify", stage="segment"))
    return item


def _read_entry(window: FileWindow, frame: Frame, max_decompressed: int) -> SegmentItem:
    entry = window.read(frame.position, frame.length)
    if len(entry) < frame.length:          # the file shrank under us (active segment)
        return _tail(window, frame, present=len(entry))
    try:
        batch = decode_entry(entry, frame.position, max_decompressed=max_decompressed)
    except DecodeError as exc:
        return _error(window, frame, exc, entry)
    batch.recovered = frame.recovered
    return batch


def _read_item(window: FileWindow, frame: Frame, max_batch_bytes: int,
               max_decompressed: int) -> SegmentItem:
    if frame.kind == TRUNCATED:
        return _tail(window, frame)
    if frame.kind == CORRUPT_LENGTH:
        return _error(window, frame, InvalidLengthError(
            f"entry length {frame.declared_length} below the minimum; "
            f"the remaining {frame.length} byte(s) cannot be framed", stage="segment"))
    if frame.kind == DAMAGED:
        return _damaged(window, frame, max_batch_bytes, max_decompressed)
    if frame.length > max_batch_bytes:
        return _error(window, frame, BatchTooLargeError(
            f"entry of {frame.length} byte(s) exceeds max_batch_bytes={max_batch_bytes}",
            stage="segment"))
    return _read_entry(window, frame, max_decompressed)

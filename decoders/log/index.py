"""The batch index of a snapshot: where each entry of each segment file is, and what identifies it,
from a header walk alone (no record is parsed).

A record at (partition, offset) of ``__consumer_offsets`` never changes; the log cleaner only
removes records. It rewrites a batch it removes records from into a new batch with the same base
offset and, for magic 2, the same last offset (``lastOffsetDelta`` is kept, and an emptied batch
that must keep producer state stays as a batch of no records), but a new checksum. So an entry
is identified by ``(partition, base_offset, crc, length)``: two snapshots holding an entry with
the same identity hold the same bytes (the checksum covers everything after it but the leader
epoch, which the leader stamps), and a different checksum at a known base offset is a rewrite,
whose records are a subset of the original's.

Only entries the walk verified (:mod:`decoders.log.framing`) are indexed as :class:`BatchRef`;
a damaged or truncated span is an :class:`Unindexed` span, which a reader must read (and
quarantine) rather than skip::

    for item in index_segment(segment):
        if isinstance(item, BatchRef):
            ...
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from decoders.log.directory import SegmentFile
from decoders.log.framing import ENTRY, open_window, walk_frames
from decoders.log.layout import (BATCH_V2_HEADER, BATCH_V2_HEADER_SIZE, LEGACY_HEADER,
                                 LEGACY_HEADER_SIZE, MAGIC_OFFSET, MAGIC_V2)

# Field positions in the unpacked headers (decoders.log.layout).
_V2_CRC, _V2_LAST_DELTA, _V2_RECORDS = 4, 6, 12
_LEGACY_CRC = 2


@dataclass(frozen=True, slots=True)
class BatchRef:
    """One verified entry: a magic-2 batch or a top-level legacy message."""

    partition: int | None
    base_offset: int          # the prefix's offset (a legacy wrapper's is its last inner offset)
    last_offset: int          # magic 2: base + lastOffsetDelta; legacy: the prefix's offset
    crc: int                  # the stored checksum (CRC-32C for magic 2, CRC-32 for legacy)
    length: int               # bytes on disk, the 12-byte prefix included
    magic: int
    records: int | None       # magic 2: recordsCount (0 for an emptied batch); legacy: None
    path: str
    position: int

    @property
    def identity(self) -> tuple:
        """What says two snapshots hold the same bytes here."""
        return (self.partition, self.base_offset, self.crc, self.length)


@dataclass(frozen=True, slots=True)
class Unindexed:
    """A span the walk could not verify (damage, a truncated tail): read it, never skip it."""

    partition: int | None
    path: str
    position: int
    length: int
    kind: str                 # decoders.log.framing's frame kind: damaged, truncated, ...


def index_segment(segment: SegmentFile) -> Iterator[BatchRef | Unindexed]:
    """Every frame of one segment file, in file order."""
    fd, window = open_window(segment.path)
    try:
        for frame in walk_frames(window):
            if frame.kind != ENTRY:
                yield Unindexed(segment.partition, segment.path, frame.position, frame.length,
                                frame.kind)
                continue
            head = window.read(frame.position, BATCH_V2_HEADER_SIZE)
            if head[MAGIC_OFFSET] == MAGIC_V2:
                header = BATCH_V2_HEADER.unpack_from(head)
                yield BatchRef(segment.partition, frame.base_offset,
                               frame.base_offset + header[_V2_LAST_DELTA], header[_V2_CRC],
                               frame.length, MAGIC_V2, header[_V2_RECORDS], segment.path,
                               frame.position)
            else:
                header = LEGACY_HEADER.unpack_from(head[:LEGACY_HEADER_SIZE])
                yield BatchRef(segment.partition, frame.base_offset, frame.base_offset,
                               header[_LEGACY_CRC], frame.length, head[MAGIC_OFFSET], None,
                               segment.path, frame.position)
    finally:
        os.close(fd)


def index_segments(segments: Iterable[SegmentFile]) -> Iterator[BatchRef | Unindexed]:
    """:func:`index_segment` over several files, in the order given."""
    for segment in segments:
        yield from index_segment(segment)


def spans(items: Iterable[BatchRef | Unindexed]) -> list[tuple[str, int | None, int, int]]:
    """``(path, partition, start, end)`` byte spans covering ``items`` (in file order), adjacent
    ones of the same file merged: what a reader must read to see exactly these entries.

    >>> a = BatchRef(0, 0, 1, 7, 100, 2, 2, "s.log", 0)
    >>> b = BatchRef(0, 2, 2, 8, 80, 2, 1, "s.log", 100)
    >>> c = Unindexed(0, "s.log", 300, 20, "truncated")
    >>> spans([a, b, c])
    [('s.log', 0, 0, 180), ('s.log', 0, 300, 320)]
    """
    merged: list[tuple[str, int | None, int, int]] = []
    for item in items:
        start, end = item.position, item.position + item.length
        if merged and merged[-1][0] == item.path and merged[-1][3] == start:
            path, partition, first, _ = merged[-1]
            merged[-1] = (path, partition, first, end)
        else:
            merged.append((item.path, item.partition, start, end))
    return merged

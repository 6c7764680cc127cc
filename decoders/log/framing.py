"""The header walk: find entry boundaries in a ``.log`` file, trusting a length only once the
entry's checksum proves it.

A segment is a plain concatenation of entries, each ``offset:int64 | length:int32 | length bytes``,
so boundaries follow from the lengths (seek by length). The walk is the single source of truth
for framing: the reader and every byte-range split use it, starting from the file's first byte, so
all of them agree on where entries start.

An entry whose checksum does not verify over its declared span (bad CRC, a corrupted length, an
unknown magic, garbage) is *damaged*: the walk resynchronises at the next position where a
verified entry starts (:func:`decoders.log.resync.find_next_entry`), and everything in between is
one ``DAMAGED`` frame. Entries after a resynchronisation at any other position than the damaged
entry's declared end are marked ``recovered``: a reader that trusts lengths alone, as Kafka's
DumpLogSegments does, would have lost them.

When nothing after the damage verifies, the walk frames the rest by lengths alone, as it always
did, and ends at the first length that cannot frame an entry:

* ``DAMAGED``: the declared length fits the file (a bad checksum, an unknown magic): that span;
* ``TRUNCATED``: fewer than 12 bytes remain, or the declared entry runs past the end of the file
  (a crash, the active segment, or a hostile length such as 2**31-1: never allocated, only noted),
  terminal;
* ``CORRUPT_LENGTH``: the declared length is below the smallest possible entry (14 bytes),
  terminal: the rest of the file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from collections.abc import Iterator

from decoders.log.layout import LOG_OVERHEAD, MIN_ENTRY_LENGTH
from decoders.log.resync import check_entry, find_next_entry

ENTRY = "entry"
DAMAGED = "damaged"
TRUNCATED = "truncated"
CORRUPT_LENGTH = "corrupt_length"

WINDOW_BYTES = 1024 * 1024      # prefixes and small entries are served from one read-ahead window


@dataclass(frozen=True, slots=True)
class Frame:
    """``length`` = bytes the frame spans in the file; ``declared_length`` = what the prefix says
    (prefix included), None when not even a prefix is present."""

    position: int
    kind: str
    length: int
    declared_length: int | None
    base_offset: int | None
    recovered: bool = False      # after a resynchronisation in this file


class FileWindow:
    """Positional reads through a read-ahead window, so walking many small entries costs few
    system calls and memory stays at one window plus the largest entry being read."""

    def __init__(self, fd: int, size: int, window: int = WINDOW_BYTES):
        self.fd, self.size, self.window = fd, size, window
        self._start, self._buf = 0, b""

    def read(self, position: int, count: int) -> bytes:
        """Up to ``count`` bytes at ``position`` (fewer only if the file shrank meanwhile)."""
        offset = position - self._start
        if offset >= 0 and offset + count <= len(self._buf):
            return self._buf[offset:offset + count]
        if count > self.window:
            return os.pread(self.fd, count, position)
        self._start, self._buf = position, os.pread(self.fd, self.window, position)
        return self._buf[:count]


def walk_frames(window: FileWindow) -> Iterator[Frame]:
    """Every frame of the file from byte 0, ending with at most one terminal frame."""
    position, size = 0, window.size
    last_offset = None          # of the last verified entry: a resync must land after it
    recovered = False
    exhausted = False           # a scan found nothing verifiable up to the end of the file
    while position < size:
        check = check_entry(window, position)
        if check.ok:
            yield Frame(position, ENTRY, check.declared, check.declared, check.base_offset,
                        recovered)
            last_offset, position = check.last_offset, position + check.declared
            continue
        resume = None if exhausted else find_next_entry(window, position + 1, last_offset)
        if resume is None:
            exhausted = True
            frame = _unverified(position, size - position, check, recovered)
            yield frame
            position += frame.length
            continue
        yield Frame(position, DAMAGED, resume - position, check.declared, check.base_offset,
                    recovered)
        # Reading on where the damaged entry's own length pointed loses nothing; resuming anywhere
        # else is a resynchronisation a length-only reader could not have made.
        recovered = recovered or resume != position + (check.declared or 0)
        position = resume


def _unverified(position: int, remaining: int, check, recovered: bool) -> Frame:
    """Damage that nothing verifiable follows: framed by its own length while that fits the
    file (as a length-only reader would), else the rest of the file as one terminal frame."""
    declared, base_offset = check.declared, check.base_offset
    if declared is None or declared > remaining:
        return Frame(position, TRUNCATED, remaining, declared, base_offset, recovered)
    if declared - LOG_OVERHEAD < MIN_ENTRY_LENGTH:
        return Frame(position, CORRUPT_LENGTH, remaining, declared, base_offset, recovered)
    return Frame(position, DAMAGED, declared, declared, base_offset, recovered)


def open_window(path: str | os.PathLike) -> tuple[int, FileWindow]:
    """Open ``path`` read-only; returns the descriptor (caller closes it) and a window over it."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return fd, FileWindow(fd, os.fstat(fd).st_size)
    except BaseException:
        os.close(fd)
        raise

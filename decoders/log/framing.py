"""The header walk: find entry boundaries in a ``.log`` file by reading only length prefixes.

A segment is a plain concatenation of entries, each ``offset:int64 | length:int32 | length bytes``,
so boundaries follow from the lengths alone (seek by length). The walk is the single source of truth
for framing: the reader and every byte-range split use it, starting from the file's first byte, so
all of them agree on where entries start.

A walk ends at the first position where the prefix cannot frame an entry:

* ``TRUNCATED``: fewer than 12 bytes remain, or the declared entry runs past the end of the file
  (a crash, the active segment, or a hostile length such as 2**31-1: never allocated, only noted);
* ``CORRUPT_LENGTH``: the declared length is below the smallest possible entry (14 bytes).

Either way everything from that position to the end of the file is one terminal frame: nothing
after a corrupt length can be framed, so it is reported once, by whoever owns that position.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator

from decoders.log.layout import LOG_OVERHEAD, MIN_ENTRY_LENGTH, PREFIX

ENTRY = "entry"
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


class FileWindow:
    """Positional reads through a read-ahead window, so walking many small entries costs few
    system calls and memory stays at one window plus the largest entry being read."""

    def __init__(self, fd: int, size: int, window: int = WINDOW_BYTES):
        self.fd, self.size, self.window = fd, size, window
        self._start, self._buf = 0, b""

    def read(self, position: int, count: int) -> bytes:
        """Up to ``count`` bytes at ``position`` (fewer only if the file shrank meanwhile)."""
        offset = position - self._start
        if 0 <= offset and offset + count <= len(self._buf):
            return self._buf[offset:offset + count]
        if count > self.window:
            return os.pread(self.fd, count, position)
        self._start, self._buf = position, os.pread(self.fd, self.window, position)
        return self._buf[:count]


def walk_frames(window: FileWindow) -> Iterator[Frame]:
    """Every frame of the file from byte 0, ending with at most one terminal frame."""
    position, size = 0, window.size
    while position < size:
        remaining = size - position
        prefix = window.read(position, LOG_OVERHEAD)
        if len(prefix) < LOG_OVERHEAD:
            yield Frame(position, TRUNCATED, remaining, None, None)
            return
        base_offset, length = PREFIX.unpack(prefix)
        declared = length + LOG_OVERHEAD
        if length < MIN_ENTRY_LENGTH:
            yield Frame(position, CORRUPT_LENGTH, remaining, declared, base_offset)
            return
        if declared > remaining:
            yield Frame(position, TRUNCATED, remaining, declared, base_offset)
            return
        yield Frame(position, ENTRY, declared, declared, base_offset)
        position += declared


def open_window(path: str | os.PathLike) -> tuple[int, FileWindow]:
    """Open ``path`` read-only; returns the descriptor (caller closes it) and a window over it."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return fd, FileWindow(fd, os.fstat(fd).st_size)
    except BaseException:
        os.close(fd)
        raise

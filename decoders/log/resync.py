"""Is a well-formed entry at this position? And where does the next one start after damage?

The header walk (:mod:`decoders.log.framing`) trusts an entry's length only once the entry's own
checksum proves it: CRC-32C over bytes [21, end) for magic 2, CRC-32 over magic .. end for a
legacy message. A checksum over the declared span can only match if that span is the one the
producer wrote, so a corrupted length (huge, negative, off by a few bytes) is caught here.

After an entry that does not verify, :func:`find_next_entry` scans forward byte by byte for the
next position where a *resync candidate* starts. A candidate must pass every structural check a
real entry passes before its checksum is even computed (magic, length within the file, leader
epoch, attribute bits, offsets after the last good entry, a record count its offset span and its
bytes can hold), then the checksum. On random bytes the structural checks alone pass about once
in 2**20 positions and the checksum once in 2**32 of those, so a false resync is not a practical
concern; ``tests/test_log_resync.py`` tries it on noise.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

from decoders.log.crc import crc32, crc32c
from decoders.log.layout import (ATTR_COMPRESSION_MASK, BATCH_V2_HEADER, BATCH_V2_HEADER_SIZE,
                                 LEGACY_ATTR_COMPRESSION_MASK, LEGACY_CRC_START, LEGACY_HEADER,
                                 LEGACY_HEADER_SIZE, LEGACY_MIN_SIZE, LOG_OVERHEAD, MAGIC_OFFSET,
                                 MAGIC_V0, MAGIC_V1, MAGIC_V2, MIN_ENTRY_LENGTH, PREFIX,
                                 V2_CRC_START, V2_MIN_LENGTH)

CRC_CHUNK = 1024 * 1024          # large entries are checksummed piece by piece, never held whole
SCAN_CHUNK = 1024 * 1024
_V2_KNOWN_ATTRIBUTES = 0x7F       # bits 0-6 are defined (codec, timestamp type, txn, control, horizon)
_V2_MAX_CODEC = 4                 # zstd
_LEGACY_KNOWN_ATTRIBUTES = {MAGIC_V0: 0x07, MAGIC_V1: 0x0F}
_LEGACY_MAX_CODEC = 3             # lz4; zstd never existed for magic 0/1
_MIN_RECORD_BYTES = 7             # length, attributes, timestamp/offset deltas, key, value, headers
# Where a candidate may start: offset >= 0, length in [14, 2**31), magic 0, 1 or 2. A C-speed
# pre-filter, so runs of zeros or random bytes are skipped without a Python call per byte.
_CANDIDATE = re.compile(rb"(?=[\x00-\x7f].{7}(?!\x00\x00\x00[\x00-\x0d])[\x00-\x7f].{7}[\x00-\x02])",
                        re.DOTALL)


class EntryCheck(NamedTuple):
    """``ok``: the entry at ``position`` verifies. ``declared`` is the span its prefix announces
    (None if fewer than 12 bytes remain); ``last_offset`` the last offset it covers."""

    ok: bool
    declared: int | None
    base_offset: int | None
    last_offset: int | None = None


def _stream_crc(fd: int, start: int, end: int, fn) -> int:
    crc, position = 0, start
    while position < end:
        chunk = os.pread(fd, min(CRC_CHUNK, end - position), position)
        if not chunk:
            return -1                    # the file shrank: cannot verify
        crc = fn(chunk, crc)
        position += len(chunk)
    return crc


def _span_crc(window, start: int, end: int, fn) -> int:
    if end - start <= window.window:
        return fn(window.read(start, end - start))
    return _stream_crc(window.fd, start, end, fn)


def _v2_plausible(header, declared: int, after: int | None) -> bool:
    (base_offset, length, leader_epoch, _, _, attributes, last_delta, _, _, producer_id,
     producer_epoch, base_sequence, records_count) = header
    if length < V2_MIN_LENGTH or base_offset < 0 or leader_epoch < -1 or last_delta < 0:
        return False
    if attributes & ~_V2_KNOWN_ATTRIBUTES or attributes & ATTR_COMPRESSION_MASK > _V2_MAX_CODEC:
        return False
    if producer_id < -1 or producer_epoch < -1 or base_sequence < -1:
        return False
    if not 0 <= records_count <= last_delta + 1:
        return False
    if attributes & ATTR_COMPRESSION_MASK == 0 and \
            records_count * _MIN_RECORD_BYTES > declared - BATCH_V2_HEADER_SIZE:
        return False
    return after is None or base_offset > after


def _legacy_plausible(header, after: int | None) -> bool:
    offset, size, _, magic, attributes = header
    if size < LEGACY_MIN_SIZE[magic] or offset < 0:
        return False
    if attributes & ~_LEGACY_KNOWN_ATTRIBUTES[magic]:
        return False
    if attributes & LEGACY_ATTR_COMPRESSION_MASK > _LEGACY_MAX_CODEC:
        return False
    return after is None or offset > after


def check_entry(window, position: int, *, strict: bool = False,
                after: int | None = None) -> EntryCheck:
    """Does a verifiable entry start at ``position``? ``strict`` (resync candidates) adds the
    structural checks of the module docstring, with ``after`` the last offset read before."""
    remaining = window.size - position
    head = window.read(position, BATCH_V2_HEADER_SIZE)
    if len(head) < LOG_OVERHEAD:
        return EntryCheck(False, None, None)
    base_offset, length = PREFIX.unpack_from(head)
    declared = length + LOG_OVERHEAD
    fails = EntryCheck(False, declared, base_offset)
    if length < MIN_ENTRY_LENGTH or declared > remaining or len(head) <= MAGIC_OFFSET:
        return fails
    magic = head[MAGIC_OFFSET]
    if magic == MAGIC_V2:
        if length < V2_MIN_LENGTH:
            return fails
        header = BATCH_V2_HEADER.unpack_from(head)
        if strict and not _v2_plausible(header, declared, after):
            return fails
        computed = _span_crc(window, position + V2_CRC_START, position + declared, crc32c)
        last = base_offset + header[6]
        return EntryCheck(computed == header[4], declared, base_offset, last)
    if magic in (MAGIC_V0, MAGIC_V1) and len(head) >= LEGACY_HEADER_SIZE:
        header = LEGACY_HEADER.unpack_from(head)
        if strict and not _legacy_plausible(header, after):
            return fails
        computed = _span_crc(window, position + LEGACY_CRC_START, position + declared, crc32)
        # a wrapper's offset is its last inner offset (see decoders.log.legacy)
        return EntryCheck(computed == header[2], declared, base_offset, base_offset)
    return fails


def find_next_entry(window, start: int, after: int | None) -> int | None:
    """The first position >= ``start`` where a resync candidate verifies, else None."""
    position = start
    while position + LOG_OVERHEAD + MIN_ENTRY_LENGTH <= window.size:
        chunk = os.pread(window.fd, SCAN_CHUNK + MAGIC_OFFSET, position)
        for match in _CANDIDATE.finditer(chunk):
            if match.start() >= SCAN_CHUNK:
                break
            candidate = position + match.start()
            if check_entry(window, candidate, strict=True, after=after).ok:
                return candidate
        position += SCAN_CHUNK
    return None

"""Vectorised decoding of offset commits (record types 0 and 1) straight from Arrow buffers.

About 95% of ``__consumer_offsets`` is offset commits, so they get a columnar fast path; every
row it cannot decode *exactly* the way :func:`decoders.codec.decode_record` would is left to that
generic decoder (``handled`` is False). Layouts read here (wire-format.md a.1, b, c)::

    key    := type:int16 (0|1)  group:str16  topic:str16  partition:int32      (consumed exactly)
    v0, v2 := 0000|0002  offset:int64                metadata:str16  commitTimestamp:int64
    v1     := 0001       offset:int64                metadata:str16  commitTimestamp:int64
                                                                     expireTimestamp:int64
    v3     := 0003       offset:int64  leaderEpoch:int32  metadata:str16  commitTimestamp:int64
    v4     := 0004       offset:int64  leaderEpoch:int32  metadata:compact  commitTimestamp:int64
                         tags: 00 | 01 00 10 <topicId:16>
    str16  := int16 length N >= 0, N bytes UTF-8;  compact := uvarint(N+1) in 1-2 bytes, N bytes

Type 0 takes value v0 only (trunk's LegacyOffsetCommitValue); v2 of type 1 is v0's layout. A value
that is null is a tombstone. Rows outside this grammar (trailing bytes, other tags, longer varints,
negative lengths, invalid UTF-8, ...) are not handled, so the generic decoder reports them.

Why the bounds checks are cheap: positions only move forward (every length is checked to be
non-negative), so requiring the final position to equal the row's end proves that every read of
that row was inside it. Reads of rows that fail are clipped into the buffer and their results
discarded, so nothing ever indexes outside the buffer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

_EMPTY_UUID = np.zeros(16, np.uint8)


@dataclass(slots=True)
class OffsetCommitColumns:
    """Decoded columns, one entry per input row; values are meaningful only where ``handled``.

    Value fields (``value_version`` … ``topic_id``) are meaningful where ``handled`` and not
    ``is_tombstone``. ``leader_epoch``/``expire_timestamp`` hold the schema default -1 where the
    version lacks them; ``topic_id`` (16 bytes per row) is all zero for v4 rows without the tag,
    as the generic decoder's default is, and ``has_topic_id`` marks the v4 rows. Arrow string
    columns are already null where not handled; :meth:`to_arrow` gives fully null-masked arrays.
    """

    handled: np.ndarray
    record_type: np.ndarray
    group: pa.Array
    topic: pa.Array
    partition: np.ndarray
    is_tombstone: np.ndarray
    value_version: np.ndarray
    offset: np.ndarray
    leader_epoch: np.ndarray
    metadata: pa.Array
    commit_timestamp: np.ndarray
    expire_timestamp: np.ndarray
    topic_id: np.ndarray
    has_topic_id: np.ndarray

    def to_arrow(self) -> dict[str, pa.Array]:
        """Arrow arrays named like :mod:`decoders.batch_decode`'s columns, null where not set."""
        h = self.handled
        has_value = h & ~self.is_tombstone
        out = {"record_type": pa.array(self.record_type, mask=~h),
               "group": self.group, "topic": self.topic,
               "partition": pa.array(self.partition, mask=~h),
               "is_tombstone": pa.array(self.is_tombstone, mask=~h),
               "value_version": pa.array(self.value_version, mask=~has_value)}
        for name in ("offset", "leader_epoch", "commit_timestamp", "expire_timestamp"):
            out[name] = pa.array(getattr(self, name), mask=~has_value)
        out["metadata"] = self.metadata
        out["topic_id"] = fixed16_array(self.topic_id, has_value & self.has_topic_id)
        return out


def fixed16_array(rows: np.ndarray, valid: np.ndarray) -> pa.Array:
    """A ``binary(16)`` array over an ``(n, 16)`` uint8 matrix, null where not ``valid``."""
    return pa.Array.from_buffers(pa.binary(16), len(valid),
                                 [_bitmap(valid), pa.py_buffer(np.ascontiguousarray(rows))])


def _bitmap(mask: np.ndarray) -> pa.Buffer:
    return pa.py_buffer(np.packbits(mask, bitorder="little"))


class _Column:
    """One binary column as numpy: row bounds ``[start, end)`` plus unaligned big-endian views,
    so reading an int64 at a per-row position is one gather, not eight."""

    def __init__(self, arr: pa.Array):
        if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
            arr = arr.view(pa.large_binary() if pa.types.is_large_string(arr.type) else pa.binary())
        if not (pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type)):
            raise TypeError(f"expected a binary array, got {arr.type}")
        self.large = pa.types.is_large_binary(arr.type)
        _, offsets, data = arr.buffers()
        self.data = data if data is not None else pa.py_buffer(b"")
        off = np.frombuffer(offsets, np.int64 if self.large else np.int32)
        off = off[arr.offset:arr.offset + len(arr) + 1].astype(np.int64)
        raw = np.frombuffer(self.data, np.uint8)
        # The string gather below relies on monotone, in-buffer offsets (Arrow guarantees them;
        # a hand-built array that breaks them is left entirely to the generic decoder).
        sane = len(off) == 0 or (off[0] >= 0 and off[-1] <= len(raw) and bool(np.all(off[1:] >= off[:-1])))
        if not sane:
            off = np.zeros(len(arr) + 1, np.int64)
        self.valid = np.asarray(arr.is_valid()) & sane if len(arr) else np.zeros(0, bool)
        if len(raw) < 16:  # views need room for one 16-byte read
            raw = np.concatenate([raw, np.zeros(16 - len(raw), np.uint8)])
        self.start, self.end = off[:-1], off[1:]
        self.u8 = raw
        self.i16 = self._view(raw, ">i2")
        self.i32 = self._view(raw, ">i4")
        self.i64 = self._view(raw, ">i8")
        self.b16 = np.lib.stride_tricks.as_strided(raw, (len(raw) - 15, 16), (1, 1), writeable=False)

    @staticmethod
    def _view(raw: np.ndarray, dtype: str) -> np.ndarray:
        width = np.dtype(dtype).itemsize
        return np.ndarray((len(raw) - width + 1,), dtype, raw, 0, (1,))

    @staticmethod
    def read(view: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """``view`` at ``pos``, clipped into the buffer (rows that needed the clip fail anyway)."""
        return view[np.clip(pos, 0, len(view) - 1)]


def _keys(k: _Column):
    """Type 0/1 keys: (ok, record type, group start, group length, topic start, topic length,
    partition), all full-length arrays."""
    s, e = k.start, k.end
    rtype = k.read(k.i16, s).astype(np.int16)
    glen = k.read(k.i16, s + 2).astype(np.int64)
    tpos = s + 4 + glen
    tlen = k.read(k.i16, tpos).astype(np.int64)
    ppos = tpos + 2 + tlen
    ok = (k.valid & (e - s >= 2) & ((rtype == 0) | (rtype == 1)) & (glen >= 0) & (tlen >= 0)
          & (ppos + 4 == e))
    partition = k.read(k.i32, ppos).astype(np.int32)
    return ok, rtype, s + 4, glen, tpos + 2, tlen, partition


def _value_rows(v: _Column, rows: np.ndarray, version: int, out: dict) -> np.ndarray:
    """Decode value ``version`` for ``rows`` into ``out``; returns the rows' ok mask."""
    s, e = v.start[rows], v.end[rows]
    out["offset"][rows] = v.read(v.i64, s + 2)
    p = s + 10
    if version >= 3:
        out["leader_epoch"][rows] = v.read(v.i32, p)
        p = p + 4
    if version == 4:
        # Compact length uvarint(N + 1): one byte below 0x80, else exactly two bytes.
        b0 = v.read(v.u8, p).astype(np.int64)
        b1 = v.read(v.u8, p + 1).astype(np.int64)
        two = b0 >= 0x80
        mlen = np.where(two, (b0 & 0x7F) | (b1 << 7), b0) - 1
        ok = (mlen >= 0) & ~(two & (b1 >= 0x80))
        p = p + 1 + two
    else:
        mlen = v.read(v.i16, p).astype(np.int64)
        ok = mlen >= 0
        p = p + 2
    out["meta_start"][rows] = p
    out["meta_len"][rows] = mlen
    p = p + mlen
    out["commit_timestamp"][rows] = v.read(v.i64, p)
    p = p + 8
    if version == 1:
        out["expire_timestamp"][rows] = v.read(v.i64, p)
        p = p + 8
    if version == 4:
        # Tagged section: none, or exactly the known tag 0 (topicId) of size 16.
        count = v.read(v.u8, p)
        tagged = count == 1
        ok &= (count == 0) | (tagged & (v.read(v.u8, p + 1) == 0) & (v.read(v.u8, p + 2) == 16))
        with_tag = rows[tagged]
        out["topic_id"][with_tag] = v.read(v.b16, p[tagged] + 3)
        out["has_topic_id"][rows] = True
        p = p + np.where(tagged, 19, 1)
    return ok & (p == e)


def decode_offset_commits(keys: pa.Array, values: pa.Array) -> OffsetCommitColumns:
    """Decode every offset commit of ``keys``/``values`` (binary or large_binary, same length)
    that the fast path can decode exactly; ``handled`` marks them.

    >>> cols = decode_offset_commits(pa.array([b"\\x00\\x01\\x00\\x01g\\x00\\x01t\\x00\\x00\\x00\\x02"]),
    ...                              pa.array([None], pa.binary()))
    >>> cols.handled.tolist(), cols.group.to_pylist(), cols.is_tombstone.tolist()
    ([True], ['g'], [True])
    """
    if len(keys) != len(values):
        raise ValueError(f"{len(keys)} keys but {len(values)} values")
    n = len(keys)
    k, v = _Column(keys), _Column(values)
    ok, rtype, gstart, glen, tstart, tlen, partition = _keys(k)
    tomb = ~np.asarray(values.is_valid()) if n else np.zeros(0, bool)
    version = v.read(v.i16, v.start).astype(np.int16)
    has_version = v.valid & (v.end - v.start >= 2)
    out = {"offset": np.zeros(n, np.int64), "leader_epoch": np.full(n, -1, np.int32),
           "commit_timestamp": np.zeros(n, np.int64), "expire_timestamp": np.full(n, -1, np.int64),
           "meta_start": v.start.copy(), "meta_len": np.zeros(n, np.int64),
           "topic_id": np.zeros((n, 16), np.uint8), "has_topic_id": np.zeros(n, bool)}
    handled = ok & tomb
    for ver in range(5):
        allowed = (rtype == 1) | ((rtype == 0) & (ver == 0))
        rows = np.flatnonzero(ok & has_version & (version == ver) & allowed)
        if len(rows):
            handled[rows] = _value_rows(v, rows, ver, out)
    with_value = handled & ~tomb
    group, bad_g = _strings(k, gstart, glen, handled)
    topic, bad_t = _strings(k, tstart, tlen, handled)
    metadata, bad_m = _strings(v, out["meta_start"], out["meta_len"], with_value)
    bad = bad_g | bad_t | bad_m
    if bad.any():
        handled &= ~bad
        group, topic = _with_validity(group, handled), _with_validity(topic, handled)
        metadata = _with_validity(metadata, handled & ~tomb)
    return OffsetCommitColumns(
        handled=handled, record_type=rtype, group=group, topic=topic, partition=partition,
        is_tombstone=tomb, value_version=np.where(tomb, 0, version).astype(np.int16),
        offset=out["offset"], leader_epoch=out["leader_epoch"], metadata=metadata,
        commit_timestamp=out["commit_timestamp"], expire_timestamp=out["expire_timestamp"],
        topic_id=out["topic_id"], has_topic_id=out["has_topic_id"])


def _strings(col: _Column, start: np.ndarray, length: np.ndarray, mask: np.ndarray):
    """UTF-8 strings ``data[start:start+length]`` of the ``mask`` rows (null elsewhere), and the
    mask of rows whose bytes are not valid UTF-8.

    The slices are expressed as every other element of a binary array over the *original* data
    buffer (offsets start0, end0, start1, end1, …; rows outside ``mask`` become empty slices at
    their row start, keeping offsets monotone), so Arrow's ``take`` does the byte copy in C++ and
    its binary→string cast does the UTF-8 validation."""
    n = len(mask)
    s = np.where(mask, start, col.start)
    offs = np.empty(2 * n + 1, np.int64 if col.large else np.int32)
    offs[0:2 * n:2] = s
    offs[1:2 * n:2] = s + np.where(mask, length, 0)
    offs[2 * n] = offs[2 * n - 1] if n else 0
    btype, stype = (pa.large_binary(), pa.large_string()) if col.large else (pa.binary(), pa.string())
    spread = pa.Array.from_buffers(btype, 2 * n, [None, pa.py_buffer(offs), col.data])
    picked = spread.take(pa.array(np.arange(0, 2 * n, 2, dtype=np.int64)))
    bad = np.zeros(n, bool)
    try:
        picked.cast(stype)
    except pa.ArrowInvalid:
        _find_invalid_utf8(picked, 0, stype, bad)
    return _with_validity(picked, mask & ~bad, stype), bad


def _find_invalid_utf8(arr: pa.Array, base: int, stype: pa.DataType, bad: np.ndarray) -> None:
    """Bisect to the rows whose bytes fail Arrow's UTF-8 validation (rare: costs O(k log n))."""
    try:
        arr.cast(stype)
        return
    except pa.ArrowInvalid:
        if len(arr) == 1:
            bad[base] = True
            return
    half = len(arr) // 2
    _find_invalid_utf8(arr.slice(0, half), base, stype, bad)
    _find_invalid_utf8(arr.slice(half), base + half, stype, bad)


def _with_validity(arr: pa.Array, valid: np.ndarray, stype: pa.DataType | None = None) -> pa.Array:
    """``arr``'s bytes as a string array that is null where not ``valid`` (no copy, no check:
    only rows already validated are ever made visible; ``arr`` is unsliced, offset 0)."""
    stype = stype or arr.type
    _, offsets, data = arr.buffers()
    return pa.Array.from_buffers(stype, len(arr), [_bitmap(valid), offsets, data])

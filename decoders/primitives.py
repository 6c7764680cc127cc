"""Primitive KRPC codecs over ``(buf, pos, end)``; every reader returns ``(value, new_pos)``.

Wire grammar (all integers big-endian two's complement):

* fixed width: int8/16/32/64, uint16, uint32, float64, bool (1 byte, non-zero = true),
  uuid (16 bytes: most- then least-significant long).
* uvarint: unsigned LEB128, at most 5 bytes (Kafka rejects a 5th byte with its high bit set).
* varint/varlong: ZigZag then LEB128 (record-batch fields), at most 5 / 10 bytes.
* non-flexible string int16 length (-1 = null), bytes/array int32 length (-1 = null);
  compact (flexible) forms: uvarint(N + 1), 0 = null.

Every length is checked against ``end - pos`` before anything is sliced or allocated, so a corrupt
length costs a typed error, never memory. The compiled readers (:mod:`decoders.compiler`) inline
the common cases and call the slow paths here.
"""

from __future__ import annotations

import functools
import struct
import uuid

from .errors import InvalidLengthError, InvalidUtf8Error, TruncatedError

INT8 = struct.Struct(">b")
INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")
UINT16 = struct.Struct(">H")
UINT32 = struct.Struct(">I")
FLOAT64 = struct.Struct(">d")
UUID_HALVES = struct.Struct(">QQ")

FIXED = {"bool": ("?", 1), "int8": ("b", 1), "int16": ("h", 2), "int32": ("i", 4),
         "int64": ("q", 8), "uint16": ("H", 2), "uint32": ("I", 4), "float64": ("d", 8),
         "uuid": ("QQ", 16)}
MAX_STRING = 0x7FFF
SHORT_ARRAY = 64  # arrays of fixed-width elements shorter than this use a precompiled Struct


@functools.cache
def array_unpackers(fmt: str) -> tuple:
    """``unpack_from`` of ``n`` big-endian ``fmt`` elements, indexed by ``n < SHORT_ARRAY``."""
    return tuple(struct.Struct(f">{n}{fmt}").unpack_from for n in range(SHORT_ARRAY))

_new = object.__new__
_setattr = object.__setattr__
_SAFE = uuid.SafeUUID.unknown
_UUID = uuid.UUID


UUID_CACHE: dict[int, uuid.UUID] = {}
_UUID_CACHE_MAX = 1 << 16


def make_uuid(value: int) -> uuid.UUID:
    """``uuid.UUID(int=value)`` without the validation overhead (value comes from 16 bytes).

    Topic ids repeat in almost every record, and UUIDs are immutable, so equal ids share one
    object (bounded cache, cleared when full)."""
    u = UUID_CACHE.get(value)
    if u is None:
        if len(UUID_CACHE) >= _UUID_CACHE_MAX:
            UUID_CACHE.clear()
        u = _new(_UUID)
        _setattr(u, "int", value)
        _setattr(u, "is_safe", _SAFE)
        UUID_CACHE[value] = u
    return u


def render_path(path) -> str:
    """Paths are built lazily as ``(parent, name, index)`` tuples; render only when reporting."""
    if path is None:
        return ""
    parent, name, index = path
    head = render_path(parent)
    text = f"{head}.{name}" if head else name
    return text if index is None else f"{text}[{index}]"


def truncated(needed: int, remaining: int, path=None) -> TruncatedError:
    return TruncatedError(needed, remaining, path=render_path(path) or None)


def invalid_length(message: str, path=None) -> InvalidLengthError:
    return InvalidLengthError(message, path=render_path(path) or None)


def utf8(buf, start: int, stop: int, path=None) -> str:
    try:
        return str(buf[start:stop], "utf-8")
    except UnicodeDecodeError as e:
        raise InvalidUtf8Error(f"invalid UTF-8 at byte {e.start}: {e.reason}",
                               path=render_path(path) or None) from None


def read_uvarint(buf, pos: int, end: int, path=None) -> tuple[int, int]:
    value = 0
    shift = 0
    while True:
        if pos >= end:
            raise truncated(1, 0, path)
        b = buf[pos]
        pos += 1
        if shift == 28 and b > 0x0F:
            # Kafka keeps only 32 bits; a 5th byte with more is malformed.
            raise invalid_length("unsigned varint longer than 32 bits", path)
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def read_uvarint_java(buf, pos: int, end: int, path=None) -> tuple[int, int]:
    """Kafka's ``ByteUtils.readUnsignedVarint`` to the bit: a 5th byte's high bits fall off a
    32-bit int, which may come out negative (a length then reads as null). For reading bytes the
    way a given release does (:func:`decoders.codec.read_value_as`), never for our own decoding,
    which refuses such a varint."""
    value = 0
    shift = 0
    while True:
        if pos >= end:
            raise truncated(1, 0, path)
        b = buf[pos]
        pos += 1
        if b < 0x80:
            value = (value | b << shift) & 0xFFFFFFFF
            return (value - (1 << 32) if value >= 1 << 31 else value), pos
        value |= (b & 0x7F) << shift
        shift += 7
        if shift > 28:
            raise invalid_length("varint is too long, the most significant bit in the 5th byte is set", path)


def null_or_error_java(n: int, nullable: bool, what: str, path):
    """The generated Java ``read``: any negative length is null, an error when not nullable."""
    return null_or_error(-1, nullable, what, path)


def read_varlong(buf, pos: int, end: int, path=None, max_bytes: int = 10) -> tuple[int, int]:
    """ZigZag varint (``max_bytes=5``) or varlong (10)."""
    raw = 0
    shift = 0
    for _ in range(max_bytes):
        if pos >= end:
            raise truncated(1, 0, path)
        b = buf[pos]
        pos += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7
    raise invalid_length(f"varint longer than {max_bytes} bytes", path)


def read_varint(buf, pos: int, end: int, path=None) -> tuple[int, int]:
    value, pos = read_varlong(buf, pos, end, path, 5)
    if not -0x80000000 <= value <= 0x7FFFFFFF:
        raise invalid_length("varint out of int32 range", path)
    return value, pos


def read_fixed(kind: str, buf, pos: int, end: int, path=None):
    fmt, size = FIXED[kind]
    if end - pos < size:
        raise truncated(size, end - pos, path)
    if kind == "uuid":
        hi, lo = UUID_HALVES.unpack_from(buf, pos)
        return make_uuid(hi << 64 | lo), pos + 16
    return struct.unpack_from(">" + fmt, buf, pos)[0], pos + size


def read_length(buf, pos: int, end: int, width: int, compact: bool, path=None) -> tuple[int, int]:
    """A string/bytes/array length: -1 means null (compact 0 also decodes to -1)."""
    if compact:
        n, pos = read_uvarint(buf, pos, end, path)
        return n - 1, pos
    if end - pos < width:
        raise truncated(width, end - pos, path)
    return (INT16 if width == 2 else INT32).unpack_from(buf, pos)[0], pos + width


def read_string(buf, pos: int, end: int, compact: bool, nullable: bool, path=None):
    n, pos = read_length(buf, pos, end, 2, compact, path)
    if n < 0:
        return null_or_error(n, nullable, "string", path), pos
    if n > MAX_STRING:
        raise invalid_length(f"string length {n} exceeds {MAX_STRING}", path)
    if end - pos < n:
        raise truncated(n, end - pos, path)
    return utf8(buf, pos, pos + n, path), pos + n


def read_bytes(buf, pos: int, end: int, compact: bool, nullable: bool, path=None):
    n, pos = read_length(buf, pos, end, 4, compact, path)
    if n < 0:
        return null_or_error(n, nullable, "bytes", path), pos
    if end - pos < n:
        raise truncated(n, end - pos, path)
    return bytes(buf[pos:pos + n]), pos + n


def null_or_error(n: int, nullable: bool, what: str, path):
    if n != -1:
        raise invalid_length(f"{what} length {n} is negative", path)
    if not nullable:
        # Kafka: "non-nullable field ... was serialized as null".
        raise invalid_length(f"non-nullable {what} was serialized as null", path)
    return None


# ---- writers (append to a bytearray) -------------------------------------------------------

def write_uvarint(out: bytearray, value: int) -> None:
    if value < 0 or value > 0xFFFFFFFF:
        raise ValueError(f"uvarint out of range: {value}")
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def write_varlong(out: bytearray, value: int) -> None:
    raw = (value << 1) ^ (value >> 63)
    raw &= 0xFFFFFFFFFFFFFFFF
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)


def write_fixed(out: bytearray, kind: str, value) -> None:
    if kind == "uuid":
        out += value.bytes
        return
    fmt, _ = FIXED[kind]
    out += struct.pack(">" + fmt, value)


def write_length(out: bytearray, n: int, width: int, compact: bool) -> None:
    """``n = -1`` writes null."""
    if compact:
        write_uvarint(out, n + 1)
    else:
        out += (INT16 if width == 2 else INT32).pack(n)


def write_string(out: bytearray, value: str | None, compact: bool) -> None:
    if value is None:
        write_length(out, -1, 2, compact)
        return
    data = value.encode("utf-8")
    if len(data) > MAX_STRING:
        raise ValueError(f"string of {len(data)} bytes exceeds {MAX_STRING}")
    write_length(out, len(data), 2, compact)
    out += data


def write_bytes(out: bytearray, value: bytes | None, compact: bool) -> None:
    if value is None:
        write_length(out, -1, 4, compact)
        return
    write_length(out, len(value), 4, compact)
    out += value

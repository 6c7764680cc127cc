"""Records inside a magic-2 batch, and the control record of a transaction-marker batch.

Record grammar (all varints ZigZag, as in protobuf's sint32/sint64)::

    length:varint        bytes of everything after this field
    attributes:int8      unused (0)
    timestampDelta:varlong   timestamp = baseTimestamp + delta (LogAppendTime: = maxTimestamp)
    offsetDelta:varint   offset = baseOffset + delta
    keyLength:varint (-1 = null) key
    valueLength:varint (-1 = null = tombstone) value
    headersCount:varint  then per header: keyLength:varint UTF-8 key, valueLength:varint (-1 = null)

Records are parsed strictly: each must consume exactly its declared length and the batch exactly
its records, as Kafka's ``DefaultRecord.readFrom`` insists (``Invalid record size``).
"""

from __future__ import annotations

from decoders.errors import (CorruptBatchError, InvalidLengthError, InvalidUtf8Error,
                             TruncatedError)
from decoders.log.layout import (CONTROL_ABORT, CONTROL_COMMIT, CONTROL_KEY,
                                 END_TXN_MARKER_VALUE)
from decoders.log.types import LogRecord

_VARINT_MAX_SHIFT = 63     # a varlong has at most 10 bytes
_ONE_BYTE_ZIGZAG = tuple((b >> 1) ^ -(b & 1) for b in range(128))   # the common case: -64..63


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """ZigZag varint/varlong at ``pos``; returns (value, next position). IndexError at buffer end."""
    byte = buf[pos]
    if byte < 0x80:
        return _ONE_BYTE_ZIGZAG[byte], pos + 1
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
        if shift > _VARINT_MAX_SHIFT:
            raise InvalidLengthError("varint longer than 10 bytes", stage="record")


def _read_bytes(buf: bytes, pos: int, limit: int, what: str) -> tuple[bytes | None, int]:
    byte = buf[pos]
    if byte < 0x80:
        length, pos = _ONE_BYTE_ZIGZAG[byte], pos + 1
    else:
        length, pos = read_varint(buf, pos)
    if length == -1:
        return None, pos
    if length < -1:
        raise InvalidLengthError(f"negative {what} length {length}", stage="record", path=what)
    if pos + length > limit:
        raise TruncatedError(length, limit - pos, stage="record", path=what)
    return buf[pos:pos + length], pos + length


def _read_headers(buf: bytes, pos: int, limit: int) -> tuple[list, int]:
    count, pos = read_varint(buf, pos)
    if count < 0:
        raise InvalidLengthError(f"negative header count {count}", stage="record", path="headers")
    headers = []
    for _ in range(count):
        raw_key, pos = _read_bytes(buf, pos, limit, "headerKey")
        if raw_key is None:
            raise InvalidLengthError("null header key", stage="record", path="headerKey")
        try:
            key = raw_key.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidUtf8Error(f"header key is not UTF-8: {exc}", stage="record") from None
        value, pos = _read_bytes(buf, pos, limit, "headerValue")
        headers.append((key, value))
    return headers, pos


def parse_records(buf: bytes, count: int, *, base_offset: int, base_timestamp: int,
                  log_append_time: int | None) -> list[LogRecord]:
    """The ``count`` records filling ``buf`` exactly. ``log_append_time`` (the batch's
    maxTimestamp) replaces every record timestamp when the batch is LogAppendTime."""
    if count < 0:
        raise InvalidLengthError(f"negative records count {count}", stage="batch")
    records: list[LogRecord] = []
    append = records.append
    zigzag = _ONE_BYTE_ZIGZAG
    pos, end = 0, len(buf)
    try:
        for _ in range(count):
            # Varints inlined where they fit in one byte (most deltas, key and value lengths):
            # this loop runs once per record of the whole snapshot.
            byte = buf[pos]
            if byte < 0x80:
                length, pos = zigzag[byte], pos + 1
            else:
                length, pos = read_varint(buf, pos)
            record_end = pos + length
            if length < 0:
                raise InvalidLengthError(f"negative record length {length}", stage="record")
            if record_end > end:
                raise TruncatedError(length, end - pos, stage="record",
                                     offset=base_offset + len(records))
            p = pos + 1                                      # +1: the unused attributes byte
            byte = buf[p]
            if byte < 0x80:
                ts_delta, p = zigzag[byte], p + 1
            elif buf[p + 1] < 0x80:                           # two bytes: 64..8191 either way
                raw = (byte & 0x7F) | (buf[p + 1] << 7)
                ts_delta, p = (raw >> 1) ^ -(raw & 1), p + 2
            else:
                ts_delta, p = read_varint(buf, p)
            byte = buf[p]
            if byte < 0x80:
                offset_delta, p = zigzag[byte], p + 1
            elif buf[p + 1] < 0x80:                           # two bytes: 64..8191 either way
                raw = (byte & 0x7F) | (buf[p + 1] << 7)
                offset_delta, p = (raw >> 1) ^ -(raw & 1), p + 2
            else:
                offset_delta, p = read_varint(buf, p)
            # Key and value: short lengths inline; anything else (null, long, bad) the full way.
            byte = buf[p]
            size = zigzag[byte] if byte < 0x80 else -2
            if size >= 0 and p + 1 + size <= record_end:
                key, p = buf[p + 1:p + 1 + size], p + 1 + size
            else:
                key, p = _read_bytes(buf, p, record_end, "key")
            byte = buf[p]
            size = zigzag[byte] if byte < 0x80 else -2
            if size >= 0 and p + 1 + size <= record_end:
                value, p = buf[p + 1:p + 1 + size], p + 1 + size
            else:
                value, p = _read_bytes(buf, p, record_end, "value")
            headers, p = _read_headers(buf, p, record_end) if buf[p] else ([], p + 1)
            if p != record_end:
                raise CorruptBatchError(f"record declares {length} byte(s) but uses {p - pos}",
                                        stage="record", offset=base_offset + offset_delta)
            timestamp = base_timestamp + ts_delta if log_append_time is None else log_append_time
            append(LogRecord(base_offset + offset_delta, timestamp, key, value, headers))
            pos = record_end
    except IndexError:
        raise TruncatedError(1, 0, stage="record", offset=base_offset + len(records)) from None
    if pos != end:
        raise CorruptBatchError(f"{end - pos} byte(s) left after the last of {count} record(s)",
                                stage="batch")
    return records


def apply_control(records: list[LogRecord]) -> None:
    """Fill ``control_type``/``coordinator_epoch`` of a control batch's records in place.

    Key = version:int16 + type:int16; for ABORT/COMMIT the value = version:int16 +
    coordinatorEpoch:int32. Newer versions are read with this (the highest known) layout."""
    for record in records:
        if record.key is None or len(record.key) < CONTROL_KEY.size:
            raise CorruptBatchError("control record key shorter than 4 bytes",
                                    stage="record", offset=record.offset)
        _version, record.control_type = CONTROL_KEY.unpack_from(record.key)
        if record.control_type not in (CONTROL_ABORT, CONTROL_COMMIT):
            continue
        if record.value is None or len(record.value) < END_TXN_MARKER_VALUE.size:
            raise CorruptBatchError("end-transaction marker value shorter than 6 bytes",
                                    stage="record", offset=record.offset)
        _version, record.coordinator_epoch = END_TXN_MARKER_VALUE.unpack_from(record.value)

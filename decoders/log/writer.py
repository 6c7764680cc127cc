"""Encode record batches and legacy message sets byte-exactly as Kafka does (tests, fixtures, the
scenario builder). Layouts come from :mod:`decoders.log.layout`, codecs from :mod:`compression`.

Example::

    batch = encode_batch([(b"key", b"value", 1000)], base_offset=0, compression="lz4")
    write_segment(tmp / "00000000000000000000.log", [batch])
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from decoders.log.compression import CODEC_IDS, NONE, compress
from decoders.log.crc import crc32, crc32c
from decoders.log.layout import (ATTR_CONTROL, ATTR_DELETE_HORIZON, ATTR_TIMESTAMP_TYPE,
                                 ATTR_TRANSACTIONAL, BATCH_V2_HEADER, CONTROL_KEY, CREATE_TIME,
                                 END_TXN_MARKER_VALUE, LEGACY_ATTR_TIMESTAMP_TYPE, LEGACY_LENGTH,
                                 LEGACY_TIMESTAMP, LOG_APPEND_TIME, LOG_OVERHEAD, MAGIC_V0,
                                 MAGIC_V1, MAGIC_V2, NO_TIMESTAMP, PREFIX, V2_CRC_OFFSET,
                                 V2_CRC_START)
from decoders.log.types import LogRecord

RecordInput = LogRecord | tuple[bytes | None, bytes | None, int]


def zigzag_varint(value: int) -> bytes:
    """ZigZag varint/varlong encoding (64-bit zigzag covers both)."""
    encoded = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while encoded > 0x7F:
        out.append((encoded & 0x7F) | 0x80)
        encoded >>= 7
    out.append(encoded)
    return bytes(out)


def _sized(data: bytes | None) -> bytes:
    return zigzag_varint(-1) if data is None else zigzag_varint(len(data)) + data


def as_records(records: Iterable[RecordInput], base_offset: int) -> list[LogRecord]:
    """LogRecords as given; ``(key, value, timestamp)`` tuples get offsets base_offset + index."""
    return [r if isinstance(r, LogRecord) else LogRecord(base_offset + i, r[2], r[0], r[1])
            for i, r in enumerate(records)]


def codec_id(compression: str) -> int:
    try:
        return CODEC_IDS[compression]
    except KeyError:
        raise ValueError(f"unknown compression {compression!r}; one of {sorted(CODEC_IDS)}") from None


def encode_record(record: LogRecord, *, base_offset: int, base_timestamp: int) -> bytes:
    headers = [zigzag_varint(len(record.headers))]
    for key, value in record.headers:
        headers += [_sized(key.encode("utf-8")), _sized(value)]
    body = b"".join([b"\x00", zigzag_varint(record.timestamp - base_timestamp),
                     zigzag_varint(record.offset - base_offset), _sized(record.key),
                     _sized(record.value), *headers])
    return zigzag_varint(len(body)) + body


def encode_batch(records: Sequence[RecordInput], *, base_offset: int, magic: int = MAGIC_V2,
                 compression: str = "none", timestamp_type: str = "CreateTime",
                 producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
                 partition_leader_epoch: int = -1, is_transactional: bool = False,
                 is_control: bool = False, delete_horizon_ms: int | None = None,
                 base_timestamp: int | None = None, log_append_time: int | None = None,
                 last_offset: int | None = None) -> bytes:
    """One batch. Magic 0/1 delegate to :func:`encode_legacy_message_set`. ``base_timestamp``
    defaults to the first record's timestamp (a delete horizon replaces it); ``log_append_time``
    is maxTimestamp of a LogAppendTime batch (default: the max record timestamp);
    ``last_offset`` defaults to the last record's offset (set it for compacted/empty batches)."""
    if magic not in (MAGIC_V0, MAGIC_V1, MAGIC_V2):
        raise ValueError(f"magic must be 0, 1 or 2, not {magic}")
    if timestamp_type not in (CREATE_TIME, LOG_APPEND_TIME):
        raise ValueError(f"timestamp_type must be {CREATE_TIME!r} or {LOG_APPEND_TIME!r}")
    if magic != MAGIC_V2:
        return encode_legacy_message_set(records, magic=magic, compression=compression,
                                         base_offset=base_offset, timestamp_type=timestamp_type,
                                         log_append_time=log_append_time)
    recs = as_records(records, base_offset)
    timestamps = [r.timestamp for r in recs]
    if delete_horizon_ms is not None:
        base_timestamp = delete_horizon_ms
    elif base_timestamp is None:
        base_timestamp = timestamps[0] if recs else NO_TIMESTAMP
    max_timestamp = max(timestamps, default=NO_TIMESTAMP)
    if timestamp_type == LOG_APPEND_TIME and log_append_time is not None:
        max_timestamp = log_append_time
    if last_offset is None:
        last_offset = recs[-1].offset if recs else base_offset
    codec = codec_id(compression)
    payload = b"".join(encode_record(r, base_offset=base_offset, base_timestamp=base_timestamp)
                       for r in recs)
    if codec != NONE:
        payload = compress(codec, payload, magic=MAGIC_V2)
    attributes = (codec | (ATTR_TIMESTAMP_TYPE if timestamp_type == LOG_APPEND_TIME else 0)
                  | (ATTR_TRANSACTIONAL if is_transactional else 0)
                  | (ATTR_CONTROL if is_control else 0)
                  | (ATTR_DELETE_HORIZON if delete_horizon_ms is not None else 0))
    header = BATCH_V2_HEADER.pack(
        base_offset, BATCH_V2_HEADER.size - LOG_OVERHEAD + len(payload), partition_leader_epoch,
        MAGIC_V2, 0, attributes, last_offset - base_offset, base_timestamp, max_timestamp,
        producer_id, producer_epoch, base_sequence, len(recs))
    batch = bytearray(header + payload)
    batch[V2_CRC_OFFSET:V2_CRC_START] = crc32c(memoryview(batch)[V2_CRC_START:]).to_bytes(4, "big")
    return bytes(batch)


def encode_control_batch(control_type: int, coordinator_epoch: int, *, offset: int,
                         producer_id: int, producer_epoch: int, timestamp: int,
                         partition_leader_epoch: int = -1) -> bytes:
    """A transaction marker: a transactional control batch with one control record
    (key = version 0 + type, value = version 0 + coordinatorEpoch)."""
    record = LogRecord(offset, timestamp, CONTROL_KEY.pack(0, control_type),
                       END_TXN_MARKER_VALUE.pack(0, coordinator_epoch))
    return encode_batch([record], base_offset=offset, producer_id=producer_id,
                        producer_epoch=producer_epoch, partition_leader_epoch=partition_leader_epoch,
                        is_transactional=True, is_control=True)


def _legacy_sized(data: bytes | None) -> bytes:
    return LEGACY_LENGTH.pack(-1) if data is None else LEGACY_LENGTH.pack(len(data)) + data


def encode_legacy_message(offset: int, *, magic: int, attributes: int, timestamp: int,
                          key: bytes | None, value: bytes | None) -> bytes:
    """One legacy entry: offset, size, CRC-32 of magic .. end, then the message."""
    body = bytes([magic, attributes & 0xFF])
    if magic == MAGIC_V1:
        body += LEGACY_TIMESTAMP.pack(timestamp)
    body += _legacy_sized(key) + _legacy_sized(value)
    return PREFIX.pack(offset, 4 + len(body)) + crc32(body).to_bytes(4, "big") + body


def encode_legacy_message_set(entries: Sequence[RecordInput], *, magic: int = 0,
                              compression: str = "none", base_offset: int = 0,
                              timestamp_type: str = "CreateTime",
                              log_append_time: int | None = None) -> bytes:
    """Magic 0/1 messages: one entry per record, or with a codec one wrapper message whose value is
    the compressed inner set (magic 0: absolute inner offsets; magic 1: relative ones and the
    wrapper carrying the last absolute offset and the max — or, LogAppendTime, the append — time)."""
    recs = as_records(entries, base_offset)
    codec = codec_id(compression)
    is_log_append = magic == MAGIC_V1 and timestamp_type == LOG_APPEND_TIME
    ts_attr = LEGACY_ATTR_TIMESTAMP_TYPE if is_log_append else 0
    if codec == NONE:
        return b"".join(encode_legacy_message(
            r.offset, magic=magic, attributes=ts_attr, timestamp=r.timestamp, key=r.key,
            value=r.value) for r in recs)
    if not recs:
        raise ValueError("a compressed legacy message set needs at least one record")
    first = recs[0].offset
    inner = b"".join(encode_legacy_message(
        r.offset - first if magic == MAGIC_V1 else r.offset, magic=magic, attributes=0,
        timestamp=r.timestamp, key=r.key, value=r.value) for r in recs)
    wrapper_ts = max(r.timestamp for r in recs)
    if ts_attr and log_append_time is not None:
        wrapper_ts = log_append_time
    return encode_legacy_message(recs[-1].offset, magic=magic, attributes=codec | ts_attr,
                                 timestamp=wrapper_ts, key=None,
                                 value=compress(codec, inner, magic=magic))


def write_segment(path: str | os.PathLike, batches: Iterable[bytes]) -> str:
    """Write encoded batches back to back as a ``.log`` file (no file header); returns the path."""
    with open(path, "wb") as out:
        for batch in batches:
            out.write(batch)
    return os.fspath(path)

"""Legacy messages, magic 0 and 1 (brokers <= 0.10.x; they survive in never-rewritten segments).

Entry = ``offset:int64 | messageSize:int32 | crc:uint32 | magic:int8 | attributes:int8 |
[timestamp:int64, magic 1] | keyLength:int32 key | valueLength:int32 value`` (-1 lengths = null).
The CRC is CRC-32 (IEEE) over magic .. end of message.

A *compressed wrapper* (codec != 0) holds in its value the compressed bytes of an inner message set
(same entry layout, never compressed again). Offsets of the inner messages:

* magic 0: absolute;
* magic 1: relative (0, 1, ...); the wrapper's offset is the *last* inner absolute offset, so
  ``absolute = wrapperOffset - lastInnerRelative + innerRelative``. Some old librdkafka producers
  left the wrapper offset at 0: then the relative offsets are used as they are.

Magic 1 timestamps: a LogAppendTime wrapper stamps its own timestamp on every inner record; magic 0
has no timestamps at all (-1).
"""

from __future__ import annotations

from typing import NamedTuple

from decoders.errors import CorruptBatchError, CrcMismatchError, DecodeError, TruncatedError
from decoders.log.compression import DEFAULT_MAX_DECOMPRESSED, NONE, codec_name, decompress
from decoders.log.crc import crc32
from decoders.log.layout import (CREATE_TIME, LEGACY_ATTR_COMPRESSION_MASK,
                                 LEGACY_ATTR_TIMESTAMP_TYPE, LEGACY_CRC_START, LEGACY_HEADER,
                                 LEGACY_HEADER_SIZE, LEGACY_LENGTH, LEGACY_MIN_SIZE,
                                 LEGACY_TIMESTAMP, LOG_APPEND_TIME, LOG_OVERHEAD, MAGIC_V0,
                                 MAGIC_V1, NO_TIMESTAMP, NO_TIMESTAMP_TYPE, LegacyHeader)
from decoders.log.types import LogRecord, RecordBatch


class Message(NamedTuple):
    header: LegacyHeader
    timestamp: int
    key: bytes | None
    value: bytes | None
    end: int


def _read_sized(buf: bytes, pos: int, end: int, what: str) -> tuple[bytes | None, int]:
    if pos + LEGACY_LENGTH.size > end:
        raise TruncatedError(LEGACY_LENGTH.size, end - pos, stage="batch", path=what)
    (length,) = LEGACY_LENGTH.unpack_from(buf, pos)
    pos += LEGACY_LENGTH.size
    if length == -1:
        return None, pos
    if length < 0 or pos + length > end:
        raise CorruptBatchError(f"{what} length {length} does not fit the message",
                                stage="batch", path=what)
    return buf[pos:pos + length], pos + length


def read_message(buf: bytes, pos: int, limit: int) -> Message:
    """The legacy entry at ``pos`` (which must end by ``limit``), CRC checked."""
    if limit - pos < LEGACY_HEADER_SIZE:
        raise TruncatedError(LEGACY_HEADER_SIZE, limit - pos, stage="batch")
    header = LegacyHeader._make(LEGACY_HEADER.unpack_from(buf, pos))
    end = pos + LOG_OVERHEAD + header.message_size
    if header.magic not in LEGACY_MIN_SIZE:
        raise CorruptBatchError(f"legacy message with magic {header.magic}", stage="batch",
                                offset=header.offset)
    if header.message_size < LEGACY_MIN_SIZE[header.magic] or end > limit:
        raise CorruptBatchError(f"legacy message size {header.message_size} does not fit",
                                stage="batch", offset=header.offset)
    computed = crc32(memoryview(buf)[pos + LEGACY_CRC_START:end])
    if computed != header.crc:
        raise CrcMismatchError(f"CRC-32 stored {header.crc:#010x}, computed {computed:#010x}",
                               stage="batch", offset=header.offset)
    cursor = pos + LEGACY_HEADER_SIZE
    timestamp = NO_TIMESTAMP
    if header.magic == MAGIC_V1:
        (timestamp,) = LEGACY_TIMESTAMP.unpack_from(buf, cursor)
        cursor += LEGACY_TIMESTAMP.size
    key, cursor = _read_sized(buf, cursor, end, "key")
    value, cursor = _read_sized(buf, cursor, end, "value")
    if cursor != end:
        raise CorruptBatchError(f"{end - cursor} byte(s) left inside the message",
                                stage="batch", offset=header.offset)
    return Message(header, timestamp, key, value, end)


def _inner_messages(wrapper: Message, *, max_decompressed: int) -> list[Message]:
    codec = wrapper.header.attributes & LEGACY_ATTR_COMPRESSION_MASK
    if wrapper.value is None:
        raise CorruptBatchError("compressed wrapper message with a null value", stage="batch")
    inner_set = decompress(codec, wrapper.value, magic=wrapper.header.magic,
                           max_size=max_decompressed)
    messages, pos = [], 0
    while pos < len(inner_set):
        message = read_message(inner_set, pos, len(inner_set))
        if message.header.magic != wrapper.header.magic:
            raise CorruptBatchError(f"inner magic {message.header.magic} differs from the "
                                    f"wrapper's {wrapper.header.magic}", stage="batch")
        if message.header.attributes & LEGACY_ATTR_COMPRESSION_MASK != NONE:
            raise CorruptBatchError("nested compressed message", stage="batch")
        messages.append(message)
        pos = message.end
    if not messages:
        raise CorruptBatchError("compressed wrapper message with no inner messages", stage="batch")
    return messages


def _expand(wrapper: Message, inner: list[Message]) -> list[LogRecord]:
    header = wrapper.header
    shift = 0
    if header.magic == MAGIC_V1 and header.offset != 0:
        shift = header.offset - inner[-1].header.offset
    stamp = header.magic == MAGIC_V1 and bool(header.attributes & LEGACY_ATTR_TIMESTAMP_TYPE)
    return [LogRecord(m.header.offset + shift, wrapper.timestamp if stamp else m.timestamp,
                      m.key, m.value) for m in inner]


def decode_message(entry: bytes, file_position: int = 0, *,
                   max_decompressed: int = DEFAULT_MAX_DECOMPRESSED) -> RecordBatch:
    """One top-level legacy message as a RecordBatch (a wrapper expanded into its inner records)."""
    wrapper = read_message(entry, 0, len(entry))
    header = wrapper.header
    codec = header.attributes & LEGACY_ATTR_COMPRESSION_MASK
    try:
        compression = codec_name(codec)
        if codec == NONE:
            records = [LogRecord(header.offset, wrapper.timestamp, wrapper.key, wrapper.value)]
        else:
            records = _expand(wrapper, _inner_messages(wrapper, max_decompressed=max_decompressed))
    except DecodeError as exc:
        exc.at(stage="batch", offset=header.offset if exc.offset is None else None)
        raise
    if header.magic == MAGIC_V0:
        timestamp_type = NO_TIMESTAMP_TYPE
    else:
        is_log_append = header.attributes & LEGACY_ATTR_TIMESTAMP_TYPE
        timestamp_type = LOG_APPEND_TIME if is_log_append else CREATE_TIME
    return RecordBatch(
        file_position=file_position, base_offset=records[0].offset,
        last_offset=records[-1].offset, batch_length=len(entry), partition_leader_epoch=-1,
        magic=header.magic, crc=header.crc, crc_valid=True, attributes=header.attributes,
        compression=compression, timestamp_type=timestamp_type, is_transactional=False,
        is_control=False, delete_horizon_ms=None, base_timestamp=records[0].timestamp,
        max_timestamp=wrapper.timestamp, producer_id=-1, producer_epoch=-1, base_sequence=-1,
        records_count=len(records), records=records)

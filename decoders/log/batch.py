"""Decode one complete log entry: a magic-2 record batch, or a legacy magic-0/1 message.

The header layout is in :mod:`decoders.log.layout`. Quirks that bite:

* the CRC-32C covers bytes [21, end): attributes onward, *not* the partition leader epoch, which the
  leader stamps after the producer computed the CRC;
* with a delete horizon (attribute bit 6) ``baseTimestamp`` holds the horizon, yet record
  timestamps are still ``baseTimestamp + delta`` (the cleaner rebased the deltas);
* in a LogAppendTime batch every record's timestamp *is* ``maxTimestamp``;
* a compressed batch is one compressed stream of all its records, decompressed under a size bound.

Decoding raises the typed errors of :mod:`decoders.errors`; turning them into
:class:`~decoders.log.types.BatchError` items is the segment reader's job.
"""

from __future__ import annotations

from decoders.errors import (CorruptBatchError, CrcMismatchError, DecodeError, TruncatedError,
                             UnknownMagicError)
from decoders.log import legacy
from decoders.log.compression import DEFAULT_MAX_DECOMPRESSED, NONE, codec_name, decompress
from decoders.log.crc import crc32c
from decoders.log.layout import (ATTR_COMPRESSION_MASK, ATTR_CONTROL, ATTR_DELETE_HORIZON,
                                 ATTR_TIMESTAMP_TYPE, ATTR_TRANSACTIONAL, BATCH_V2_HEADER,
                                 BATCH_V2_HEADER_SIZE, CREATE_TIME, HEADER_PROBE, LOG_APPEND_TIME,
                                 LOG_OVERHEAD, MAGIC_OFFSET, MAGIC_V0, MAGIC_V1, MAGIC_V2, PREFIX,
                                 V2_CRC_START, V2_MIN_LENGTH, BatchV2Header)
from decoders.log.records import apply_control, parse_records
from decoders.log.types import RecordBatch


def read_magic(entry: bytes) -> int:
    """The signed int8 at byte 16 that selects the format."""
    if len(entry) < HEADER_PROBE:
        raise TruncatedError(HEADER_PROBE, len(entry), stage="batch")
    magic = entry[MAGIC_OFFSET]
    return magic - 256 if magic > 127 else magic


def decode_entry(entry: bytes, file_position: int = 0, *,
                 max_decompressed: int = DEFAULT_MAX_DECOMPRESSED) -> RecordBatch:
    """Decode exactly one entry (its 12-byte prefix included) by its magic byte."""
    magic = read_magic(entry)
    base_offset, length = PREFIX.unpack_from(entry)
    if length + LOG_OVERHEAD != len(entry):
        raise CorruptBatchError(f"entry declares {length + LOG_OVERHEAD} byte(s), got {len(entry)}",
                                stage="batch", offset=base_offset)
    if magic == MAGIC_V2:
        return decode_batch_v2(entry, file_position, max_decompressed=max_decompressed)
    if magic in (MAGIC_V0, MAGIC_V1):
        return legacy.decode_message(entry, file_position, max_decompressed=max_decompressed)
    raise UnknownMagicError(magic, stage="batch", offset=base_offset)


def read_header_v2(entry: bytes) -> BatchV2Header:
    if len(entry) < BATCH_V2_HEADER_SIZE:
        raise CorruptBatchError(
            f"batch length {len(entry) - LOG_OVERHEAD} below the magic-2 minimum {V2_MIN_LENGTH}",
            stage="batch", offset=PREFIX.unpack_from(entry)[0])
    return BatchV2Header._make(BATCH_V2_HEADER.unpack_from(entry))


def decode_batch_v2(entry: bytes, file_position: int = 0, *,
                    max_decompressed: int = DEFAULT_MAX_DECOMPRESSED) -> RecordBatch:
    """Decode a complete magic-2 batch; CRC first, because nothing in a bad-CRC batch is trusted."""
    header = read_header_v2(entry)
    computed = crc32c(memoryview(entry)[V2_CRC_START:])
    if computed != header.crc:
        raise CrcMismatchError(f"CRC-32C stored {header.crc:#010x}, computed {computed:#010x}",
                               stage="batch", offset=header.base_offset)
    attributes = header.attributes
    codec = attributes & ATTR_COMPRESSION_MASK
    is_log_append_time = bool(attributes & ATTR_TIMESTAMP_TYPE)
    try:
        compression = codec_name(codec)
        payload = entry[BATCH_V2_HEADER_SIZE:]
        if codec != NONE:
            payload = decompress(codec, payload, magic=MAGIC_V2, max_size=max_decompressed)
        records = parse_records(
            payload, header.records_count, base_offset=header.base_offset,
            base_timestamp=header.base_timestamp,
            log_append_time=header.max_timestamp if is_log_append_time else None)
        if attributes & ATTR_CONTROL:
            apply_control(records)
    except DecodeError as exc:
        exc.at(stage="batch", offset=header.base_offset if exc.offset is None else None)
        raise
    return RecordBatch(
        file_position=file_position,
        base_offset=header.base_offset,
        last_offset=header.base_offset + header.last_offset_delta,
        batch_length=len(entry),
        partition_leader_epoch=header.partition_leader_epoch,
        magic=MAGIC_V2,
        crc=header.crc,
        crc_valid=True,
        attributes=attributes,
        compression=compression,
        timestamp_type=LOG_APPEND_TIME if is_log_append_time else CREATE_TIME,
        is_transactional=bool(attributes & ATTR_TRANSACTIONAL),
        is_control=bool(attributes & ATTR_CONTROL),
        delete_horizon_ms=header.base_timestamp if attributes & ATTR_DELETE_HORIZON else None,
        base_timestamp=header.base_timestamp,
        max_timestamp=header.max_timestamp,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        records_count=header.records_count,
        records=records,
    )

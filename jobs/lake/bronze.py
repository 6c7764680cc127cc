"""The bronze contract: one row per record of a `__consumer_offsets` snapshot.

Segment ingest (Spark) and live capture (kafka-python) both produce rows of exactly this shape,
so everything downstream reads one table, ``raw_records``, whatever the snapshot's origin.
Columns a capture cannot observe (producer ids, control records, file positions) are null there.
"""

from __future__ import annotations

import pyarrow as pa

RAW_RECORDS_COLUMNS: tuple[tuple[str, pa.DataType, str], ...] = (
    ("snapshot_id", pa.string(), "id of the snapshot the row was read from"),
    ("partition", pa.int32(), "partition of __consumer_offsets"),
    ("offset", pa.int64(), "log offset of the record"),
    ("timestamp", pa.int64(), "record timestamp, ms since the epoch (-1 when none)"),
    ("timestamp_type", pa.string(), "CreateTime, LogAppendTime or NoTimestampType"),
    ("batch_base_offset", pa.int64(), "base offset of the batch (wrapper offset for magic 0/1)"),
    ("producer_id", pa.int64(), "producer id of the batch, -1 for non-transactional writes"),
    ("producer_epoch", pa.int16(), "producer epoch of the batch, -1 when none"),
    ("is_transactional", pa.bool_(), "batch attribute bit 4"),
    ("is_control", pa.bool_(), "batch attribute bit 5: a transaction marker"),
    ("control_type", pa.string(), "COMMIT or ABORT for a marker (or the numeric type), else null"),
    ("coordinator_epoch", pa.int32(), "coordinator epoch of a transaction marker, else null"),
    ("magic", pa.int8(), "record format: 0, 1 or 2"),
    ("compression", pa.string(), "none, gzip, snappy, lz4 or zstd"),
    ("crc_valid", pa.bool_(), "whether the batch CRC matched"),
    ("key", pa.binary(), "raw record key"),
    ("value", pa.binary(), "raw record value; null is a tombstone"),
    ("source_file", pa.string(), "segment file (or capture source) the record came from"),
    ("file_position", pa.int64(), "byte position of the batch in source_file"),
)

# A capture directory holds ``manifest.json`` and the Parquet files of ``raw_records`` in this
# subdirectory, readable as one table.
CAPTURE_RECORDS_DIR = "raw_records"

RAW_RECORDS_SCHEMA = pa.schema([pa.field(name, dtype) for name, dtype, _ in RAW_RECORDS_COLUMNS])

QUARANTINE_COLUMNS: tuple[tuple[str, pa.DataType, str], ...] = (
    ("snapshot_id", pa.string(), "id of the snapshot"),
    ("stage", pa.string(), "where reading failed: batch, segment, key, value, ..."),
    ("reason", pa.string(), "typed reason: bad_crc, bad_compression, truncated, unknown_version, ..."),
    ("message", pa.string(), "the error in words"),
    ("partition", pa.int32(), "partition of __consumer_offsets, when known"),
    ("offset", pa.int64(), "log offset (or batch base offset), when known"),
    ("source_file", pa.string(), "segment file the bytes came from"),
    ("file_position", pa.int64(), "byte position in source_file"),
    ("length", pa.int64(), "number of bytes the failing unit spans"),
    ("raw", pa.binary(), "the raw bytes, capped (see raw_truncated)"),
    ("raw_truncated", pa.bool_(), "whether raw holds only a prefix of the unit"),
    ("key", pa.binary(), "record key, for a record that failed to decode"),
    ("value", pa.binary(), "record value, for a record that failed to decode"),
)

QUARANTINE_SCHEMA = pa.schema([pa.field(name, dtype) for name, dtype, _ in QUARANTINE_COLUMNS])

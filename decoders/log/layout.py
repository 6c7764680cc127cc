"""Byte layouts of the on-disk log formats, written once and shared by the reader and the writer.

Every entry of a ``.log`` file, whatever its format, starts with the same 12-byte prefix
(``offset:int64``, ``length:int32`` = bytes that follow); byte 16 is the ``magic`` that selects
the format. Magic 2 is a record batch (Kafka >= 0.11); magic 0 and 1 are legacy messages.
All integers are big-endian.
"""

from __future__ import annotations

import struct
from collections import namedtuple


def _layout(name: str, fields: tuple[tuple[str, str, str], ...]):
    """Compile an annotated ``(field, struct code, note)`` table into a Struct and a namedtuple."""
    codec = struct.Struct(">" + "".join(code for _, code, _ in fields))
    return codec, namedtuple(name, [field for field, _, _ in fields])


# ----- common prefix -----------------------------------------------------------------------------
LOG_OVERHEAD = 12          # offset:int64 + length:int32
MAGIC_OFFSET = 16          # byte that selects the format, in every format
HEADER_PROBE = MAGIC_OFFSET + 1   # bytes read before knowing which format follows
PREFIX = struct.Struct(">qi")

# ----- magic 2: record batch (KIP-98) ------------------------------------------------------------
MAGIC_V2 = 2
BATCH_V2_FIELDS = (
    ("base_offset", "q", "offset of the first record; kept after compaction"),
    ("batch_length", "i", "bytes after this field; total batch size = batch_length + 12"),
    ("partition_leader_epoch", "i", "-1 if unknown; NOT covered by the CRC (set by the leader)"),
    ("magic", "b", "2"),
    ("crc", "I", "CRC-32C (Castagnoli) of bytes [21, end of batch)"),
    ("attributes", "h", "see the ATTR_* masks below"),
    ("last_offset_delta", "i", "last offset = base + delta, kept even if compaction removed it"),
    ("base_timestamp", "q", "first record's timestamp, or the delete horizon (ATTR_DELETE_HORIZON)"),
    ("max_timestamp", "q", "max record timestamp, or the broker's append time (LogAppendTime)"),
    ("producer_id", "q", "-1 = none"),
    ("producer_epoch", "h", "-1 = none"),
    ("base_sequence", "i", "-1 = none"),
    ("records_count", "i", "may be 0: empty batches keep producer state after compaction"),
)
BATCH_V2_HEADER, BatchV2Header = _layout("BatchV2Header", BATCH_V2_FIELDS)
BATCH_V2_HEADER_SIZE = BATCH_V2_HEADER.size                  # 61
V2_CRC_OFFSET = 17
V2_CRC_START = 21          # the CRC covers attributes .. end; the leader epoch is rewritten later
V2_MIN_LENGTH = BATCH_V2_HEADER_SIZE - LOG_OVERHEAD          # smallest legal batch_length (49)

ATTR_COMPRESSION_MASK = 0x07
ATTR_TIMESTAMP_TYPE = 0x08       # 0 CreateTime, 1 LogAppendTime
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
ATTR_DELETE_HORIZON = 0x40       # base_timestamp holds the delete horizon (KIP-534)

# Control record (the only record of a control batch): key = version + type, value (ABORT/COMMIT)
# = version + coordinatorEpoch. Newer versions are read with this, the highest known, layout.
CONTROL_KEY = struct.Struct(">hh")
END_TXN_MARKER_VALUE = struct.Struct(">hi")
CONTROL_ABORT = 0
CONTROL_COMMIT = 1
# Kafka's names of the end-transaction markers (ControlRecordType); other types keep their number.
CONTROL_TYPE_NAMES = {CONTROL_ABORT: "ABORT", CONTROL_COMMIT: "COMMIT"}

# ----- magic 0 and 1: legacy messages ------------------------------------------------------------
MAGIC_V0 = 0
MAGIC_V1 = 1
LEGACY_FIELDS = (
    ("offset", "q", "absolute; for a magic-1 wrapper the LAST inner offset"),
    ("message_size", "i", "bytes after this field"),
    ("crc", "I", "CRC-32 (IEEE, zlib) of magic .. end of message"),
    ("magic", "b", "0 or 1"),
    ("attributes", "b", "bits 0-2 codec; magic 1: bit 3 timestamp type"),
)
LEGACY_HEADER, LegacyHeader = _layout("LegacyHeader", LEGACY_FIELDS)
LEGACY_HEADER_SIZE = LEGACY_HEADER.size                      # 18
LEGACY_CRC_START = 16      # the CRC covers magic .. end
LEGACY_TIMESTAMP = struct.Struct(">q")                       # magic 1 only, after attributes
LEGACY_LENGTH = struct.Struct(">i")                          # key and value lengths, -1 = null
# message_size minimum: crc + magic + attributes (+ timestamp) + key length + value length
LEGACY_MIN_SIZE = {MAGIC_V0: 4 + 1 + 1 + 4 + 4, MAGIC_V1: 4 + 1 + 1 + 8 + 4 + 4}
LEGACY_ATTR_COMPRESSION_MASK = 0x07
LEGACY_ATTR_TIMESTAMP_TYPE = 0x08

# The smallest entry of any format; a length below it cannot frame anything, so it ends a walk.
MIN_ENTRY_LENGTH = LEGACY_MIN_SIZE[MAGIC_V0]

# ----- shared vocabulary -------------------------------------------------------------------------
CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"
NO_TIMESTAMP_TYPE = "NoTimestampType"   # magic 0 has no timestamps (Kafka's name for it)
NO_TIMESTAMP = -1

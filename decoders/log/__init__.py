"""Log-segment framing: ``.log`` files -> record batches -> records (pure Python, no Spark).

Layers: :mod:`layout` (byte layouts) -> :mod:`compression`/:mod:`crc` -> :mod:`records`,
:mod:`batch`, :mod:`legacy` (one entry) -> :mod:`framing`/:mod:`segment` (files, byte ranges) and
:mod:`directory` (partition and log dirs). :mod:`writer` is the encoder for tests and fixtures.
"""

from decoders.log.batch import decode_entry
from decoders.log.compression import DEFAULT_MAX_DECOMPRESSED
from decoders.log.crc import CRC32C_BACKEND
from decoders.log.layout import CONTROL_TYPE_NAMES
from decoders.log.directory import SegmentFile, list_segments, partition_segments
from decoders.log.segment import (DEFAULT_MAX_BATCH_BYTES, batch_positions, iter_partition_dir,
                                  iter_segment, plan_ranges)
from decoders.log.types import BatchError, LogRecord, RecordBatch, SegmentItem, TruncatedTail

__all__ = ["CONTROL_TYPE_NAMES",
    "CRC32C_BACKEND", "DEFAULT_MAX_BATCH_BYTES", "DEFAULT_MAX_DECOMPRESSED", "BatchError",
    "LogRecord", "RecordBatch", "SegmentFile", "SegmentItem", "TruncatedTail", "batch_positions",
    "decode_entry", "iter_partition_dir", "iter_segment", "list_segments", "partition_segments",
    "plan_ranges",
]

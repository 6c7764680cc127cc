"""What the segment reader yields: decoded batches, undecodable batches, and a truncated tail.

Nothing is dropped silently: a batch that cannot be trusted (bad CRC, corrupt compression, bad
record framing, unknown magic) is a :class:`BatchError` that keeps its raw bytes, and bytes at the end
of a file that do not form a complete batch are a :class:`TruncatedTail`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Raw bytes kept on BatchError/TruncatedTail are capped so a corrupt length cannot force a huge copy.
RAW_CAP = 16 * 1024 * 1024


@dataclass(slots=True)
class LogRecord:
    """One record. ``value is None`` is a tombstone. Control records (COMMIT/ABORT markers) carry
    ``control_type`` (0 ABORT, 1 COMMIT, other KRaft types as their number) and, for the two
    end-transaction markers, ``coordinator_epoch``."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    control_type: int | None = None
    coordinator_epoch: int | None = None

    @property
    def is_tombstone(self) -> bool:
        return self.value is None


@dataclass(slots=True)
class RecordBatch:
    """A magic-2 record batch, or one top-level legacy (magic 0/1) message with any compressed
    wrapper expanded into its inner records (legacy batches have no producer: ids are -1)."""

    file_position: int
    base_offset: int
    last_offset: int
    batch_length: int            # total bytes on disk, including the 12-byte offset+length prefix
    partition_leader_epoch: int
    magic: int
    crc: int                     # as stored
    crc_valid: bool              # always True for yielded batches: bad CRCs become BatchError
    attributes: int
    compression: str             # none | gzip | snappy | lz4 | zstd
    timestamp_type: str          # CreateTime | LogAppendTime | NoTimestampType (magic 0)
    is_transactional: bool
    is_control: bool
    delete_horizon_ms: int | None
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int
    records: list[LogRecord]
    recovered: bool = False      # read after a resynchronisation past damage in this file


@dataclass(slots=True)
class BatchError:
    """A batch whose framing (length) is known but whose content cannot be trusted or decoded.

    ``reason`` is the ``.reason`` of the typed error (``bad_crc``, ``bad_compression``,
    ``corrupt_batch``, ``unknown_magic``, ``truncated``, ``invalid_length``, ``batch_too_large``);
    ``raw`` holds the batch bytes as far as present, capped at :data:`RAW_CAP`
    (``raw_truncated`` says so). ``length`` runs up to the next entry whose checksum verifies
    (reading resumes there), or to the end of the file if none does."""

    file_position: int
    length: int
    reason: str
    message: str
    raw: bytes
    raw_truncated: bool = False
    base_offset: int | None = None
    magic: int | None = None
    recovered: bool = False

    stage = "batch"   # where reading failed, as quarantine rows and dump objects name it

    @property
    def offset(self) -> int | None:
        return self.base_offset


@dataclass(slots=True)
class TruncatedTail:
    """Bytes at the end of a file that do not hold a complete batch: normal after a crash or for
    the active segment (Kafka's DumpLogSegments: "Found N invalid bytes at the end").
    ``declared_length`` is the batch size the prefix announced (None if not even 12 bytes)."""

    file_position: int
    length: int
    raw: bytes
    raw_truncated: bool = False
    declared_length: int | None = None
    recovered: bool = False

    stage = "segment"
    reason = "truncated_tail"
    offset = None  # no batch header to read it from

    @property
    def message(self) -> str:
        return f"{self.length} byte(s) at the end of the file do not form a complete batch"


SegmentItem = RecordBatch | BatchError | TruncatedTail

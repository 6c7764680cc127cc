"""Typed errors raised by the codec and the segment reader.

Every error carries the stage it happened in (``key``, ``value``, ``batch``, ...) and, where the
caller knows them, the partition and log offset, so a quarantined row says exactly what failed
where. Callers decide whether to skip or fail; nothing here prints or logs.
"""

from __future__ import annotations


class DecodeError(Exception):
    """Base class of every decoding failure.

    ``stage`` names the layer (``key``, ``value``, ``embedded``, ``batch``, ``record``, ``segment``),
    ``path`` the field being read (``members[0].memberId``); ``partition`` and ``offset`` are filled
    in by callers that know the log position (see :meth:`at`).
    """

    reason = "decode_error"

    def __init__(self, message: str, *, stage: str | None = None, path: str | None = None,
                 partition: int | None = None, offset: int | None = None):
        super().__init__(message)
        self.message = message
        self.stage = stage
        self.path = path
        self.partition = partition
        self.offset = offset

    def at(self, *, stage: str | None = None, partition: int | None = None,
           offset: int | None = None) -> DecodeError:
        """Fill in context the raising layer did not know; returns self for ``raise e.at(...)``."""
        if stage is not None and self.stage is None:
            self.stage = stage
        if partition is not None:
            self.partition = partition
        if offset is not None:
            self.offset = offset
        return self

    def describe(self) -> str:
        where = []
        if self.stage:
            where.append(f"stage={self.stage}")
        if self.path:
            where.append(f"field={self.path}")
        if self.partition is not None:
            where.append(f"partition={self.partition}")
        if self.offset is not None:
            where.append(f"offset={self.offset}")
        return f"{self.message} ({', '.join(where)})" if where else self.message

    def __str__(self) -> str:
        return self.describe()


class TruncatedError(DecodeError):
    """The buffer ended before a field could be read: ``needed`` bytes, only ``remaining`` left."""

    reason = "truncated"

    def __init__(self, needed: int, remaining: int, **context):
        super().__init__(f"truncated: needed {needed} byte(s), only {remaining} left", **context)
        self.needed = needed
        self.remaining = remaining


class InvalidLengthError(DecodeError):
    """A length, count or varint is negative where it may not be, too long, or malformed."""

    reason = "invalid_length"


class InvalidUtf8Error(DecodeError):
    """A string field's bytes are not valid UTF-8."""

    reason = "invalid_utf8"


class UnknownRecordTypeError(DecodeError):
    """The key's int16 record type has no description. Decoders return an ``UnknownRecord``
    rather than raising this; it exists for callers that want strictness."""

    reason = "unknown_type"

    def __init__(self, record_type: int, **context):
        super().__init__(f"unknown record type {record_type}", **context)
        self.record_type = record_type


class UnknownVersionError(DecodeError):
    """The value's int16 version is outside the record type's valid versions."""

    reason = "unknown_version"

    def __init__(self, record_type: int, version: int, **context):
        super().__init__(f"unknown value version {version} for record type {record_type}", **context)
        self.record_type = record_type
        self.version = version


class TrailingBytesError(DecodeError):
    """Bytes were left after a struct was read completely (only raised in strict mode)."""

    reason = "trailing_bytes"

    def __init__(self, count: int, **context):
        super().__init__(f"{count} trailing byte(s) after the value", **context)
        self.count = count


class CorruptBatchError(DecodeError):
    """A record batch or legacy message cannot be read: bad magic, bad CRC, bad framing."""

    reason = "corrupt_batch"


class CrcMismatchError(CorruptBatchError):
    """The stored CRC does not match the bytes it covers."""

    reason = "bad_crc"


class CompressionError(CorruptBatchError):
    """A compressed payload cannot be decompressed, or its codec is unknown."""

    reason = "bad_compression"


class DecompressedTooLargeError(CompressionError):
    """A batch's records decompress to more than the reader's configured bound (the
    ``max_decompressed`` limit): quarantined as too large, never allocated."""

    reason = "batch_too_large"


class UnknownMagicError(CorruptBatchError):
    """Byte 16 of a log entry is not a message format this reader knows (0, 1 or 2)."""

    reason = "unknown_magic"

    def __init__(self, magic: int, **context):
        super().__init__(f"unknown message format magic {magic}", **context)
        self.magic = magic


class BatchTooLargeError(CorruptBatchError):
    """A batch (or its decompressed records) is larger than the reader's configured bound.

    Raised instead of allocating: a corrupt or hostile length must not exhaust memory."""

    reason = "batch_too_large"

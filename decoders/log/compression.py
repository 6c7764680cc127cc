"""Bounded decompression (and, for the writer, compression) of batch payloads.

Codec ids are the low 3 attribute bits: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd (magic 2 only).
Formats as Kafka writes them: gzip = a gzip stream; snappy = snappy-java's *xerial* framing
(``82 53 4e 41 50 50 59 00`` + version:int32 + compatible:int32, then int32-length-prefixed raw
snappy blocks; some non-Java producers wrote plain raw snappy, accepted too); lz4 = an LZ4 frame
(see :mod:`lz4frame`); zstd = a zstd frame.

Every decompressor is bounded by ``max_size``: a hostile payload (a "zip bomb") raises
CompressionError instead of exhausting memory. zstd and lz4 decode into a fixed buffer that grows by
doubling up to the bound; gzip uses zlib's ``max_length``; snappy announces its size up front.
"""

from __future__ import annotations

import struct
import zlib

import cramjam

from decoders.errors import CompressionError, DecompressedTooLargeError
from decoders.log import lz4frame

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
CODEC_IDS = {name: codec for codec, name in CODEC_NAMES.items()}

DEFAULT_MAX_DECOMPRESSED = 64 * 1024 * 1024

XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = struct.Struct(">8sii")       # magic, version, compatible version
XERIAL_VERSION = 1
XERIAL_BLOCK_SIZE = 32 * 1024                # snappy-java's default block size
_BLOCK_LENGTH = struct.Struct(">i")

_GZIP_OR_ZLIB = 32 + zlib.MAX_WBITS          # auto-detect the header
_GZIP_WBITS = 16 + zlib.MAX_WBITS
_INITIAL_GUESS = 16 * 1024
_GUESS_RATIO = 8
_BUFFER_FULL = "failed to write whole buffer"   # cramjam's message when the output buffer is full


def codec_name(codec: int) -> str:
    try:
        return CODEC_NAMES[codec]
    except KeyError:
        raise CompressionError(f"unknown compression codec {codec}") from None


def decompress(codec: int, data: bytes | memoryview, *, magic: int,
               max_size: int = DEFAULT_MAX_DECOMPRESSED) -> bytes:
    """Decompress one batch payload; CompressionError if corrupt, unknown or larger than max_size."""
    if codec == ZSTD and magic < 2:
        raise CompressionError(f"zstd is not allowed in magic {magic} messages")
    try:
        if codec == GZIP:
            return _gunzip(data, max_size)
        if codec == SNAPPY:
            return _unsnappy(data, max_size)
        if codec == LZ4:
            # Magic 0 frames carry Kafka's historically wrong header checksum: ignore it, as Kafka does.
            frame = lz4frame.with_valid_header_checksum(data) if magic == 0 else data
            return _into_growing_buffer(cramjam.lz4.decompress_into, frame, max_size)
        if codec == ZSTD:
            return _into_growing_buffer(cramjam.zstd.decompress_into, data, max_size)
    except (cramjam.DecompressionError, zlib.error, ValueError) as exc:
        raise CompressionError(f"corrupt {CODEC_NAMES[codec]} payload: {exc}") from exc
    raise CompressionError(f"unknown compression codec {codec}")


def _too_large(max_size: int) -> CompressionError:
    return DecompressedTooLargeError(f"decompressed payload exceeds the {max_size}-byte bound")


def _into_growing_buffer(decompress_into, data, max_size: int) -> bytes:
    size = min(max_size, max(_INITIAL_GUESS, len(data) * _GUESS_RATIO))
    while True:
        out = bytearray(size)
        try:
            written = decompress_into(data, out)
        except cramjam.DecompressionError as exc:
            if _BUFFER_FULL not in str(exc):
                raise
            if size >= max_size:
                raise _too_large(max_size) from None
            size = min(max_size, size * 2)
            continue
        return bytes(memoryview(out)[:written])


def _gunzip(data, max_size: int) -> bytes:
    out = bytearray()
    pending = bytes(data)
    while pending:          # Java's GZIPInputStream reads concatenated members too
        inflater = zlib.decompressobj(_GZIP_OR_ZLIB)
        while pending:
            out += inflater.decompress(pending, max_size + 1 - len(out))
            if len(out) > max_size:
                raise _too_large(max_size)
            pending = inflater.unconsumed_tail
        if not inflater.eof:
            raise CompressionError("corrupt gzip payload: stream ends early")
        pending = inflater.unused_data
    return bytes(out)


def _unsnappy(data, max_size: int) -> bytes:
    data = bytes(data)
    if not data.startswith(XERIAL_MAGIC):
        return _snappy_raw(data, max_size)
    if len(data) < XERIAL_HEADER.size:
        raise CompressionError("corrupt snappy payload: xerial header truncated")
    out, pos = bytearray(), XERIAL_HEADER.size
    while pos < len(data):
        if pos + 4 > len(data):
            raise CompressionError("corrupt snappy payload: xerial block length truncated")
        (length,) = _BLOCK_LENGTH.unpack_from(data, pos)
        pos += 4
        if length < 0 or pos + length > len(data):
            raise CompressionError(f"corrupt snappy payload: xerial block of {length} byte(s)")
        out += _snappy_raw(data[pos:pos + length], max_size - len(out))
        pos += length
    return bytes(out)


def _snappy_raw(block: bytes, max_size: int) -> bytes:
    if cramjam.snappy.decompress_raw_len(block) > max_size:
        raise CompressionError(f"decompressed payload exceeds the bound ({max_size} byte(s) left)")
    return bytes(cramjam.snappy.decompress_raw(block))


def compress(codec: int, data: bytes, *, magic: int) -> bytes:
    """Compress a payload the way Kafka's producers do (used by the writer, tests and fixtures)."""
    if codec == GZIP:
        packer = zlib.compressobj(6, zlib.DEFLATED, _GZIP_WBITS)
        return packer.compress(data) + packer.flush()
    if codec == SNAPPY:
        blocks = [XERIAL_HEADER.pack(XERIAL_MAGIC, XERIAL_VERSION, XERIAL_VERSION)]
        for start in range(0, len(data), XERIAL_BLOCK_SIZE):
            raw = bytes(cramjam.snappy.compress_raw(data[start:start + XERIAL_BLOCK_SIZE]))
            blocks += [_BLOCK_LENGTH.pack(len(raw)), raw]
        return b"".join(blocks)
    if codec == LZ4:
        return lz4frame.compress_frame(data, broken_header_checksum=magic == 0)
    if codec == ZSTD:
        if magic < 2:
            raise CompressionError(f"zstd is not allowed in magic {magic} messages")
        return bytes(cramjam.zstd.compress(data, level=3))
    raise CompressionError(f"cannot compress with codec {codec}")

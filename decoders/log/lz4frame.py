"""LZ4 frames as Kafka writes them, including the magic-0 header-checksum quirk.

Frame = magic ``04 22 4d 18`` | FLG | BD | [content size:8] | [dict id:4] | HC | blocks | end mark.
HC is ``(xxh32(FLG .. last descriptor byte) >> 8) & 0xff``. Kafka's original lz4 stream (magic 0,
KAFKA-3160) hashed from the frame magic instead of from FLG, so magic-0 frames carry a wrong HC;
Kafka ignores HC when reading magic 0 and so do we: we re-stamp the correct HC before handing the
frame to the real decoder. The writer reproduces the quirk for magic 0 so tests can exercise it.
"""

from __future__ import annotations

import struct

import cramjam

FRAME_MAGIC = b"\x04\x22\x4d\x18"
FLG_VERSION_01 = 0x40
FLG_BLOCK_INDEPENDENCE = 0x20
FLG_CONTENT_SIZE = 0x08
FLG_DICT_ID = 0x01
BD_64KB = 0x40                      # block max size id 4 = 64 KiB, what Kafka's stream writes
BLOCK_SIZE = 64 * 1024
BLOCK_UNCOMPRESSED = 0x80000000     # high bit of a block size: the block is stored as is
_BLOCK_HEADER = struct.Struct("<I")
END_MARK = b"\x00\x00\x00\x00"

_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32 of a short input (frame descriptors are at most 18 bytes): pure Python is enough."""
    n, pos = len(data), 0
    if n >= 16:
        acc = [(seed + _P1 + _P2) & _M32, (seed + _P2) & _M32, seed & _M32, (seed - _P1) & _M32]
        while pos + 16 <= n:
            for i in range(4):
                lane = int.from_bytes(data[pos + 4 * i:pos + 4 * i + 4], "little")
                acc[i] = (_rotl((acc[i] + lane * _P2) & _M32, 13) * _P1) & _M32
            pos += 16
        h = (_rotl(acc[0], 1) + _rotl(acc[1], 7) + _rotl(acc[2], 12) + _rotl(acc[3], 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while pos + 4 <= n:
        h = (_rotl((h + int.from_bytes(data[pos:pos + 4], "little") * _P3) & _M32, 17) * _P4) & _M32
        pos += 4
    while pos < n:
        h = (_rotl((h + data[pos] * _P5) & _M32, 11) * _P1) & _M32
        pos += 1
    h = ((h ^ (h >> 15)) * _P2) & _M32
    h = ((h ^ (h >> 13)) * _P3) & _M32
    return h ^ (h >> 16)


def header_checksum(frame_start: bytes, *, broken: bool) -> int:
    """HC byte for a descriptor; ``frame_start`` runs from the frame magic to the byte before HC."""
    return (xxh32(frame_start if broken else frame_start[4:]) >> 8) & 0xFF


def descriptor_end(frame: bytes | memoryview) -> int:
    """Index of the HC byte, or ValueError if ``frame`` does not start with a frame descriptor."""
    if len(frame) < 7 or bytes(frame[:4]) != FRAME_MAGIC:
        raise ValueError("not an LZ4 frame (bad magic)")
    flg = frame[4]
    end = 6 + (8 if flg & FLG_CONTENT_SIZE else 0) + (4 if flg & FLG_DICT_ID else 0)
    if len(frame) <= end:
        raise ValueError("LZ4 frame descriptor truncated")
    return end


def with_valid_header_checksum(frame: bytes | memoryview) -> bytes | memoryview:
    """The frame with its HC byte recomputed (copying only when it was wrong)."""
    end = descriptor_end(frame)
    expected = header_checksum(bytes(frame[:end]), broken=False)
    if frame[end] == expected:
        return frame
    fixed = bytearray(frame)
    fixed[end] = expected
    return fixed


def compress_frame(data: bytes, *, broken_header_checksum: bool = False) -> bytes:
    """An LZ4 frame the way Kafka's ``KafkaLZ4BlockOutputStream`` writes it: independent 64 KiB
    blocks, no block or content checksum, an end mark."""
    head = FRAME_MAGIC + bytes([FLG_VERSION_01 | FLG_BLOCK_INDEPENDENCE, BD_64KB])
    parts = [head, bytes([header_checksum(head, broken=broken_header_checksum)])]
    view = memoryview(data)
    for start in range(0, len(data), BLOCK_SIZE):
        block = view[start:start + BLOCK_SIZE]
        packed = bytes(cramjam.lz4.compress_block(block, store_size=False))
        if len(packed) >= len(block):
            parts += [_BLOCK_HEADER.pack(len(block) | BLOCK_UNCOMPRESSED), bytes(block)]
        else:
            parts += [_BLOCK_HEADER.pack(len(packed)), packed]
    parts.append(END_MARK)
    return b"".join(parts)

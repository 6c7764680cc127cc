"""Checksums of the log formats: CRC-32C (Castagnoli) for magic 2, CRC-32 (IEEE) for magic 0/1.

CRC-32C comes from the ``crc32c`` wheel (hardware-accelerated, SSE4.2/ARMv8) when it is installed;
otherwise a table-driven pure-Python fallback is used. The fallback is correct but slow (a few MB/s),
so production installs should have the wheel; ``CRC32C_BACKEND`` says which one is active.
"""

from __future__ import annotations

import zlib

_CASTAGNOLI_REFLECTED = 0x82F63B78


def _make_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _CASTAGNOLI_REFLECTED if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_TABLE = _make_table()


def crc32c_pure(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """Table-driven CRC-32C; ``crc`` continues a previous result."""
    table = _TABLE
    crc ^= 0xFFFFFFFF
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


try:
    from crc32c import crc32c as _crc32c_wheel
except ImportError:  # the wheel is optional; keep working without it
    _crc32c_wheel = None

if _crc32c_wheel is not None:
    CRC32C_BACKEND = "crc32c"

    def crc32c(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
        """CRC-32C (Castagnoli), as Kafka computes it for magic-2 batches; ``crc`` continues a
        previous result, so a large batch can be checked piece by piece."""
        return _crc32c_wheel(data, crc)
else:
    CRC32C_BACKEND = "pure-python"

    def crc32c(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
        """CRC-32C (Castagnoli), as Kafka computes it for magic-2 batches; ``crc`` continues a
        previous result, so a large batch can be checked piece by piece."""
        return crc32c_pure(data, crc)


def crc32(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """CRC-32 (IEEE 802.3, zlib), as Kafka computes it for legacy magic 0/1 messages; ``crc``
    continues a previous result."""
    return zlib.crc32(data, crc) & 0xFFFFFFFF

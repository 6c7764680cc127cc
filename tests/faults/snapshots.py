"""Snapshots the fault suite damages or inflates, built byte-exactly with ``decoders.log.writer``."""

from __future__ import annotations

import os
import random
import shutil
import struct
from pathlib import Path

from decoders.codec import encode_key, encode_value
from decoders.log import batch_positions
from decoders.log.writer import encode_batch, write_segment

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "kafka-4.3.1"
SEGMENT = "00000000000000000000.log"
T0 = 1_700_000_000_000


def copy_sample(root: Path) -> Path:
    """A copy of the bundled sample (segment directories only) to damage."""
    out = root / "kafka-4.3.1"
    out.mkdir(parents=True)
    for part in sorted(SAMPLE.glob("__consumer_offsets-*")):
        shutil.copytree(part, out / part.name)
    return out


def _assignment_with_user_data(size: int) -> bytes:
    """A valid ConsumerProtocolAssignment v0: no partitions, ``size`` bytes of userData."""
    block = random.Random(size).randbytes(4096)       # compressible, but not trivially
    user_data = (block * (size // len(block) + 1))[:size]
    return struct.pack(">hii", 0, 0, size) + user_data


def huge_group_record(group: str, size: int) -> tuple[bytes, bytes]:
    """A classic group's metadata (type 2, v3) whose one member's assignment is ``size`` bytes."""
    member = {"memberId": f"{group}-member", "groupInstanceId": None, "clientId": "client",
              "clientHost": "/127.0.0.1", "rebalanceTimeout": 300000, "sessionTimeout": 45000,
              "subscription": struct.pack(">hii", 0, 0, -1),
              "assignment": _assignment_with_user_data(size)}
    value = {"protocolType": "consumer", "generation": 1, "protocol": "range",
             "leader": member["memberId"], "currentStateTimestamp": T0, "members": [member]}
    return encode_key(2, {"group": group}), encode_value(2, 3, value)


def huge_records_snapshot(root: Path, count: int = 40, size: int = 48 << 20,
                          partitions: int = 4) -> Path:
    """``count`` zstd batches of one ``size``-byte valid record each, spread over partitions."""
    out = root / "huge"
    for p in range(partitions):
        groups = [i for i in range(count) if i % partitions == p]
        entries = []
        for offset, i in enumerate(groups):
            key, value = huge_group_record(f"huge-{i:02d}", size)
            entries.append(encode_batch([(key, value, T0 + i)], base_offset=offset,
                                        compression="zstd"))
        part = out / f"__consumer_offsets-{p}"
        part.mkdir(parents=True)
        write_segment(part / SEGMENT, entries)
    return out


# ---- damage: each returns a description and changes one segment of a sample copy in place ----

def _victim(snapshot: Path, partition: int = 2) -> tuple[Path, list[int]]:
    path = snapshot / f"__consumer_offsets-{partition}" / SEGMENT
    return path, batch_positions(path)


def set_length(snapshot: Path, change) -> tuple[int, int]:
    path, positions = _victim(snapshot)
    k = len(positions) // 2
    data = bytearray(path.read_bytes())
    (length,) = struct.unpack_from(">i", data, positions[k] + 8)
    struct.pack_into(">i", data, positions[k] + 8, change(length))
    path.write_bytes(bytes(data))
    return positions[k], positions[k + 1] - positions[k]


def overwrite(snapshot: Path, make, at_fraction: float = 0.5, length: int = 300) -> tuple[int, int]:
    path, _ = _victim(snapshot)
    data = bytearray(path.read_bytes())
    start = int(len(data) * at_fraction)
    data[start:start + length] = make(length)
    path.write_bytes(bytes(data))
    return start, length


def insert(snapshot: Path, blob: bytes) -> int:
    path, positions = _victim(snapshot)
    k = len(positions) // 2
    data = path.read_bytes()
    path.write_bytes(data[:positions[k]] + blob + data[positions[k]:])
    return positions[k]


def truncate(snapshot: Path, keep_fraction: float = 0.6) -> int:
    path, _ = _victim(snapshot)
    size = int(os.path.getsize(path) * keep_fraction)
    os.truncate(path, size)
    return size


def flip_crc(snapshot: Path) -> int:
    path, positions = _victim(snapshot)
    data = bytearray(path.read_bytes())
    data[positions[3] + 18] ^= 0xFF
    path.write_bytes(bytes(data))
    return positions[3]

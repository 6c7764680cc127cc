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
    member = {"memberId": "member-1", "groupInstanceId": None, "clientId": "client",
              "clientHost": "/127.0.0.1", "rebalanceTimeout": 300000, "sessionTimeout": 45000,
              "subscription": struct.pack(">hii", 0, 0, -1),
              "assignment": _assignment_with_user_data(size)}
    value = {"protocolType": "consumer", "generation": 1, "protocol": "range",
             "leader": member["memberId"], "currentStateTimestamp": T0, "members": [member]}
    return encode_key(2, {"group": group}), encode_value(2, 3, value)


def huge_records_snapshot(root: Path, count: int = 40, size: int = 48 << 20,
                          partitions: int = 4) -> Path:
    """``count`` zstd batches of one ``size``-byte valid record each (classic groups
    ``huge-00`` ...), spread over ``partitions`` partitions. The value is encoded once: every
    group's member is the same, only the key (the group id) differs."""
    _, value = huge_group_record("huge", size)
    out = root / "huge"
    for p in range(partitions):
        entries = [encode_batch([(encode_key(2, {"group": f"huge-{i:02d}"}), value, T0 + i)],
                                base_offset=offset, compression="zstd")
                   for offset, i in enumerate(i for i in range(count) if i % partitions == p)]
        part = out / f"__consumer_offsets-{p}"
        part.mkdir(parents=True)
        write_segment(part / SEGMENT, entries)
    return out


# ---- damage: each changes one segment of a sample copy in place and returns the byte span of
# the damage (position, length), as the quarantine must report it ---------------------------------

def victim(snapshot: Path, partition: int) -> tuple[Path, list[int]]:
    path = snapshot / f"__consumer_offsets-{partition}" / SEGMENT
    return path, batch_positions(path)


def _span(positions: list[int], k: int, size: int) -> tuple[int, int]:
    end = positions[k + 1] if k + 1 < len(positions) else size
    return positions[k], end - positions[k]


def set_length(snapshot: Path, partition: int, k: int, change) -> tuple[int, int]:
    path, positions = victim(snapshot, partition)
    data = bytearray(path.read_bytes())
    (length,) = struct.unpack_from(">i", data, positions[k] + 8)
    struct.pack_into(">i", data, positions[k] + 8, change(length))
    path.write_bytes(bytes(data))
    return _span(positions, k, len(data))


def fill_batch(snapshot: Path, partition: int, k: int, make) -> tuple[int, int]:
    """Replace batch ``k``'s bytes by ``make(n)`` (zeros, noise) of the same length."""
    path, positions = victim(snapshot, partition)
    data = bytearray(path.read_bytes())
    start, length = _span(positions, k, len(data))
    data[start:start + length] = make(length)
    path.write_bytes(bytes(data))
    return start, length


def flip_crc(snapshot: Path, partition: int, k: int) -> tuple[int, int]:
    path, positions = victim(snapshot, partition)
    data = bytearray(path.read_bytes())
    data[positions[k] + 18] ^= 0xFF
    path.write_bytes(bytes(data))
    return _span(positions, k, len(data))


def insert(snapshot: Path, partition: int, k: int, blob: bytes) -> tuple[int, int]:
    path, positions = victim(snapshot, partition)
    data = path.read_bytes()
    path.write_bytes(data[:positions[k]] + blob + data[positions[k]:])
    return positions[k], len(blob)


def truncate(snapshot: Path, partition: int, k: int, keep: int) -> tuple[int, int]:
    """Cut the file ``keep`` bytes into batch ``k``: a crash in the middle of an append."""
    path, positions = victim(snapshot, partition)
    os.truncate(path, positions[k] + keep)
    return positions[k], keep


def drop_batch(snapshot: Path, partition: int, k: int) -> None:
    """The expected snapshot of a damaged one: batch ``k`` is simply not there."""
    path, positions = victim(snapshot, partition)
    data = path.read_bytes()
    start, length = _span(positions, k, len(data))
    path.write_bytes(data[:start] + data[start + length:])


def cut_at_batch(snapshot: Path, partition: int, k: int) -> None:
    path, positions = victim(snapshot, partition)
    os.truncate(path, positions[k])

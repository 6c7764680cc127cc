"""Throughput of the segment reader on realistic offset-commit batches.

Builds a synthetic ``__consumer_offsets`` segment (each batch = one consumer's commit of several
partitions: OffsetCommitKey type 1 + OffsetCommitValue v3), uncompressed and with lz4/zstd, then
reads it back with :func:`decoders.log.iter_segment` and prints batches/s, records/s and MB/s.

    python bench/bench_segments.py [--mb 32] [--codecs none,lz4,zstd]
"""

from __future__ import annotations

import argparse
import os
import random
import struct
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from decoders.log import CRC32C_BACKEND, RecordBatch, iter_segment  # noqa: E402
from decoders.log.writer import encode_batch  # noqa: E402

T0 = 1_760_000_000_000


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def offset_commit(group: str, topic: str, partition: int, offset: int, ts: int) -> tuple:
    key = struct.pack(">h", 1) + _string(group) + _string(topic) + struct.pack(">i", partition)
    value = struct.pack(">hqi", 3, offset, 5) + _string("") + struct.pack(">q", ts)
    return key, value, ts


def build_segment(path: Path, target_bytes: int, codec: str, seed: int = 7) -> tuple[int, int]:
    """Write commit batches until ``target_bytes``; returns (batches, records)."""
    rng = random.Random(seed)
    groups = [f"payments-consumer-{i:03d}" for i in range(200)]
    written = batches = records = offset = 0
    with open(path, "wb") as out:
        while written < target_bytes:
            group, ts = rng.choice(groups), T0 + offset
            partitions = rng.randint(1, 12)
            recs = [offset_commit(group, f"orders-{hash(group) % 7}", p, rng.randint(0, 10**9), ts)
                    for p in range(partitions)]
            entry = encode_batch(recs, base_offset=offset, compression=codec)
            out.write(entry)
            written += len(entry)
            batches, records, offset = batches + 1, records + partitions, offset + partitions
    return batches, records


def read_all(path: Path) -> tuple[int, int, float]:
    started = time.perf_counter()
    batches = records = 0
    for item in iter_segment(path):
        if not isinstance(item, RecordBatch):
            raise SystemExit(f"unexpected {item!r}")
        batches += 1
        records += len(item.records)
    return batches, records, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=32.0, help="segment size per codec (MB)")
    parser.add_argument("--codecs", default="none,lz4,zstd")
    args = parser.parse_args()
    print(f"CRC-32C backend: {CRC32C_BACKEND}; python {sys.version.split()[0]}")
    print(f"{'codec':6} {'file MB':>8} {'batches':>8} {'records':>9} {'batches/s':>10} "
          f"{'records/s':>10} {'MB/s':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for codec in args.codecs.split(","):
            path = Path(tmp) / f"{codec}.log"
            build_segment(path, int(args.mb * 1e6), codec)
            size_mb = os.path.getsize(path) / 1e6
            batches, records, seconds = read_all(path)
            print(f"{codec:6} {size_mb:8.1f} {batches:8d} {records:9d} {batches / seconds:10.0f} "
                  f"{records / seconds:10.0f} {size_mb / seconds:7.1f}")
            path.unlink()


if __name__ == "__main__":
    main()

"""Synthetic snapshots for ingest tests and benchmarks.

Keys and values are packed here by hand from the wire format (independent of the codec under
test); batches and segment files come from ``decoders.log.writer``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from decoders.log.writer import encode_batch, encode_control_batch


def _str16(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    return struct.pack(">h", 1) + _str16(group) + _str16(topic) + struct.pack(">i", partition)


def offset_commit_value(offset: int, commit_timestamp: int, leader_epoch: int = 7,
                        metadata: str = "") -> bytes:
    """OffsetCommitValue v3 (what 2.1 … 4.0 brokers write)."""
    return (struct.pack(">hqi", 3, offset, leader_epoch) + _str16(metadata)
            + struct.pack(">q", commit_timestamp))


@dataclass
class SyntheticSnapshot:
    root: Path
    records: int = 0                      # data + control records written
    per_partition: dict[int, int] = field(default_factory=dict)
    last_offset: dict[int, int] = field(default_factory=dict)


def write_offset_commits(root: Path, n_records: int, partitions: int = 3,
                         batch_size: int = 200, segment_batches: int = 500,
                         base_timestamp: int = 1_760_000_000_000) -> SyntheticSnapshot:
    """``n_records`` offset commits spread over ``partitions`` directories, several segments each."""
    snap = SyntheticSnapshot(root)
    for p in range(partitions):
        share = n_records // partitions + (1 if p < n_records % partitions else 0)
        directory = root / f"__consumer_offsets-{p}"
        directory.mkdir(parents=True, exist_ok=True)
        offset, segment, batches = 0, None, 0
        while offset < share:
            if segment is None or batches == segment_batches:
                if segment is not None:
                    segment.close()
                segment, batches = open(directory / f"{offset:020d}.log", "wb"), 0  # noqa: SIM115  (closed below)
            count = min(batch_size, share - offset)
            records = [(offset_commit_key(f"group-{p}-{(offset + i) % 97}", "orders", (offset + i) % 12),
                        offset_commit_value(offset + i, base_timestamp + offset + i),
                        base_timestamp + offset + i) for i in range(count)]
            segment.write(encode_batch(records, base_offset=offset))
            offset, batches = offset + count, batches + 1
        if segment is not None:
            segment.close()
        snap.records += share
        snap.per_partition[p] = share
        snap.last_offset[p] = share - 1
    return snap


def transactional_pair(group: str, first_offset: int, producer_id: int, commit: bool,
                       timestamp: int = 1_760_000_000_000) -> bytes:
    """A transactional batch of two offset commits followed by its COMMIT or ABORT marker."""
    records = [(offset_commit_key(group, "payments", p), offset_commit_value(100 + p, timestamp), timestamp)
               for p in range(2)]
    data = encode_batch(records, base_offset=first_offset, producer_id=producer_id,
                        producer_epoch=3, is_transactional=True)
    marker = encode_control_batch(1 if commit else 0, 11, offset=first_offset + 2,
                                  producer_id=producer_id, producer_epoch=3, timestamp=timestamp)
    return data + marker

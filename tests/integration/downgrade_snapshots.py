"""A hand-made snapshot for the downgrade comparison: what a 4.3.1 broker's workloads never
write but a real cluster's log can hold (a compacted log, a group used as a simple group before
KIP-848, a value version from the future), one case per partition of three.

Each group is named so that Kafka's own partitioner (``abs(String.hashCode) % partitions``)
puts it in the partition its records are written to, so the broker's Admin API answers for it
from that partition.
"""

from __future__ import annotations

import struct
from pathlib import Path

from decoders.codec import encode_key, encode_value
from decoders.log.writer import encode_batch
from support.scenarios import Scenario

PARTITIONS = 3


def java_string_hash(text: str) -> int:
    data = text.encode("utf-16-be")
    h = 0
    for (unit,) in struct.iter_unpack(">H", data):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_of(group_id: str, partitions: int = PARTITIONS) -> int:
    """Kafka's ``Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions``."""
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def group_on(prefix: str, partition: int, partitions: int = PARTITIONS) -> str:
    return next(f"{prefix}-{i}" for i in range(1000)
                if partition_of(f"{prefix}-{i}", partitions) == partition)


SIMPLE_THEN_CONSUMER = group_on("dg-simple-then-consumer", 0)
COMPACTED_DELETED = group_on("dg-compacted-deleted", 1)
CLASSIC_BYSTANDER = group_on("dg-classic", 1)
FUTURE_VERSION = group_on("dg-future-version", 2)
OFFSETS_BYSTANDER = group_on("dg-offsets", 2)
GROUPS = (SIMPLE_THEN_CONSUMER, COMPACTED_DELETED, CLASSIC_BYSTANDER, FUTURE_VERSION,
          OFFSETS_BYSTANDER)


def write_crafted_snapshot(root: Path) -> Path:
    """Partition 0: offsets committed by a simple group, then the same id joins as a KIP-848
    group (3.9's strict replay rejects it). Partition 1: only the tombstones left of a deleted
    consumer group after compaction, beside a classic group. Partition 2: an OffsetCommitValue
    claiming version 5 (v4 bytes), after another group's v3 commit."""
    (Scenario(SIMPLE_THEN_CONSUMER, partition=0, offset_commit_version=3)
     .offset_commit({"dg-topic": {0: 7}})
     .consumer_join("m1", ["dg-topic"]).compute_target({"m1": {"dg-topic": [0]}}).converge("m1")
     .write(root))
    deleted = (Scenario(COMPACTED_DELETED, partition=1, offset_commit_version=3)
               .consumer_join("m1", ["dg-topic"]).compute_target({"m1": {"dg-topic": [0]}})
               .converge("m1").offset_commit({"dg-topic": {0: 3}}).leave("m1").delete_group()
               .group(CLASSIC_BYSTANDER)
               .classic_rebalance({"c1": {"subscribe": ["dg-topic"], "assignment": {"dg-topic": [0]}}})
               .offset_commit({"dg-topic": {0: 11}}))
    deleted.compacted().write(root)
    directory = root / "__consumer_offsets-2"
    directory.mkdir(parents=True, exist_ok=True)
    records = [_commit(OFFSETS_BYSTANDER, 21, version=3), _commit(FUTURE_VERSION, 5, version=4, claimed=5)]
    (directory / f"{0:020d}.log").write_bytes(
        encode_batch([(k, v, 1_700_000_000_000) for k, v in records], base_offset=0))
    return root


def _commit(group: str, offset: int, *, version: int, claimed: int | None = None):
    key = encode_key(1, {"group": group, "topic": "dg-topic", "partition": 0})
    value = encode_value(1, version, {"offset": offset, "metadata": "", "commitTimestamp": 1_700_000_000_000})
    if claimed is not None:
        value = struct.pack(">h", claimed) + value[2:]
    return key, value

"""A realistic synthetic ``__consumer_offsets`` snapshot of a given size, cached between runs.

Shape (issue 10): 12 partitions; about 95% offset commits (OffsetCommitValue v3 and v4, the
latter with a topic id) by 5,000 groups over 200 topics x 16 partitions, one batch per commit
request (10-200 records); the rest KIP-848 consumer-group records (types 3, 5-8) and classic
group metadata (type 2); offset tombstones; a few transactional commits ended by COMMIT or ABORT
markers; some batches lz4 or zstd. Records are encoded with :mod:`decoders.codec` (offset commits
with ``struct``, byte-identical and much faster) and framed with :mod:`decoders.log.writer`.
Each partition is one :class:`PartitionStream` (seeded, independent of the others), which
:mod:`bench.series` continues past the snapshot's end to make later snapshots of the same log.

    path = ensure_snapshot(2_000_000)   # .cache/bench/snapshot-2000000-v1/__consumer_offsets-N/
"""

from __future__ import annotations

import hashlib
import random
import shutil
import struct
import uuid
from pathlib import Path
from typing import NamedTuple

from decoders.codec import encode_key, encode_value
from decoders.log.compression import compress
from decoders.log.crc import crc32c
from decoders.log.layout import ATTR_TRANSACTIONAL, BATCH_V2_HEADER, LOG_OVERHEAD, V2_CRC_OFFSET, V2_CRC_START
from decoders.log.writer import codec_id, encode_batch, encode_control_batch, write_segment, zigzag_varint

VERSION = "v1"
PARTITIONS, GROUPS, TOPICS, TOPIC_PARTITIONS = 12, 5000, 200, 16
MEMBERSHIP_SHARE, TOMBSTONE_SHARE, TXN_SHARE = 0.05, 0.003, 0.002
T0 = 1_760_000_000_000
CODECS = ["none"] * 7 + ["lz4"] * 2 + ["zstd"]
SEED = 10


def topic_id(index: int) -> uuid.UUID:
    return uuid.UUID(bytes=hashlib.md5(f"topic-{index:03d}".encode()).digest())


_TOPIC_ID_BYTES = [topic_id(t).bytes for t in range(TOPICS)]
_VARINT = [zigzag_varint(v) for v in range(-1, 1 << 14)]  # index v + 1


def _varint(value: int) -> bytes:
    return _VARINT[value + 1] if -1 <= value < (1 << 14) - 1 else zigzag_varint(value)


def fast_batch(records, *, base_offset: int, compression: str, producer_id: int = -1,
               producer_epoch: int = -1, base_sequence: int = -1,
               is_transactional: bool = False) -> bytes:
    """:func:`decoders.log.writer.encode_batch` for plain data batches, with cached varints (the
    writer's pure-Python varints dominate generation time); :func:`check_fast_batch` proves the
    bytes equal."""
    base_ts = records[0][2]
    parts = []
    for i, (key, value, ts) in enumerate(records):
        body = b"".join([b"\x00", _varint(ts - base_ts), _varint(i), _varint(len(key)), key,
                         b"\x01" if value is None else _varint(len(value)),
                         value or b"", b"\x00"])
        parts.append(_varint(len(body)) + body)
    codec = codec_id(compression)
    payload = b"".join(parts)
    if codec:
        payload = compress(codec, payload, magic=2)
    attributes = codec | (ATTR_TRANSACTIONAL if is_transactional else 0)
    header = BATCH_V2_HEADER.pack(
        base_offset, BATCH_V2_HEADER.size - LOG_OVERHEAD + len(payload), -1, 2, 0, attributes,
        len(records) - 1, base_ts, max(r[2] for r in records), producer_id, producer_epoch,
        base_sequence, len(records))
    batch = bytearray(header + payload)
    batch[V2_CRC_OFFSET:V2_CRC_START] = crc32c(memoryview(batch)[V2_CRC_START:]).to_bytes(4, "big")
    return bytes(batch)


def check_fast_batch(records, **kwargs) -> bytes:
    fast = fast_batch(records, **kwargs)
    if fast != encode_batch(records, **kwargs):
        raise AssertionError("bench.snapshot.fast_batch disagrees with decoders.log.writer")
    return fast


def _str16(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def commit_key(group: str, topic: str, partition: int) -> bytes:
    return struct.pack(">h", 1) + _str16(group) + _str16(topic) + struct.pack(">i", partition)


def commit_value(version: int, offset: int, ts: int, tid: bytes) -> bytes:
    if version == 3:
        return struct.pack(">hqi", 3, offset, 5) + _str16("") + struct.pack(">q", ts)
    # v4: compact metadata "" (uvarint 1), then one tagged field 0 (topicId, 16 bytes).
    return struct.pack(">hqi", 4, offset, 5) + b"\x01" + struct.pack(">q", ts) + b"\x01\x00\x10" + tid


class _Group:
    def __init__(self, index: int, rng: random.Random):
        self.name = f"group-{index:05d}"
        self.classic = index % 4 == 0
        first = rng.randrange(TOPICS)
        self.topics = [(first + k) % TOPICS for k in range(rng.randint(1, 12))]
        self.partitions = [(t, p) for t in self.topics for p in range(TOPIC_PARTITIONS)]
        self.offsets: dict[tuple[int, int], int] = {}
        self.keys: dict[tuple[int, int], bytes] = {}
        self.epoch = 0
        self.members = [f"member-{index}-{k}" for k in range(rng.randint(1, 3))]


def _membership_records(group: _Group, ts: int) -> list[tuple[bytes, bytes | None, int]]:
    """One rebalance: a classic group's metadata record, or a KIP-848 epoch bump with every
    member's metadata, target and current assignment."""
    group.epoch += 1
    if group.classic:
        rec = {"protocolType": "consumer", "generation": group.epoch, "protocol": "range",
               "leader": group.members[0], "currentStateTimestamp": ts, "members": []}
        return [(encode_key(2, {"group": group.name}), encode_value(2, 3, rec), ts)]
    gid = group.name
    out = [(encode_key(3, {"groupId": gid}), encode_value(3, 0, {"epoch": group.epoch}), ts)]
    share = max(1, len(group.partitions) // len(group.members))
    for k, member in enumerate(group.members):
        mine = group.partitions[k * share:(k + 1) * share]
        by_topic = {}
        for t, p in mine:
            by_topic.setdefault(t, []).append(p)
        tps = [{"topicId": topic_id(t), "partitions": ps} for t, ps in sorted(by_topic.items())]
        key = {"groupId": gid, "memberId": member}
        out.append((encode_key(5, key), encode_value(5, 0, {
            "instanceId": None, "rackId": None, "clientId": "bench", "clientHost": "/10.0.0.1",
            "subscribedTopicNames": sorted(f"topic-{t:03d}" for t in group.topics),
            "subscribedTopicRegex": None, "rebalanceTimeoutMs": 300000,
            "serverAssignor": "uniform", "classicMemberMetadata": None}), ts))
        out.append((encode_key(7, key), encode_value(7, 0, {"topicPartitions": tps}), ts))
        out.append((encode_key(8, key), encode_value(8, 0, {
            "memberEpoch": group.epoch, "previousMemberEpoch": group.epoch - 1, "state": 0,
            "assignedPartitions": tps, "partitionsPendingRevocation": []}), ts))
    out.append((encode_key(6, {"groupId": gid}), encode_value(6, 0, {"assignmentEpoch": group.epoch}), ts))
    return out


def _commit_records(group: _Group, rng: random.Random, ts: int, tombstone: bool):
    size = rng.randint(10, 200) if not tombstone else rng.randint(1, 5)
    start = rng.randrange(len(group.partitions))
    chosen = [group.partitions[(start + k) % len(group.partitions)]
              for k in range(min(size, len(group.partitions)))]
    version = 4 if rng.random() < 0.5 else 3
    out = []
    for t, p in chosen:
        key = group.keys.get((t, p))
        if key is None:
            key = group.keys[(t, p)] = commit_key(group.name, f"topic-{t:03d}", p)
        if tombstone:
            group.offsets.pop((t, p), None)
            out.append((key, None, ts))
            continue
        offset = group.offsets[(t, p)] = group.offsets.get((t, p), 0) + rng.randint(1, 500)
        out.append((key, commit_value(version, offset, ts, _TOPIC_ID_BYTES[t]), ts))
    return out


class PartitionStream:
    """One partition's batches, resumable: :meth:`take` writes until the partition holds about
    ``budget`` records, and a later :meth:`take` with a larger budget continues the same log
    (same groups, offsets, epochs, timestamps and random stream) where the previous one stopped.
    A stream taken to ``budget`` in one call yields exactly the bytes of one taken there in
    several calls (each iterated to its end).

    Items are ``(batch bytes, Batch)``; :class:`Batch` says what the bytes hold without parsing
    them (:mod:`bench.series` compacts the log with it)."""

    def __init__(self, part: int, groups: list[_Group], rng: random.Random):
        self.part, self.groups, self.rng = part, groups, rng
        self.offset, self.ts, self.written, self.producer = 0, T0, 0, 1000 * (part + 1)
        self.open_txn: int | None = None

    def take(self, budget: int):
        rng, groups = self.rng, self.groups
        while self.written < budget:
            group = rng.choice(groups)
            self.ts += rng.randint(1, 50)
            ts, offset = self.ts, self.offset
            roll = rng.random()
            kwargs = {}
            if self.open_txn is not None and roll < 0.3:
                outcome = 1 if rng.random() < 0.7 else 0  # COMMIT 1, ABORT 0
                yield (encode_control_batch(outcome, 0, offset=offset, producer_id=self.open_txn,
                                            producer_epoch=0, timestamp=ts),
                       Batch(offset, (), self.open_txn, True, outcome, None))
                self.offset, self.open_txn = offset + 1, None
                continue
            if roll < MEMBERSHIP_SHARE:
                records = _membership_records(group, ts)
            else:
                records = _commit_records(group, rng, ts, roll < MEMBERSHIP_SHARE + TOMBSTONE_SHARE)
                if self.open_txn is None and rng.random() < TXN_SHARE:
                    self.producer += 1
                    self.open_txn = self.producer
                    kwargs = {"producer_id": self.producer, "producer_epoch": 0,
                              "base_sequence": 0, "is_transactional": True}
            encode = check_fast_batch if offset < 500 else fast_batch
            yield (encode(records, base_offset=offset, compression=rng.choice(CODECS), **kwargs),
                   Batch(offset, [r[0] for r in records], kwargs.get("producer_id", -1),
                         bool(kwargs), None, group.name))
            self.offset = offset + len(records)
            self.written += len(records)


class Batch(NamedTuple):
    """What a batch of :class:`PartitionStream` holds: its base offset, its records' keys (in
    offset order; none for a transaction marker), its producer (-1 for none), whether it is
    transactional, for a marker its control type (1 COMMIT, 0 ABORT; else None), and the group
    whose records it holds (None for a marker)."""
    base_offset: int
    keys: list[bytes] | tuple
    producer_id: int
    transactional: bool
    control: int | None
    group: str | None


def partition_budget(records: int, part: int) -> int:
    """The records partition ``part`` gets of ``records`` spread over the partitions."""
    return records // PARTITIONS + (1 if part < records % PARTITIONS else 0)


def partition_streams(seed: int = SEED) -> list[PartitionStream]:
    """Every partition's stream, at its start, as :func:`generate` writes them with ``seed``."""
    rng = random.Random(seed)
    groups = [_Group(i, rng) for i in range(GROUPS)]
    return [PartitionStream(part, [g for i, g in enumerate(groups) if i % PARTITIONS == part],
                            random.Random(seed * 100 + part))
            for part in range(PARTITIONS)]


def generate(root: Path, records: int, seed: int = SEED) -> Path:
    tmp = root.with_name(root.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for part, stream in enumerate(partition_streams(seed)):
        path = tmp / f"__consumer_offsets-{part}" / "00000000000000000000.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_segment(path, (data for data, _ in stream.take(partition_budget(records, part))))
    tmp.rename(root)
    return root


def ensure_snapshot(records: int, cache: Path) -> Path:
    """The cached snapshot of about ``records`` records, generated on first use."""
    root = cache / "bench" / f"snapshot-{records}-{VERSION}"
    if not root.is_dir():
        root.parent.mkdir(parents=True, exist_ok=True)
        generate(root, records)
    return root

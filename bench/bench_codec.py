"""Decode throughput of the generic compiled path on a realistic ``__consumer_offsets`` mix.

Mix: ~95% offset commits (value v3 as written by 2.1-4.0 brokers, v4 as written by 4.1+, a few
tombstones), the rest classic group metadata (v3, consumer protocol, 3 members with embedded
subscription/assignment) and KIP-848 records (types 3, 5, 6, 7, 8). Prints records/s on one core.

Usage: ``python bench/bench_codec.py [N]`` (default 200000 records, best of 3 runs).
"""

from __future__ import annotations

import random
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from decoders import decode_record, encode_key, encode_value  # noqa: E402
from decoders.embedded import encode_blob  # noqa: E402


TOPIC_IDS = [uuid.UUID(int=random.Random(t).getrandbits(128)) for t in range(20)]


def _offset_commit(rng: random.Random) -> tuple[bytes, bytes | None]:
    topic = rng.randrange(20)
    key = encode_key(1, {"group": f"orders-service-{rng.randrange(50)}",
                         "topic": f"orders.events.v{topic}", "partition": rng.randrange(64)})
    r = rng.random()
    if r < 0.02:
        return key, None
    value = {"offset": rng.randrange(1 << 40), "leaderEpoch": rng.randrange(100), "metadata": "",
             "commitTimestamp": 1_760_000_000_000 + rng.randrange(1 << 30)}
    if r < 0.5:
        return key, encode_value(1, 3, value)
    return key, encode_value(1, 4, {**value, "topicId": TOPIC_IDS[topic]})


def _group_metadata(rng: random.Random) -> tuple[bytes, bytes]:
    topics = [f"orders.events.v{i}" for i in range(3)]
    members = []
    for m in range(3):
        sub = encode_blob("subscription", {"version": 3, "topics": topics, "userData": None,
                                           "ownedPartitions": [{"topic": t, "partitions": [m, m + 3]} for t in topics],
                                           "generationId": 7, "rackId": "use1-az1"})
        asg = encode_blob("assignment", {"version": 3, "assignedPartitions": [
            {"topic": t, "partitions": [m, m + 3]} for t in topics], "userData": None})
        members.append({"memberId": f"consumer-{m}-{uuid.UUID(int=rng.getrandbits(128))}",
                        "groupInstanceId": None, "clientId": f"consumer-{m}", "clientHost": "/10.0.0.1",
                        "rebalanceTimeout": 300000, "sessionTimeout": 45000,
                        "subscription": sub, "assignment": asg})
    return encode_key(2, {"group": "orders-service-1"}), encode_value(2, 3, {
        "protocolType": "consumer", "generation": 7, "protocol": "cooperative-sticky",
        "leader": members[0]["memberId"], "currentStateTimestamp": 1_760_000_000_000, "members": members})


def _consumer_group(rng: random.Random) -> tuple[bytes, bytes]:
    gid, mid = "payments", f"member-{rng.randrange(10)}"
    tps = [{"topicId": uuid.UUID(int=rng.getrandbits(128)), "partitions": list(range(4)),
            "assignmentEpochs": [5, 5, 6, 6]}]
    choice = rng.randrange(5)
    if choice == 0:
        return encode_key(3, {"groupId": gid}), encode_value(3, 0, {"epoch": 12, "metadataHash": 99})
    if choice == 1:
        return encode_key(5, {"groupId": gid, "memberId": mid}), encode_value(5, 0, {
            "clientId": "c", "clientHost": "/10.0.0.2", "subscribedTopicNames": ["payments"],
            "rebalanceTimeoutMs": 300000, "serverAssignor": "uniform"})
    if choice == 2:
        return encode_key(6, {"groupId": gid}), encode_value(6, 0, {"assignmentEpoch": 12})
    if choice == 3:
        return encode_key(7, {"groupId": gid, "memberId": mid}), encode_value(7, 0, {
            "topicPartitions": [{"topicId": tps[0]["topicId"], "partitions": list(range(4))}]})
    return encode_key(8, {"groupId": gid, "memberId": mid}), encode_value(8, 0, {
        "memberEpoch": 12, "previousMemberEpoch": 11, "state": 0, "assignedPartitions": tps,
        "partitionsPendingRevocation": []})


def workload(n: int, seed: int = 7) -> list[tuple[bytes, bytes | None]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.95:
            out.append(_offset_commit(rng))
        elif r < 0.97:
            out.append(_group_metadata(rng))
        else:
            out.append(_consumer_group(rng))
    return out


def measure(records, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for key, value in records:
            decode_record(key, value)
        best = min(best, time.perf_counter() - start)
    return len(records) / best


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    records = workload(n)
    rate = measure(records)
    v3 = [r for r in records if r[1] is not None and r[1][:2] == b"\x00\x03" and r[0][:2] == b"\x00\x01"]
    v4 = [r for r in records if r[1] is not None and r[1][:2] == b"\x00\x04" and r[0][:2] == b"\x00\x01"]
    print(f"mix: {rate:,.0f} records/s on one core ({n} records, best of 3)")
    print(f"offset commit v3 only: {measure(v3):,.0f} records/s; v4 only: {measure(v4):,.0f} records/s")


if __name__ == "__main__":
    main()

"""Single-core decode throughput on a realistic ``__consumer_offsets`` mix (issue #3).

Mix (built with the codec's own encoder): ~95% offset commits (value v3 and v4, ~90% of v4 with a
topicId, ~1% tombstones, metadata mostly empty; 10-40 character group and topic names), the rest
group metadata v3 (type 2, consumer-protocol members), consumer-group member metadata (type 5),
current member assignments (type 8, a few partitions), group metadata (type 3) and some member
tombstones. Paths measured, each best of 3 runs on one pinned core:

* ``decode_batch``: :func:`decoders.batch_decode.decode_batch` end to end, in batches of
  ``--batch`` rows (Spark's Arrow default is 10,000), with and without ``value_json``;
* ``decode_record``: the generic decoder in a plain Python loop;
* ``fast path``: :func:`decoders.columnar.decode_offset_commits` alone (rows/s over all rows).

Usage: ``python bench/bench_decode.py [--records N] [--batch ROWS]``.
"""

from __future__ import annotations

import argparse
import os
import random
import string
import sys
import time
import uuid
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from decoders.batch_decode import decode_batch  # noqa: E402
from decoders.codec import decode_record, encode_key, encode_value  # noqa: E402
from decoders.columnar import decode_offset_commits  # noqa: E402

TARGET = 1_000_000  # records/s per core, issue #3
# ConsumerProtocolSubscription v3 {Topics [foo], OwnedPartitions [foo:[0]], RackId "rack"} and
# ConsumerProtocolAssignment v3 {foo:[0]} (wire-format.md section d).
SUBSCRIPTION = bytes.fromhex("0003000000010003666f6fffffffff000000010003666f6f00000001000000000000000000047261636b")
ASSIGNMENT = bytes.fromhex("0003000000010003666f6f0000000100000000ffffffff")


def _name(rng: random.Random, prefix: str) -> str:
    tail = "".join(rng.choices(string.ascii_lowercase + string.digits + "-_.", k=rng.randint(6, 36)))
    return f"{prefix}{tail}"


def generate(records: int, seed: int = 7) -> tuple[pa.Array, pa.Array]:
    rng = random.Random(seed)
    groups = [_name(rng, "grp-") for _ in range(300)]
    topics = [(_name(rng, "t."), uuid.UUID(int=rng.getrandbits(128))) for _ in range(120)]
    subs = {g: rng.sample(topics, 3) for g in groups}
    key_cache: dict = {}
    keys, values = [], []
    now = 1_760_000_000_000
    for i in range(records):
        group = rng.choice(groups)
        r = rng.random()
        if r < 0.95:
            topic, topic_id = rng.choice(subs[group])
            kk = (1, group, topic, p := rng.randrange(12))
            if kk not in key_cache:
                key_cache[kk] = encode_key(1, {"group": group, "topic": topic, "partition": p})
            keys.append(key_cache[kk])
            if rng.random() < 0.01:
                values.append(None)
                continue
            version = 4 if rng.random() < 0.5 else 3
            value = {"offset": rng.randrange(1 << 40), "leaderEpoch": rng.randrange(50),
                     "metadata": "" if rng.random() < 0.9 else f"ckpt-{i}",
                     "commitTimestamp": now + i}
            if version == 4 and rng.random() < 0.9:
                value["topicId"] = topic_id
            values.append(encode_value(1, version, value))
        else:
            key, value = _other_record(rng, group, topics, now + i)
            keys.append(key)
            values.append(value)
    return pa.array(keys, pa.binary()), pa.array(values, pa.binary())


def _other_record(rng: random.Random, group: str, topics: list, ts: int) -> tuple[bytes, bytes | None]:
    member = f"consumer-{group[:12]}-{rng.randrange(8)}-{uuid.UUID(int=rng.getrandbits(128))}"
    r = rng.random()
    if r < 0.3:
        members = [{"memberId": f"{member}-{m}", "groupInstanceId": None, "clientId": f"client-{m}",
                    "clientHost": f"/10.0.{m}.{rng.randrange(255)}", "rebalanceTimeout": 300000,
                    "sessionTimeout": 45000, "subscription": SUBSCRIPTION, "assignment": ASSIGNMENT}
                   for m in range(rng.randint(1, 4))]
        return encode_key(2, {"group": group}), encode_value(2, 3, {
            "protocolType": "consumer", "generation": rng.randrange(100), "protocol": "range",
            "leader": members[0]["memberId"], "currentStateTimestamp": ts, "members": members})
    gm = {"groupId": group, "memberId": member}
    if r < 0.55:
        value = {"instanceId": None, "rackId": None, "clientId": "client", "clientHost": "/10.1.2.3",
                 "subscribedTopicNames": [t for t, _ in rng.sample(topics, 2)],
                 "subscribedTopicRegex": None, "rebalanceTimeoutMs": 300000, "serverAssignor": "uniform"}
        return encode_key(5, gm), encode_value(5, 0, value)
    if r < 0.85:
        _, tid = rng.choice(topics)
        value = {"memberEpoch": 5, "previousMemberEpoch": 4, "state": 0, "partitionsPendingRevocation": [],
                 "assignedPartitions": [{"topicId": tid, "partitions": sorted(rng.sample(range(12), 3))}]}
        return encode_key(8, gm), encode_value(8, 0, value)
    if r < 0.95:
        return encode_key(3, {"groupId": group}), encode_value(3, 0, {"epoch": rng.randrange(99),
                                                                      "metadataHash": rng.getrandbits(62)})
    return encode_key(rng.choice((5, 8)), gm), None


def fast_mask(keys: pa.Array, values: pa.Array):
    return decode_offset_commits(keys, values).handled


def best_of(fn, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=10_000)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {0})  # per-core numbers: one core, whatever the machine has
    t0 = time.perf_counter()
    keys, values = generate(args.records)
    n = len(keys)
    print(f"generated {n:,} records in {time.perf_counter() - t0:.1f}s; "
          f"batches of {args.batch:,} rows; best of 3 on one core (shared machine: numbers are noisy)")
    batches = [(keys.slice(i, args.batch), values.slice(i, args.batch)) for i in range(0, n, args.batch)]
    key_list, value_list = keys.to_pylist(), values.to_pylist()

    def generic_loop():
        for k, v in zip(key_list, value_list):
            decode_record(k, v)

    # The rows decode_batch hands to the generic decoder: their cost bounds decode_batch.
    rest = [(k, v) for k, v, done in zip(key_list, value_list, fast_mask(keys, values)) if not done]

    def generic_rest():
        for k, v in rest:
            decode_record(k, v)

    paths = [
        ("decode_batch (value_json on)", lambda: [decode_batch(k, v) for k, v in batches]),
        ("decode_batch (value_json off)", lambda: [decode_batch(k, v, with_value_json=False)
                                                   for k, v in batches]),
        ("decode_record loop (generic)", generic_loop),
        ("fast path alone (columnar)", lambda: [decode_offset_commits(k, v) for k, v in batches]),
        ("generic on the ~5% rest only", generic_rest),
        ("decode_batch, one batch (on)", lambda: decode_batch(keys, values)),
    ]
    handled = int(fast_mask(keys, values).sum())
    print(f"fast path handles {handled / n:.1%} of the rows\n")
    print("records/s = all input rows / best time (the 'rest only' row: time spent on the 5%)")
    print(f"{'path':<32}{'records/s':>14}{'vs 1M/s target':>16}")
    for name, fn in paths:
        rate = n / best_of(fn)
        print(f"{name:<32}{rate:>14,.0f}{rate / TARGET:>15.2f}x")


if __name__ == "__main__":
    main()

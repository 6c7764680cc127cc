"""Lifecycles of groups without KIP-848 records: simple groups (offsets only) and classic groups
of protocol types other than ``consumer`` (Kafka Connect's workers).

Simple group (replay reference §2.3, §2.4, §3.2): created in memory by its first offset record
(sometimes by an empty GroupMetadata with protocol type "" and generation 0); commits, admin
resets, transactional commits, offset expiry; deletion writes the offset tombstones and then the
GroupMetadata tombstone, as does expiry of its last offset.

Connect group: GroupMetadata records with protocol type ``connect``, opaque member metadata
(not ConsumerProtocol blobs), a generation per rebalance, an empty record when the last worker
leaves. Connect workers commit no offsets in ``__consumer_offsets``.
"""

from __future__ import annotations

from support.loggen.builder import GroupCtx
from support.loggen.life import GroupLife, pick
from support.loggen.records import LogRec
from support.scenarios import records as R


def simple_group(ctx: GroupCtx):
    life = GroupLife(ctx)
    rng = ctx.rng
    partitions = life.topic_partitions(life.sample(ctx.cluster.topics, 2))
    if ctx.chance(0.1):
        life.emit(life.written([R.group_metadata(ctx.group_id, generation=0, protocol=None,
                                                 leader=None, members=[], timestamp=ctx.now_ms,
                                                 protocol_type="")]))
        yield

    def committed():
        return sorted(life.s.model.committed)

    for _ in range(rng.randint(2, 10)):
        if not life.maybe_irregular("simple"):
            action = pick(rng, [
                (6, lambda: life.commit(life.sample(partitions))),
                (1.5, lambda: life.start_transaction(life.sample(partitions))),
                (0.6, lambda: life.commit(life.sample(committed()), rewind=True)),
                (0.6 if committed() else 0, lambda: life.run_step(
                    life.s.expire_offsets, life.sample(committed())))])
            action()
        yield
    ending = rng.random()
    if ending < 0.2:
        life.run_step(life.s.delete_group)
    elif ending < 0.35 and committed():
        life.run_step(life.s.expire_offsets)


def connect_group(ctx: GroupCtx):
    life = GroupLife(ctx)
    rng, gid = ctx.rng, ctx.group_id
    workers: list[str] = []
    generation = 0
    for _ in range(rng.randint(2, 8)):
        if life.maybe_irregular("classic"):
            yield
            continue
        if workers and rng.random() < 0.3:
            workers.remove(rng.choice(workers))
        elif len(workers) < 4:
            workers.append(f"connect-{len(workers) + 1}-{rng.getrandbits(32):08x}")
        generation += 1
        life.emit(life.written([connect_metadata(gid, generation, workers, ctx.now_ms, rng)]))
        yield
    if rng.random() < 0.15:
        life.emit([LogRec(2, {"group": gid})])


def connect_metadata(group_id: str, generation: int, workers: list[str], now_ms: int,
                     rng) -> LogRec:
    # Connect's worker metadata is its own protocol (url, config offset), opaque here.
    url = f"http://10.0.0.{rng.randint(2, 250)}:8083/".encode()
    members = [{"memberId": w, "groupInstanceId": None, "clientId": w.rsplit("-", 1)[0],
                "clientHost": "/10.0.0.7", "rebalanceTimeout": 60_000, "sessionTimeout": 10_000,
                "subscription": b"\x00\x01" + len(url).to_bytes(2, "big") + url,
                "assignment": b"\x00\x01\x00" + rng.randbytes(6)} for w in workers]
    return LogRec(2, {"group": group_id}, 3, {
        "protocolType": "connect", "generation": generation,
        "protocol": rng.choice(("sessioned", "compatible")) if workers else None,
        "leader": workers[0] if workers else None, "currentStateTimestamp": now_ms,
        "members": members})


"""``generate(seed, **knobs)``: a random but realistic ``__consumer_offsets`` log per seed.

Example::

    log = generate(42)                       # deterministic: same seed, same bytes
    log.write(tmp_path)                      # tmp_path/__consumer_offsets-<p>/000…0.log
    print(log.describe())                    # one line per record
    generate(7, partitions=1, max_records=60, weights={"consumer": 5, "share": 0})

Knobs (:class:`Knobs`): ``partitions`` (None: 1, sometimes 2-3), ``max_groups``,
``max_records`` (a budget: a log stops growing once it is spent), ``weights`` per group kind
(``simple``, ``classic``, ``connect``, ``consumer``, ``conversion``, ``share``, ``streams``),
``compaction`` (0-3 cleaning passes when True), ``irregular`` (how often a group writes an
irregular shape), ``segments`` (extra segment rolls; None: random).

Each group id hashes to its partition as Kafka's ``partitionFor`` does (50 partitions), so a
log is also one a broker could have written.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from random import Random

from support.loggen import compaction
from support.loggen.builder import Cluster, GroupCtx, PartitionLog
from support.loggen.classic import connect_group, simple_group
from support.loggen.describe import TOPIC_NAMES
from support.loggen.eras import KIND_SINCE, Timeline
from support.loggen.log import GeneratedLog
from support.loggen.protocol import ProtocolGroup
from support.loggen.share import ShareGroup
from support.loggen.streams import StreamsGroup

OFFSETS_PARTITIONS = 50
DEFAULT_WEIGHTS = {"simple": 2.0, "classic": 2.0, "connect": 0.5, "consumer": 4.0,
                   "conversion": 1.5, "share": 1.0, "streams": 1.2}
NAMES = {"simple": "offsets", "classic": "app", "connect": "connect-cluster", "consumer": "svc",
         "conversion": "migrating", "share": "queue", "streams": "streams-app"}


@dataclass(frozen=True)
class Knobs:
    partitions: int | None = None
    max_groups: int = 6
    max_records: int = 200
    weights: dict = field(default_factory=dict)
    compaction: bool = True
    irregular: float = 0.2
    segments: int | None = None


def generate(seed: int, **knobs) -> GeneratedLog:
    k = Knobs(**knobs)
    weights = {**DEFAULT_WEIGHTS, **k.weights}
    rng = Random(seed)
    cluster = Cluster(rng, Timeline(rng, k.max_records),
                      {t: rng.randint(1, 6) for t in sorted(rng.sample(TOPIC_NAMES, rng.randint(2, 5)))})
    count = k.partitions or rng.choices((1, 2, 3), (80, 14, 6))[0]
    logs = {p: PartitionLog(p, cluster) for p in sorted(rng.sample(range(OFFSETS_PARTITIONS), count))}
    kinds = [kind for kind, w in weights.items()
             if w > 0 and KIND_SINCE[kind] <= cluster.timeline.final]
    for index in range(rng.randint(1, k.max_groups)):
        kind = rng.choices(kinds, [weights[kind] for kind in kinds])[0]
        partition = rng.choice(sorted(logs))
        ctx = GroupCtx(cluster, logs[partition], group_id(kind, index, partition, rng), k.irregular)
        cluster.spawn(lifecycle(kind, ctx), since=KIND_SINCE[kind])
    run(cluster, logs, k.max_records)
    raw = {p: list(log.batches) for p, log in logs.items()}
    cleaned, cleanings = dict(raw), {}
    if k.compaction:
        for p, batches in raw.items():
            cleanings[p] = compaction.plan(rng, batches, rng.choice((0, 1, 1, 2, 3)))
            for cleaning in cleanings[p]:
                cleaned[p] = compaction.clean(cleaned[p], cleaning)
    bases = {p: segment_bases(rng, raw[p], cleanings.get(p, []), k.segments) for p in raw}
    return GeneratedLog(seed, cleaned, bases, cleanings, raw, list(cluster.marks))


def lifecycle(kind: str, ctx: GroupCtx):
    if kind == "simple":
        return simple_group(ctx)
    if kind == "connect":
        return connect_group(ctx)
    if kind == "share":
        return ShareGroup(ctx).run()
    if kind == "streams":
        return StreamsGroup(ctx).run()
    return ProtocolGroup(ctx, kind).run()


def run(cluster: Cluster, logs: dict[int, PartitionLog], max_records: int) -> None:
    """Let the groups take turns until they are done or the record budget is spent; then let
    transactions write their markers (or stay open)."""
    def spent() -> bool:
        return sum(log.record_count for log in logs.values()) >= max_records

    for _ in range(max_records * 20):
        if not cluster.actors or spent():
            break
        actor = cluster.rng.choice(cluster.actors)
        cluster.advance()
        if cluster.era < actor.since:
            continue                   # time passes until the cluster runs a release that can
        if next(actor.steps, StopIteration) is StopIteration:
            cluster.actors.remove(actor)
    for actor in [a for a in cluster.actors if a.drain]:
        for _ in actor.steps:
            cluster.advance()
    cluster.actors.clear()


def group_id(kind: str, index: int, partition: int, rng: Random) -> str:
    """A group id of the kind's style whose partition (Kafka's ``partitionFor``) is ``partition``."""
    base = f"{NAMES[kind]}-{rng.choice(TOPIC_NAMES).split('-')[0]}-{index}"
    for n in itertools.count():
        candidate = f"{base}-{n}"
        if partition_for(candidate) == partition:
            return candidate


def partition_for(group: str, partitions: int = OFFSETS_PARTITIONS) -> int:
    """``Utils.abs(groupId.hashCode()) % partitions`` (Java's String.hashCode, abs(MIN) = 0)."""
    h, units = 0, group.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i:i + 2], "big")) & 0xFFFFFFFF
    h = h - (1 << 32) if h >= 1 << 31 else h
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def segment_bases(rng: Random, batches, cleanings, extra: int | None) -> list[int]:
    """Segment rolls: every cleaning pass ended at one (the cleaner cleans whole segments)
    and a few more."""
    bases = {0} | {c.cleanable_end for c in cleanings}
    boundaries = [b.base_offset for b in batches[1:]]
    count = rng.choice((0, 0, 1, 2)) if extra is None else extra
    if boundaries and count:
        bases.update(rng.sample(boundaries, min(count, len(boundaries))))
    return sorted(bases)

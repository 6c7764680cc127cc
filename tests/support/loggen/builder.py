"""The log under construction: one :class:`PartitionLog` per ``__consumer_offsets`` partition, a
shared :class:`Cluster` (clock, release timeline, topics, producer ids) and the :class:`GroupCtx`
a group's lifecycle writes through.

Group lifecycles are Python generators: each ``next()`` lets one group write one step (one
coordinator write, appended atomically as one batch), so groups of a partition interleave the way
a coordinator serves many groups at once. The clock (and with it the release the cluster runs)
moves between steps: the writes of one step share a timestamp, as records and batch do.

Like the coordinator's append linger, a step may share the previous batch when both are plain
(non-transactional) writes; transactional writes never share a batch (the coordinator flushes
first).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from random import Random

from support.scenarios.base import default_topic_id
from support.scenarios.log import Batch
from support.loggen.eras import Era, Timeline
from support.loggen.records import log_rec, pruned

START_MS = 1_700_000_000_000
SHARE_BATCH = 0.12       # chance that a plain write joins the previous plain batch


@dataclass(frozen=True)
class Mark:
    """A shape the generator wrote on purpose, by the offsets of the records that make it: the
    shape is in the final log only while all of them survive compaction."""

    shape: str
    partition: int
    offsets: tuple[int, ...]
    group_id: str | None = None


@dataclass
class Actor:
    """A running lifecycle; ``drain`` ones (transactions) still run after the record budget is
    spent, so most transactions get their marker before the log ends."""

    steps: Iterator
    drain: bool = False
    since: Era = (0, 0)                 # the first release that writes this kind of group


@dataclass
class Cluster:
    rng: Random
    timeline: Timeline
    topics: dict[str, int]                      # topic name -> partition count
    now_ms: int = START_MS
    tick: int = 0
    next_producer_id: int = 1000
    marks: list[Mark] = field(default_factory=list)
    actors: list[Actor] = field(default_factory=list)

    @property
    def era(self) -> Era:
        return self.timeline.at(self.tick)

    def advance(self) -> None:
        self.tick += 1
        hours = self.rng.random() < 0.03
        self.now_ms += self.rng.randint(3_600_000, 30_000_000) if hours else self.rng.randint(5, 4000)

    def producer_id(self) -> int:
        self.next_producer_id += self.rng.randint(1, 40)
        return self.next_producer_id

    def topic_id(self, name: str) -> uuid.UUID:
        return default_topic_id(name)

    def spawn(self, steps: Iterator, *, drain: bool = False, since: Era = (0, 0)) -> None:
        """Schedule another actor (e.g. a transaction whose marker comes later)."""
        self.actors.append(Actor(steps, drain, since))


class PartitionLog:
    def __init__(self, partition: int, cluster: Cluster):
        self.partition = partition
        self.cluster = cluster
        self.batches: list[Batch] = []

    @property
    def next_offset(self) -> int:
        return self.batches[-1].end_offset if self.batches else 0

    @property
    def record_count(self) -> int:
        return sum(len(b.records) for b in self.batches)

    def append(self, records, *, producer_id: int = -1, producer_epoch: int = -1,
               transactional: bool = False) -> list[int]:
        """Append one atomic write; returns the offsets its records took."""
        if not records:
            return []
        base = self.next_offset
        entries = [(base + i, pruned(log_rec(r))) for i, r in enumerate(records)]
        last = self.batches[-1] if self.batches else None
        if (not transactional and last is not None and last.control_type is None
                and not last.is_transactional and self.cluster.rng.random() < SHARE_BATCH):
            last.records.extend(entries)
        else:
            self.batches.append(Batch(base, self.cluster.now_ms, entries, producer_id,
                                      producer_epoch, transactional))
        return [offset for offset, _ in entries]

    def marker(self, control_type: str, producer_id: int, producer_epoch: int) -> int:
        """A COMMIT or ABORT control batch, as the transaction coordinator writes it."""
        offset = self.next_offset
        self.batches.append(Batch(offset, self.cluster.now_ms, [], producer_id, producer_epoch,
                                  True, control_type))
        return offset


@dataclass
class GroupCtx:
    """What a group's lifecycle writes through."""

    cluster: Cluster
    log: PartitionLog
    group_id: str
    irregular: float

    @property
    def rng(self) -> Random:
        return self.cluster.rng

    @property
    def era(self) -> Era:
        return self.cluster.era

    @property
    def now_ms(self) -> int:
        return self.cluster.now_ms

    def emit(self, records, **batch) -> list[int]:
        return self.log.append(records, **batch)

    def mark(self, shape: str, offsets) -> None:
        if offsets:
            self.cluster.marks.append(Mark(shape, self.log.partition, tuple(offsets),
                                           self.group_id))

    def chance(self, p: float) -> bool:
        return self.cluster.rng.random() < p

    def wants_irregular(self, scale: float = 1.0) -> bool:
        return self.cluster.rng.random() < self.irregular * scale

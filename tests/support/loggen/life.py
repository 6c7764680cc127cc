"""What every group's lifecycle shares: its writer-side model, offset commits and transactions.

The writer-side model is a :class:`~support.scenarios.Scenario` of its own per group (its
GroupModel and the record order of each coordinator write); :meth:`GroupLife.run_step` runs one
of its steps and appends the records it wrote, rewritten for the era of the write
(:func:`support.loggen.formats.as_written`), to the shared partition log.
"""

from __future__ import annotations

from collections.abc import Callable

from jobs.replay.events import ABORT, COMMIT
from support.loggen import eras, irregular
from support.loggen.builder import GroupCtx
from support.loggen.formats import as_written
from support.scenarios import Scenario, ScenarioError
from support.scenarios import records as R
from support.scenarios.model import TP


class GroupLife:
    def __init__(self, ctx: GroupCtx):
        self.ctx = ctx
        self.s = Scenario(ctx.group_id, partition=ctx.log.partition, start_time_ms=ctx.now_ms)
        self.positions: dict[TP, int] = {}
        self.recent: list = []          # the positive records of the last write
        self.last_offset: dict[tuple, int] = {}     # key -> offset of its latest record
        # The application's transactional producers, (producer id, epoch) -> in a transaction;
        # one transaction at a time each, a hanging one keeps its producer busy for good.
        self.producers: dict[tuple[int, int], bool] = {}

    def maybe_irregular(self, kind: str, extra=()) -> bool:
        """Now and then (``irregular`` knob) write one irregular shape instead of a step;
        ``extra`` adds the kind's own (weight, action) pairs."""
        if not self.ctx.wants_irregular(0.15):
            return False
        ctx = self.ctx
        generic = [(2, lambda: irregular.foreign_records(ctx, kind)),
                   (2, lambda: irregular.phantom_tombstones(ctx, kind)),
                   (1, lambda: irregular.unknown_type_records(ctx)),
                   (1, lambda: irregular.unknown_version_records(ctx, kind)),
                   (1.5, self._retagged)]
        action = pick(self.rng, [*generic, *extra])
        written = action()
        if written and written[0]:
            self.emit(written[0], written[1])
        return True

    def _retagged(self):
        """The last record again, as a later release with one more tagged field rewrote it."""
        tagged = [t for t in (irregular.with_unknown_tags(r, self.rng) for r in self.recent) if t]
        return ([self.rng.choice(tagged)], "unknown_tags") if tagged else None

    @property
    def rng(self):
        return self.ctx.rng

    def written(self, records) -> list:
        ctx = self.ctx
        return [as_written(r, ctx.era, ctx.rng, ctx.now_ms) for r in records]

    def run_step(self, step: Callable, *args, post: Callable | None = None, **kwargs) -> list[int]:
        """Run one scenario step; append its records as the current release writes them.
        ``post`` may add what the scenario builder does not write (type 4, regex tombstones)."""
        s = self.s
        s.assignment_epochs = eras.has_assignment_epochs(self.ctx.era)
        s.now_ms = self.ctx.now_ms          # commit and state timestamps are the write's time
        before = len(s.batches)
        step(*args, **kwargs)
        offsets = []
        for batch in s.batches[before:]:
            records = self.written(r for _, r in batch.records)
            offsets += self.emit(post(records) if post else records)
        return offsets

    def emit(self, records, shape: str | None = None, **batch) -> list[int]:
        offsets = self.ctx.emit(records, **batch)
        self.recent = [r for r in records if r.value is not None] or self.recent
        for offset, rec in zip(offsets, records):
            self.last_offset[key_of(rec)] = offset
        if shape:
            self.ctx.mark(shape, offsets)
        return offsets

    def try_step(self, step: Callable, *args, **kwargs) -> list[int]:
        """A step the model may refuse (the coordinator would answer with an error and write
        nothing): nothing is appended then."""
        try:
            return self.run_step(step, *args, **kwargs)
        except ScenarioError:
            return []

    # ---- offsets ---------------------------------------------------------------------------

    def topic_partitions(self, topics=None) -> list[TP]:
        topics = sorted(self.ctx.cluster.topics) if topics is None else sorted(topics)
        return [(t, p) for t in topics for p in range(self.ctx.cluster.topics[t])]

    def next_offsets(self, partitions, *, rewind: bool = False) -> dict[str, dict[int, int]]:
        """Committed positions move forward; ``rewind`` is an admin reset to an earlier offset."""
        offsets: dict[str, dict[int, int]] = {}
        for tp in sorted(set(partitions)):
            now = self.positions.get(tp, 0)
            nxt = self.rng.randint(0, max(0, now - 1)) if rewind else now + self.rng.randint(1, 500)
            self.positions[tp] = nxt
            offsets.setdefault(tp[0], {})[tp[1]] = nxt
        return offsets

    def commit(self, partitions, *, rewind: bool = False) -> list[int]:
        if not partitions:
            return []
        return self.run_step(self.s.offset_commit, self.next_offsets(partitions, rewind=rewind),
                             leader_epoch=self.rng.choice((-1, 0, 3)))

    def sample(self, items, most: int = 3) -> list:
        items = sorted(items)
        if not items:
            return []
        return self.rng.sample(items, self.rng.randint(1, min(most, len(items))))

    def start_transaction(self, partitions) -> None:
        """TxnOffsetCommit now; the marker (or none: a hanging transaction) comes later."""
        if self.ctx.era < (2, 1) or not partitions:
            return                      # no transactions before 0.11
        idle = [p for p, busy in self.producers.items() if not busy]
        if idle and self.rng.random() < 0.8:
            producer = self.rng.choice(sorted(idle))
        elif len(self.producers) < 3:
            producer = (self.ctx.cluster.producer_id(), self.rng.randint(0, 4))
        else:
            return                      # every producer of the application is in a transaction
        if self.rng.random() < 0.1:     # the producer restarted: initTransactions bumps the epoch
            self.producers.pop(producer, None)
            producer = (producer[0], producer[1] + 1)
        self.producers[producer] = True
        outcome = self.rng.choices((COMMIT, ABORT, None), (70, 22, 8))[0]
        self.ctx.cluster.spawn(self._transaction(sorted(set(partitions)), outcome, producer),
                               drain=True)

    def _transaction(self, partitions: list[TP], outcome: str | None, producer: tuple[int, int]):
        ctx, g = self.ctx, self.s.model
        producer_id, producer_epoch = producer
        offsets = []
        for part in (partitions, self.sample(partitions)) if self.rng.random() < 0.2 else (partitions,):
            records = [R.offset_commit(g.group_id, tp, o, version=4, commit_timestamp=ctx.now_ms,
                                       topic_id=ctx.cluster.topic_id(tp[0]) if ctx.era >= (4, 4)
                                       else None)
                       for tp, o in _flat(self.next_offsets(part))]
            offsets += ctx.emit(self.written(records), producer_id=producer_id,
                                producer_epoch=producer_epoch, transactional=True)
            g.pending.setdefault(producer_id, set()).update(part)
            yield
        for _ in range(self.rng.randint(0, 5)):
            yield
        if outcome is None:
            ctx.mark("open_transaction", offsets)
            return
        marker = ctx.log.marker(outcome, producer_id, producer_epoch)
        ctx.mark("transaction_commit" if outcome == COMMIT else "transaction_abort",
                 [*offsets, marker])
        self.producers[producer] = False
        keys = g.pending.pop(producer_id, set())
        if outcome == COMMIT:
            g.committed.update(keys)


def key_of(rec) -> tuple:
    return (rec.record_type, *sorted(rec.key.items()))


def _flat(offsets: dict[str, dict[int, int]]) -> list[tuple[TP, int]]:
    return [((t, p), o) for t, ps in sorted(offsets.items()) for p, o in sorted(ps.items())]


def pick(rng, options: list[tuple[float, Callable]]) -> Callable | None:
    """A weighted choice among the actions possible now (None if there are none)."""
    options = [(w, fn) for w, fn in options if w > 0]
    if not options:
        return None
    return rng.choices([fn for _, fn in options], [w for w, _ in options])[0]

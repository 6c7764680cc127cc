"""Kafka's log cleaner on ``__consumer_offsets``, one pass at a time, at a cleanable end offset.

A pass (``LogCleaner``) runs when the log ends at ``log_end`` and cleans the segments below the
first uncleanable offset ``cleanable_end`` (E): the active segment's base offset, never above the
last stable offset (the first offset of a transaction still open at ``log_end``), always a
segment boundary. Among the records at offsets < E it keeps only the latest record of each key
as of E (records at or after E are untouched and not looked at); data of aborted transactions
is dropped and does not count as a key's latest record. Tombstones are kept by the pass that
first sees them; a later pass drops them once their delete horizon (``delete.retention.ms`` after
that first cleaning) has passed, modelled as ``delete_horizon``: tombstones below an earlier
pass's E. A transaction marker goes when no data of its transaction is left, and only after its
delete horizon too ("we piggy-back on the tombstone retention logic"). The batch holding an
active producer's last data is kept even if emptied (RETAIN_EMPTY, it carries the producer's
last sequence). Offsets are preserved: gaps appear.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from random import Random

from jobs.replay.events import ABORT
from support.loggen.records import record_bytes
from support.scenarios.log import Batch


@dataclass(frozen=True)
class CleaningPass:
    cleanable_end: int              # E
    log_end: int                    # the log end offset when the pass ran
    delete_horizon: int             # tombstones and markers below it may go (0: none)
    active_producers: frozenset = frozenset()   # producers whose state had not expired


@dataclass
class Transaction:
    producer_id: int
    data_batches: list[Batch]
    marker: Batch | None = None


def transactions(batches: list[Batch]) -> list[Transaction]:
    """Transactional data grouped by the marker that ends it (marker None: still open)."""
    done: list[Transaction] = []
    ongoing: dict[int, Transaction] = {}
    for batch in batches:
        if batch.control_type is not None:
            txn = ongoing.pop(batch.producer_id, None) or Transaction(batch.producer_id, [])
            txn.marker = batch
            done.append(txn)
        elif batch.is_transactional:
            ongoing.setdefault(batch.producer_id,
                               Transaction(batch.producer_id, [])).data_batches.append(batch)
    return done + list(ongoing.values())


def last_stable_offset(batches: list[Batch], log_end: int) -> int:
    """First offset of a transaction still open when the log ended at ``log_end``."""
    starts = [t.data_batches[0].base_offset for t in transactions(batches)
              if t.data_batches and t.data_batches[0].base_offset < log_end
              and (t.marker is None or t.marker.base_offset >= log_end)]
    return min(starts, default=log_end)


def key_bytes(rec) -> bytes:
    return record_bytes(rec)[0]


def clean(batches: list[Batch], p: CleaningPass) -> list[Batch]:
    """The log after one cleaning pass (the input is left as it is)."""
    end, horizon = p.cleanable_end, p.delete_horizon
    txns = transactions(batches)
    aborted = {b.base_offset for t in txns if t.marker is not None
               and t.marker.base_offset < p.log_end and t.marker.control_type == ABORT
               for b in t.data_batches}
    latest: dict[bytes, int] = {}
    for b in batches:
        if b.control_type is None and b.base_offset not in aborted:
            for offset, rec in b.records:
                if offset < end:
                    latest[key_bytes(rec)] = offset
    last_data = {b.producer_id: b.base_offset for b in batches
                 if b.control_type is None and b.producer_id >= 0 and b.base_offset < p.log_end}
    kept: list[Batch] = []
    for b in batches:
        if b.control_type is not None or b.base_offset >= end:
            kept.append(b)
            continue
        records = [(o, r) for o, r in b.records
                   if b.base_offset not in aborted and latest.get(key_bytes(r)) == o
                   and not (r.value is None and o < horizon)]
        retain_empty = (b.producer_id in p.active_producers
                        and last_data.get(b.producer_id) == b.base_offset)
        if records or retain_empty:
            kept.append(replace(b, records=records, last_offset=b.end_offset - 1))
    surviving = {o for b in kept if b.control_type is None for o, _ in b.records}
    ended = {t.marker.base_offset: t for t in txns if t.marker is not None}

    def marker_goes(b: Batch) -> bool:
        if b.control_type is None or b.base_offset >= min(end, horizon):
            return False
        return not any(o in surviving for d in ended[b.base_offset].data_batches
                       for o, _ in d.records)

    return [b for b in kept if not marker_goes(b)]


def plan(rng: Random, batches: list[Batch], count: int) -> list[CleaningPass]:
    """``count`` passes at increasing log ends, each at a batch boundary at or below the last
    stable offset."""
    if not batches or count == 0:
        return []
    ends = sorted(b.end_offset for b in batches)
    passes: list[CleaningPass] = []
    for log_end in sorted(rng.sample(ends, min(count, len(ends)))):
        lso = last_stable_offset(batches, log_end)
        floor = max(1, passes[-1].cleanable_end if passes else 1)
        bounds = [b.base_offset for b in batches if floor <= b.base_offset <= lso] + \
                 ([log_end] if floor <= log_end <= lso else [])
        if not bounds:
            continue
        horizon = rng.choice([0, *(q.cleanable_end for q in passes)])
        producers = sorted({b.producer_id for b in batches if b.producer_id >= 0})
        active = frozenset(pid for pid in producers if rng.random() < 0.5)
        passes.append(CleaningPass(rng.choice(bounds), log_end, horizon, active))
    return passes

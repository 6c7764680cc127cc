"""Shrink a failing generated log to a minimal one, and keep it as a regression case.

``shrink(log, still_fails)`` removes, while ``still_fails`` stays true: whole partitions, then
batches (delta debugging: halves, quarters ... and their complements), then single records the
same way, then extra segment files, then one record or marker at a time until removing any
single one makes the predicate false (1-minimal). Offsets never move: a removed record leaves a
gap, as compaction does, and a batch keeps its base and last offset while it holds a record.

Example::

    small = shrink(generate(1234), lambda log: oracle_disagrees(log))
    save_case(small, "tests/cases/1234.json", {"oracle": "4.0 fails the load", "audit": "ok"})
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from support.loggen.cases import load_case, save_case
from support.loggen.log import GeneratedLog

__all__ = ["shrink", "save_case", "load_case"]

Predicate = Callable[[GeneratedLog], bool]


def shrink(log: GeneratedLog, still_fails: Predicate) -> GeneratedLog:
    if not still_fails(log):
        raise ValueError("the predicate does not hold for the log to shrink")
    current = GeneratedLog(log.seed, {p: list(bs) for p, bs in log.partitions.items()},
                           dict(log.segment_bases), {}, None, list(log.marks))
    for p in sorted(current.partitions):
        candidate = _without(current, lambda q, batch, entry, p=p: q == p)
        if len(current.partitions) > 1 and still_fails(candidate):
            current = candidate
    current = _ddmin(current, _batch_units(current), still_fails, by_batch=True)
    current = _ddmin(current, _record_units(current), still_fails, by_batch=False)
    one_segment = replace(current, segment_bases={p: [0] for p in current.partitions})
    if one_segment.segment_bases != current.segment_bases and still_fails(one_segment):
        current = one_segment
    changed = True
    while changed:
        changed = False
        for unit in _record_units(current):
            candidate = _keep(current, _record_units(current) - {unit}, by_batch=False)
            if still_fails(candidate):
                current, changed = candidate, True
                break
    return current


def _batch_units(log: GeneratedLog) -> set:
    return {(p, b.base_offset) for p, bs in log.partitions.items() for b in bs}


def _record_units(log: GeneratedLog) -> set:
    """A data record is ``(partition, offset)``; a marker is its control batch."""
    units = set()
    for p, batches in log.partitions.items():
        for b in batches:
            units.update((p, o) for o, _ in b.records)
            if b.control_type is not None:
                units.add((p, b.base_offset))
    return units


def _keep(log: GeneratedLog, units: set, *, by_batch: bool) -> GeneratedLog:
    if by_batch:
        return _without(log, lambda p, batch, entry: (p, batch.base_offset) not in units)
    return _without(log, lambda p, batch, entry: (p, entry) not in units)


def _without(log: GeneratedLog, drop) -> GeneratedLog:
    """``drop(partition, batch, offset)``: offset is a record's, or a control batch's base; a
    data batch left without records goes, and so does a partition left without batches."""
    partitions: dict[int, list] = {}
    for p, batches in log.partitions.items():
        kept = []
        for b in batches:
            if b.control_type is not None:
                if not drop(p, b, b.base_offset):
                    kept.append(b)
                continue
            records = [(o, r) for o, r in b.records if not drop(p, b, o)]
            if records:
                kept.append(b if len(records) == len(b.records) else
                            replace(b, records=records, last_offset=b.end_offset - 1))
        if kept:
            partitions[p] = kept
    if not partitions:
        partitions = {min(log.partitions): []}
    return replace(log, partitions=partitions,
                   segment_bases={p: log.segment_bases.get(p, [0]) for p in partitions})


def _ddmin(log: GeneratedLog, units: set, still_fails: Predicate, *, by_batch: bool) -> GeneratedLog:
    """Zeller's ddmin over ``units`` (sorted, so runs are reproducible)."""
    units_list, n = sorted(units), 2
    while len(units_list) >= 2:
        size = -(-len(units_list) // n)
        chunks = [units_list[i:i + size] for i in range(0, len(units_list), size)]
        complements = [[u for u in units_list if u not in set(c)] for c in chunks]
        for subset, next_n in [(c, 2) for c in chunks] + [(c, max(n - 1, 2)) for c in complements]:
            candidate = _keep(log, set(subset), by_batch=by_batch)
            if subset and still_fails(candidate):
                log, units_list, n = candidate, subset, next_n
                break
        else:
            if n >= len(units_list):
                break
            n = min(len(units_list), n * 2)
    return log

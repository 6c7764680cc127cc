"""The shapes a log holds, read from its records alone (independent of what the generator meant
to write, see :meth:`GeneratedLog.shapes` for that): for coverage tests and for statistics of a
differential run.

Example::

    content_shapes(generate(7))   # {"tombstone", "COMMIT", "historical/3.7.0", "double_ownership", ...}
"""

from __future__ import annotations

from jobs.replay.events import ABORT, COMMIT
from support.loggen.compaction import transactions
from support.loggen.records import KNOWN, decode_expectation

FAMILIES = {**dict.fromkeys((3, 4, 5, 6, 7, 8, 16), "consumer"),
            **dict.fromkeys(range(9, 16), "share"), **dict.fromkeys(range(17, 25), "streams")}


def group_of(rec) -> str:
    return rec.key.get("group", rec.key.get("groupId"))


def content_shapes(log) -> set[str]:
    found = set()
    for _, _, _, rec in log.records():
        found.add(f"type {rec.record_type}")
        if decode_expectation(rec) != KNOWN:
            found.add(decode_expectation(rec))
        if rec.value is None:
            found.add("tombstone")
        if rec.layout:
            found.add(rec.layout)
        if rec.unknown_tags:
            found.add("unknown_tags")
    markers = {b.control_type for bs in log.partitions.values() for b in bs}
    found |= {m for m in (COMMIT, ABORT) if m in markers}
    checks = {"open_transaction": open_transaction, "double_ownership": double_ownership,
              "mixed_group_types": mixed_group_types}
    found |= {name for name, check in checks.items() if check(log)}
    found |= {f"conversion_{c}" for c in conversions(log)}
    for batches in log.partitions.values():
        found |= orders_left_by_compaction(batches)
    return found


def double_ownership(log) -> bool:
    """Two members of one consumer group hold the same partition at some point (type 8 replay)."""
    for batches in log.partitions.values():
        owned: dict[tuple, set] = {}
        for b in batches:
            for _, rec in b.records:
                if rec.record_type != 8:
                    continue
                member = (rec.key["groupId"], rec.key["memberId"])
                owned.pop(member, None)
                if rec.value is None:
                    continue
                parts = {(tp["topicId"], p) for name in ("assignedPartitions", "partitionsPendingRevocation")
                         for tp in rec.value[name] for p in tp["partitions"]}
                if any(g == member[0] and parts & held for (g, _), held in owned.items()):
                    return True
                owned[member] = parts
    return False


def mixed_group_types(log) -> bool:
    """One group id with records of two KIP-848 group families (consumer, share, streams)."""
    families: dict[str, set] = {}
    for _, _, _, rec in log.records():
        if rec.record_type in FAMILIES:
            families.setdefault(rec.key["groupId"], set()).add(FAMILIES[rec.record_type])
    return any(len(f) > 1 for f in families.values())


def conversions(log) -> set[str]:
    """``upgrade``: a batch with a GroupMetadata tombstone then member records of the group;
    ``downgrade``: a batch with the group's epoch tombstone then its GroupMetadata."""
    found = set()
    for batches in log.partitions.values():
        for b in batches:
            tombstoned = set()
            for _, rec in b.records:
                group = group_of(rec)
                if rec.record_type == 5 and rec.value is not None and (2, group) in tombstoned:
                    found.add("upgrade")
                if rec.record_type == 2 and rec.value is not None and (3, group) in tombstoned:
                    found.add("downgrade")
                if rec.value is None:
                    tombstoned.add((rec.record_type, group))
    return found


def open_transaction(log) -> bool:
    return any(t.marker is None and t.data_batches
               for batches in log.partitions.values() for t in transactions(batches))


def orders_left_by_compaction(batches) -> set[str]:
    """Orders a coordinator never writes but a cleaned log holds."""
    found, epoch_seen, seen = set(), set(), set()
    records = [rec for b in batches for _, rec in b.records]
    has_epoch = {group_of(r) for r in records if r.record_type == 3 and r.value is not None}
    for rec in records:
        group, positive, member = group_of(rec), rec.value is not None, rec.key.get("memberId")
        if rec.record_type in (7, 8) and positive and group in has_epoch - epoch_seen:
            found.add("member record before its group's epoch record")
        if rec.record_type == 3 and not positive and not {(group, t) for t in (3, 5, 8)} & seen:
            found.add("group tombstone without the records that created the group")
        if rec.record_type == 5 and not positive and (group, 5, member) not in seen:
            found.add("member tombstone without the member record")
        if rec.record_type == 3 and positive:
            epoch_seen.add(group)
        if positive:
            seen |= {(group, rec.record_type), (group, rec.record_type, member)}
    return found

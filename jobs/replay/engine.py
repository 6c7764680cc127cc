"""Replay engine: rebuild group state from a ``__consumer_offsets`` partition, keeping history.

Every record of a group lives in one partition, so log order is a total order of the group's
history and groups replay independently (the Spark job groups by ``(partition, group_id)`` and
gives each group the end-transaction markers of its partition). Example::

    result = replay_group(scenario.events())
    result.tables["groups"]   # [{"group_id": "g", "group_type": "consumer", ...}]

Dispatch follows GroupCoordinatorShard.replay: 0/1 offsets, 2 classic groups, 3-24 modern
groups; markers apply to the pending offsets of their producer id. Unknown record types are
skipped as the coordinator's loader does (with a WARN there, an INFO violation here).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from collections.abc import Iterable

from jobs.replay.classic import apply_group_metadata
from jobs.replay.context import INFO, ReplayContext
from jobs.replay.events import ABORT, COMMIT, ReplayEvent, group_id_of
from jobs.replay.modern import RECORD_KINDS, SKIPPED_BY_LOADER, apply_modern
from jobs.replay.offsets import (apply_marker, apply_offset_commit, close_open_transactions,
                                 groups_with_pending)
from jobs.replay.state import Group, OffsetStore
from jobs.lake.history import TABLE_COLUMNS
from jobs.replay.tables import build_tables
from jobs.replay.topics import fill_topic_names

HISTORY_TABLES = ("offset_commits", "epochs", "transactions", "violations")


@dataclass
class ReplayResult:
    """Final in-memory state and the output tables (rows as dicts, columns per TABLE_COLUMNS)."""

    groups: dict[str, Group]
    offsets: dict[str, OffsetStore]
    tables: dict[str, list[dict]] = field(default_factory=dict)
    topic_names: dict[uuid.UUID, str] = field(default_factory=dict)   # every pair learned

    @property
    def violations(self) -> list[dict]:
        return self.tables["violations"]

    def group(self, group_id: str) -> Group | None:
        return self.groups.get(group_id)


def replay_group(events: Iterable[ReplayEvent], *,
                 topic_names: dict[uuid.UUID, str] | None = None) -> ReplayResult:
    """Replay the events of one group (or several: nothing here assumes a single group id).

    ``topic_names`` optionally maps topic ids to names from cluster metadata; records add to it
    (type 4/15 metadata, 4.1+ offset commits carrying a topic id)."""
    ctx = ReplayContext(topic_names=dict(topic_names or {}))
    for event in events:
        apply_event(ctx, event)
    close_open_transactions(ctx)
    return ReplayResult(ctx.groups, ctx.offsets, build_tables(ctx), ctx.topic_names)


def apply_event(ctx: ReplayContext, event: ReplayEvent) -> None:
    ctx.event = event
    if event.is_marker:
        if event.control_type in (COMMIT, ABORT):
            for group_id in groups_with_pending(ctx, event.producer_id):
                apply_marker(ctx, group_id)
        return
    record = event.record
    if record is None:
        return  # a control record other than COMMIT/ABORT
    record_type = getattr(record, "record_type", None)
    if not isinstance(getattr(record, "key", None), dict):
        ctx.violation("UNKNOWN_RECORD_TYPE", INFO, None,
                      f"record type {record_type} unknown to this reader; skipped as the "
                      "coordinator's loader does")
    elif record_type in SKIPPED_BY_LOADER:
        ctx.violation("UNKNOWN_RECORD_TYPE", INFO, group_id_of(record),
                      f"record type {record_type} ({record.type_name}) is read by this reader but "
                      "not by the coordinator's loader since 4.1; skipped as it does")
    elif record_type in (0, 1):
        apply_offset_commit(ctx, record)
    elif record_type == 2:
        apply_group_metadata(ctx, record)
    elif record_type in RECORD_KINDS:
        apply_modern(ctx, record)
    else:
        ctx.violation("UNKNOWN_RECORD_TYPE", INFO, group_id_of(record),
                      f"record type {record_type} has no replay rule; skipped")


def split_by_group(events: Iterable[ReplayEvent]) -> tuple[dict[str, list[ReplayEvent]],
                                                             list[ReplayEvent]]:
    """Events per group id in log order, each marker fanned out to every group that has open
    transactional records of its producer; plus the events no group can be named for."""
    by_group: dict[str, list[ReplayEvent]] = {}
    open_by_producer: dict[int, set[str]] = {}
    orphans: list[ReplayEvent] = []
    for event in events:
        if event.is_marker:
            for group_id in sorted(open_by_producer.pop(event.producer_id, ())):
                by_group[group_id].append(event)
            continue
        group_id = group_id_of(event.record)
        if group_id is None:
            orphans.append(event)
            continue
        by_group.setdefault(group_id, []).append(event)
        if event.producer_id != -1:
            open_by_producer.setdefault(event.producer_id, set()).add(group_id)
    return by_group, orphans


def replay_partition(events: Iterable[ReplayEvent], *,
                     topic_names: dict[uuid.UUID, str] | None = None) -> ReplayResult:
    """Split a partition's events by group id, replay each group, and merge the results; a topic
    name learned by any group names every group's assignment rows."""
    by_group, orphans = split_by_group(events)
    results = [replay_group(group_events, topic_names=topic_names)
               for _, group_events in sorted(by_group.items())]
    results.append(replay_group(orphans, topic_names=topic_names))
    merged = ReplayResult({}, {}, {name: [] for name in TABLE_COLUMNS})
    for result in results:
        merged.groups.update(result.groups)
        merged.offsets.update(result.offsets)
        for tid, name in result.topic_names.items():
            merged.topic_names.setdefault(tid, name)
        for name, rows in result.tables.items():
            merged.tables[name].extend(rows)
    fill_topic_names(merged.tables, merged.topic_names)
    for name in HISTORY_TABLES:
        merged.tables[name].sort(key=lambda row: (row["log_partition"] or 0, row["log_offset"] or 0))
    return merged

"""The replay's output rows as plain dicts, in the column order of the contract
:data:`jobs.lake.history.TABLE_COLUMNS`."""

from __future__ import annotations

from jobs.replay.context import ReplayContext
from jobs.replay.derive import group_state
from jobs.lake.history import TABLE_COLUMNS
from jobs.replay.state import CLASSIC, STREAMS, Group

def build_tables(ctx: ReplayContext) -> dict[str, list[dict]]:
    """All tables from a finished replay; final-state rows sorted by their natural key."""
    groups = [ctx.groups[g] for g in sorted(ctx.groups)]
    tables = {
        "groups": [_group_row(g) for g in groups],
        "members": [_member_row(g, m) for g in groups for _, m in sorted(g.members.items())],
        "member_assignments": [row for g in groups for row in _assignment_rows(ctx, g)],
        "target_assignments": [row for g in groups for row in _target_rows(ctx, g)],
        "offsets": _offset_rows(ctx),
        "offset_commits": ctx.offset_commits, "epochs": ctx.epochs,
        "transactions": ctx.transactions, "violations": ctx.violations,
    }
    return {name: [_ordered(name, row) for row in rows] for name, rows in tables.items()}


def _ordered(table: str, row: dict) -> dict:
    return {name: row.get(name) for name, _ in TABLE_COLUMNS[table]}


def _position(position) -> dict:
    partition, offset = position if position is not None else (None, None)
    return {"log_partition": partition, "log_offset": offset}


def _group_row(group: Group) -> dict:
    classic = group.group_type == CLASSIC
    return {"group_id": group.group_id, "group_type": group.group_type,
            "group_state": group_state(group), "is_simple": group.is_simple,
            "group_epoch": None if classic else group.group_epoch,
            "target_assignment_epoch": None if classic else group.target_assignment_epoch,
            "generation": group.generation, "protocol_type": group.protocol_type,
            "protocol": group.protocol, "leader": group.leader,
            "current_state_timestamp": group.current_state_timestamp,
            "member_count": len(group.members), **_position(group.position)}


def _member_row(group: Group, m) -> dict:
    return {"group_id": group.group_id, "member_id": m.member_id, "instance_id": m.instance_id,
            "rack_id": m.rack_id, "client_id": m.client_id, "client_host": m.client_host,
            "subscribed_topic_names": sorted(m.subscribed_topic_names),
            "subscribed_topic_regex": m.subscribed_topic_regex,
            "server_assignor": m.server_assignor, "rebalance_timeout_ms": m.rebalance_timeout_ms,
            "session_timeout_ms": m.session_timeout_ms,
            "uses_classic_protocol": m.uses_classic_protocol, "member_epoch": m.member_epoch,
            "previous_member_epoch": m.previous_member_epoch, "member_state": m.member_state,
            **_position(m.position)}


def _partition_columns(ctx: ReplayContext, group: Group, topic, partition: int) -> dict:
    if group.group_type == STREAMS:
        return {"topic_id": None, "topic_name": None, "subtopology_id": topic,
                "partition": partition}
    return {"topic_id": str(topic), "topic_name": ctx.topic_name(topic), "subtopology_id": None,
            "partition": partition}


def _assignment_rows(ctx: ReplayContext, group: Group) -> list[dict]:
    rows = []
    for member_id, m in sorted(group.members.items()):
        base = {"group_id": group.group_id, "member_id": member_id,
                **_position(m.assignment_position or m.metadata_position)}
        for topic_name, partition in sorted(m.classic_assignment):
            tid = ctx.topic_id(topic_name)
            rows.append({**base, "topic_id": None if tid is None else str(tid),
                         "topic_name": topic_name, "partition": partition,
                         "assignment_epoch": group.generation, "assignment_epoch_source": "classic",
                         "is_pending_revocation": False})
        for pending, owned in ((False, m.assigned), (True, m.pending_revocation)):
            for (topic, partition), ap in sorted(owned.items(), key=lambda kv: _tp_key(kv[0])):
                rows.append({**base, **_partition_columns(ctx, group, topic, partition),
                             "assignment_epoch": ap.assignment_epoch,
                             "assignment_epoch_source": ap.assignment_epoch_source,
                             "is_pending_revocation": pending})
    return rows


def _target_rows(ctx: ReplayContext, group: Group) -> list[dict]:
    rows = []
    for member_id, target in sorted(group.target.items()):
        for topic, partition in sorted(target.partitions, key=_tp_key):
            rows.append({"group_id": group.group_id, "member_id": member_id,
                         **_partition_columns(ctx, group, topic, partition),
                         "target_assignment_epoch": group.target_assignment_epoch,
                         **_position(target.position)})
    return rows


def _offset_rows(ctx: ReplayContext) -> list[dict]:
    rows = []
    for group_id in sorted(ctx.offsets):
        for (topic, partition), e in sorted(ctx.offsets[group_id].main.items()):
            tid = e.topic_id or ctx.topic_id(topic)
            rows.append({"group_id": group_id, "topic": topic, "partition": partition,
                         "committed_offset": e.committed_offset, "leader_epoch": e.leader_epoch,
                         "metadata": e.metadata, "commit_timestamp": e.commit_timestamp,
                         "expire_timestamp": e.expire_timestamp,
                         "topic_id": None if tid is None else str(tid),
                         "producer_id": e.producer_id, "is_transactional": e.producer_id != -1,
                         **_position(e.position)})
    return rows


def _tp_key(topic_partition) -> tuple[str, int]:
    return str(topic_partition[0]), topic_partition[1]

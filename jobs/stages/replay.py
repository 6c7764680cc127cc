"""Replay stage in Spark: the group state machine in Python, per group, on the few records it needs.

Offset commits are replayed in SQL (:mod:`jobs.stages.offsets`); what they change elsewhere is
reduced to *touches* (the first commit after each group tombstone, the first naming each topic
id). Each ``(partition, group_id)`` is replayed by :func:`jobs.replay.apply_event` on an
executor (``mapInArrow`` over events sorted by group) over its membership records (types 2-24,
as the decode stage decoded them: never from the bytes again) and its touches; so one group's
millions of commits never reach Python. Rows come back as typed Arrow in one wide schema
(:data:`GROUP_TABLES` plus ``topic_ids``, the group's topic-name → id map the ``offsets`` table
needs), tagged with their table.
"""

from __future__ import annotations

import uuid

import pyarrow as pa

from jobs.replay import TABLE_COLUMNS, ReplayEvent, apply_event
from jobs.replay.context import ReplayContext
from jobs.replay.offsets import note_commit
from jobs.replay.tables import build_tables
from jobs.replay.topics import RESOLVED_TABLES
from jobs.stages.decode import DECODED_RECORD, unpack_record
from jobs.stages.grouping import each_group, map_groups, map_groups_here

GROUP_TABLES = ("groups", "members", "member_assignments", "target_assignments", "epochs",
                "violations")
TOPIC_IDS = "topic_ids"
TOPIC_ID_COLUMNS = [("group_id", "string"), ("topic_name", "string"),
                    ("lookup_topic_id", "string"), ("log_partition", "int")]
EVENT_DDL = ("partition int, group_id string, offset bigint, timestamp bigint, producer_id bigint, "
             f"is_transactional boolean, {DECODED_RECORD} binary, topic string, "
             "topic_id_bytes binary")
_ARROW = {"string": pa.string(), "boolean": pa.bool_(), "int": pa.int32(), "bigint": pa.int64(),
          "array<string>": pa.list_(pa.string())}


def _wide_columns() -> list[tuple[str, str]]:
    columns: dict[str, str] = {"table": "string"}
    for table in GROUP_TABLES:
        for name, dtype in TABLE_COLUMNS[table]:
            if columns.setdefault(name, dtype) != dtype:
                raise ValueError(f"column {name} has two types across the replay tables")
    for name, dtype in TOPIC_ID_COLUMNS:
        columns.setdefault(name, dtype)
    return list(columns.items())


WIDE_COLUMNS = _wide_columns()
WIDE_SCHEMA = pa.schema([pa.field(name, _ARROW[dtype]) for name, dtype in WIDE_COLUMNS])
WIDE_DDL = ", ".join(f"`{name}` {dtype}" for name, dtype in WIDE_COLUMNS)


def replay_group_arrow(events: pa.Table) -> pa.Table:
    """One group's membership records and touches → typed wide rows (the per-group step of
    :func:`replay_sorted_groups`, and of :func:`replay_groups_here` in the driver)."""
    rows = sorted(events.to_pylist(), key=lambda r: r["offset"])
    ctx = ReplayContext()
    for r in rows:
        producer_id = -1 if r["producer_id"] is None else r["producer_id"]
        if r[DECODED_RECORD] is None:  # a touch: what a commit does outside the offset store
            ctx.event = ReplayEvent(r["partition"], r["offset"], r["timestamp"], producer_id,
                                    bool(r["is_transactional"]), None, None)
            tid = r["topic_id_bytes"]
            note_commit(ctx, r["group_id"], r["topic"],
                        None if tid is None or tid == bytes(16) else uuid.UUID(bytes=tid))
            continue
        apply_event(ctx, ReplayEvent(r["partition"], r["offset"], r["timestamp"], producer_id,
                                     bool(r["is_transactional"]), None,
                                     unpack_record(r[DECODED_RECORD])))
    tables = build_tables(ctx)
    out: list[dict] = []
    for table in GROUP_TABLES:
        out.extend(dict(row, table=table) for row in tables[table])
    if rows:
        partition, group_id = rows[0]["partition"], rows[0]["group_id"]
        for name in dict.fromkeys(ctx.topic_names.values()):
            tid = ctx.topic_id(name)
            out.append({"table": TOPIC_IDS, "group_id": group_id, "topic_name": name,
                        "lookup_topic_id": None if tid is None else str(tid),
                        "log_partition": partition})
    return pa.Table.from_pylist(out, schema=WIDE_SCHEMA)   # a column a row lacks is null


def group_events(membership, touches):
    """One DataFrame of replay input: membership rows (each record as the decode stage staged
    it, :data:`jobs.stages.decode.DECODED_RECORD`) and touch rows (no record)."""
    from pyspark.sql import functions as F

    records = membership.select(
        "partition", "group_id", "offset", "timestamp", "producer_id", "is_transactional",
        DECODED_RECORD, F.lit(None).cast("string").alias("topic"),
        F.lit(None).cast("binary").alias("topic_id_bytes"))
    touched = touches.select(
        "partition", "group_id", "offset", "timestamp", F.lit(-1).cast("long").alias("producer_id"),
        F.lit(False).alias("is_transactional"), F.lit(None).cast("binary").alias(DECODED_RECORD),
        "topic", "topic_id_bytes")
    return records.unionByName(touched)


def replay_groups(membership, touches):
    """The wide typed rows of every group table (and ``topic_ids``) of the snapshot, each group
    replayed whole on an executor (:func:`jobs.stages.grouping.map_groups`)."""
    return map_groups(group_events(membership, touches), GROUP_KEYS, replay_group_arrow, WIDE_DDL)


GROUP_KEYS = ["partition", "group_id"]


def replay_sorted_groups(batches):
    """mapInArrow body: events sorted by group, each group replayed whole by
    :func:`replay_group_arrow` as soon as its last row has arrived."""
    return each_group(batches, GROUP_KEYS, replay_group_arrow)


def replay_groups_here(spark, membership, touches):
    """:func:`replay_groups` in the driver, for a snapshot held there: the same per-group replay
    (:func:`replay_group_arrow`) over the same events, collected, so no Python worker starts."""
    return map_groups_here(spark, group_events(membership, touches), GROUP_KEYS,
                           replay_group_arrow, WIDE_SCHEMA)


def table_rows(wide, table: str, snapshot_id: str, learned=None):
    """The rows of one group table, with ``snapshot_id`` in front. ``learned``: more topic id ->
    name pairs (``topic_id``, ``topic_name``) than the replayed groups' own, learned by groups of
    the snapshot not replayed here (an incremental run's, :mod:`jobs.stages.increment_run`)."""
    from pyspark.sql import functions as F

    columns = TOPIC_ID_COLUMNS if table == TOPIC_IDS else TABLE_COLUMNS[table]
    names = [name for name, _ in columns]
    selected = wide.where(F.col("table") == table).select(*names)
    if table == TOPIC_IDS:
        return selected
    if table in RESOLVED_TABLES:
        selected = _named(selected, wide, names, learned)
    return selected.select(F.lit(snapshot_id).alias("snapshot_id"), *names)


def learned_pairs(topic_ids):
    """The topic id -> name pairs of ``topic_ids`` rows (:data:`TOPIC_ID_COLUMNS`) that name an
    id: ``group_id, topic_id, topic_name``."""
    from pyspark.sql import functions as F

    return topic_ids.where(F.col("lookup_topic_id").isNotNull()).select(
        "group_id", F.col("lookup_topic_id").alias("topic_id"), "topic_name")


def names_by_id(pairs, alias: str = "learned_name"):
    """The name each topic id of ``pairs`` (``topic_id``, ``topic_name``) goes by: the smallest,
    when pairs disagree (a real cluster's do not)."""
    from pyspark.sql import functions as F

    return pairs.groupBy("topic_id").agg(F.min("topic_name").alias(alias))


def _named(rows, wide, names: list[str], more=None):
    """A topic id names one topic in a cluster: fill a null ``topic_name`` from the pair any
    group learned (:mod:`jobs.replay.topics`; the smallest name when pairs disagree), so a group
    that never commits is named too."""
    from pyspark.sql import functions as F

    pairs = learned_pairs(wide.where(F.col("table") == TOPIC_IDS)).select("topic_id", "topic_name")
    if more is not None:
        pairs = pairs.unionByName(more.select("topic_id", "topic_name"))
    return rows.join(names_by_id(pairs), "topic_id", "left").select(
        *[F.coalesce("topic_name", "learned_name").alias(c) if c == "topic_name" else c
          for c in names])

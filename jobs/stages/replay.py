"""Replay stage in Spark: decoded records → the group-history tables, parallel across groups.

Each group lives in one partition, so its log order is total: rows are grouped by
``(partition, group_id)`` and each group is replayed by :func:`jobs.replay.replay_group` on an
executor (``applyInArrow``). A group is also given the COMMIT/ABORT markers of its partition
whose producer wrote transactional offsets for it, which is all a marker can affect. Replay
rows travel back as JSON strings tagged with their table and are typed again with the column
contract of :data:`jobs.replay.TABLE_COLUMNS`.

Each group also sends back the topic id/name pairs it learned (side table ``topic_names``);
:func:`table_rows` names every group's assignment rows from all of them (``jobs.replay.topics``).
"""

from __future__ import annotations

import json

import pyarrow as pa

from decoders.codec import decode_record
from jobs.replay import TABLE_COLUMNS, ReplayEvent, replay_group
from jobs.replay.topics import RESOLVED_TABLES, TOPIC_NAME_COLUMNS, TOPIC_NAMES, topic_name_rows

EVENT_COLUMNS = ("partition", "offset", "timestamp", "producer_id", "is_transactional",
                 "control_type", "key", "value")
OUTPUT_DDL = "table string, row string"


def arrow_events(events: pa.Table) -> list[ReplayEvent]:
    """One group's event rows (any order) as replay events in log order, records decoded."""
    rows = sorted(events.select(list(EVENT_COLUMNS)).to_pylist(), key=lambda r: r["offset"])
    replay_events = []
    for r in rows:
        record = None if r["control_type"] else decode_record(r["key"], r["value"])
        # A capture cannot see producer ids (null): its records are read_committed, so they
        # replay as the non-transactional writes they now are.
        producer_id = -1 if r["producer_id"] is None else r["producer_id"]
        replay_events.append(ReplayEvent(r["partition"], r["offset"], r["timestamp"],
                                         producer_id, bool(r["is_transactional"]),
                                         r["control_type"], record))
    return replay_events


def replay_arrow(events: pa.Table) -> pa.Table:
    """applyInArrow body: one group's events (any order) → (table, row JSON) pairs."""
    result = replay_group(arrow_events(events))
    names, payloads = [], []
    tables = {**result.tables, TOPIC_NAMES: topic_name_rows(result.topic_names)}
    for table, table_rows in tables.items():
        for row in table_rows:
            names.append(table)
            payloads.append(json.dumps(row, default=str, ensure_ascii=False))
    return pa.table({"table": pa.array(names, pa.string()), "row": pa.array(payloads, pa.string())})


def table_ddl(table: str) -> str:
    columns = TOPIC_NAME_COLUMNS if table == TOPIC_NAMES else TABLE_COLUMNS[table]
    return ", ".join(f"`{name}` {dtype}" for name, dtype in columns)


def replay_events(records, raw):
    """The per-group event rows: decoded data records plus the markers that concern each group."""
    from pyspark.sql import functions as F

    data = (records.select("snapshot_id", "partition", "offset", "group_id")
            .join(raw.select("snapshot_id", "partition", "offset", "timestamp", "producer_id",
                             "is_transactional", "control_type", "key", "value"),
                  ["snapshot_id", "partition", "offset"]))
    producers = (data.where(F.col("producer_id") != -1)
                 .groupBy("partition", "group_id", "producer_id").count().drop("count"))
    markers = (raw.where(F.col("is_control") & F.col("control_type").isin("COMMIT", "ABORT"))
               .select("partition", "offset", "timestamp", "producer_id", "is_transactional",
                       "control_type", "key", "value")
               .join(producers, ["partition", "producer_id"]))
    return data.drop("snapshot_id").unionByName(markers)


def replay_snapshot(records, raw):
    """A DataFrame of (table, row JSON) for every replay output row of the snapshot."""
    events = replay_events(records, raw)
    return events.groupBy("partition", "group_id").applyInArrow(replay_arrow, OUTPUT_DDL)


def table_rows(replayed, table: str, snapshot_id: str):
    """The typed rows of one replay table, with ``snapshot_id`` in front."""
    from pyspark.sql import functions as F

    rows = (replayed.where(F.col("table") == table)
            .select(F.from_json("row", table_ddl(table)).alias("r"))
            .select(F.lit(snapshot_id).alias("snapshot_id"), "r.*"))
    if table not in RESOLVED_TABLES:
        return rows
    return _named(rows, replayed)


def _named(rows, replayed):
    """Fill a null ``topic_name`` from any group's learned pair for the same topic id."""
    from pyspark.sql import functions as F

    learned = (replayed.where(F.col("table") == TOPIC_NAMES)
               .select(F.from_json("row", table_ddl(TOPIC_NAMES)).alias("r"))
               .groupBy("r.topic_id").agg(F.min("r.topic_name").alias("learned_name")))
    columns = [F.coalesce("topic_name", "learned_name").alias(c) if c == "topic_name" else c
               for c in rows.columns]
    return rows.join(learned, "topic_id", "left").select(*columns)

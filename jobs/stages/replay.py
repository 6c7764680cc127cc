"""Replay stage in Spark: decoded records → the group-history tables, parallel across groups.

Each group lives in one partition, so its log order is total: rows are grouped by
``(partition, group_id)`` and each group is replayed by :func:`jobs.replay.replay_group` on an
executor (``applyInArrow``). A group is also given the COMMIT/ABORT markers of its partition
whose producer wrote transactional offsets for it, which is all a marker can affect. Replay
rows travel back as JSON strings tagged with their table and are typed again with the column
contract of :data:`jobs.replay.TABLE_COLUMNS`.
"""

from __future__ import annotations

import json

import pyarrow as pa

from decoders.codec import decode_record
from jobs.replay import TABLE_COLUMNS, ReplayEvent, replay_group

EVENT_COLUMNS = ("partition", "offset", "timestamp", "producer_id", "is_transactional",
                 "control_type", "key", "value")
OUTPUT_DDL = "table string, row string"


def replay_arrow(events: pa.Table) -> pa.Table:
    """applyInArrow body: one group's events (any order) → (table, row JSON) pairs."""
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
    result = replay_group(replay_events)
    names, payloads = [], []
    for table, table_rows in result.tables.items():
        for row in table_rows:
            names.append(table)
            payloads.append(json.dumps(row, default=str, ensure_ascii=False))
    return pa.table({"table": pa.array(names, pa.string()), "row": pa.array(payloads, pa.string())})


def table_ddl(table: str) -> str:
    return ", ".join(f"`{name}` {dtype}" for name, dtype in TABLE_COLUMNS[table])


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

    return (replayed.where(F.col("table") == table)
            .select(F.from_json("row", table_ddl(table)).alias("r"))
            .select(F.lit(snapshot_id).alias("snapshot_id"), "r.*"))

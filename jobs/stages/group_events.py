"""Every event of each group, for code that needs a group's whole log (the audit stage).

The audit correlates each offset commit with the ownership at its log position, so it reads the
group's full history, built from what the run already produced rather than from the bytes again:

* offset commits (95% of a snapshot) from ``offset_commits``: the replay stage's resolved rows
  carry every field a commit record has, so they become replay events without a decode;
* membership records (types 2-24) from ``records`` with their bytes from ``raw_records``: the few
  records whose nested values the group state machine reads;
* the COMMIT/ABORT markers (``raw_records`` control rows, no bytes read) of the producers that
  wrote for the group.
"""

from __future__ import annotations

import uuid

import pyarrow as pa

from decoders.codec import CoordinatorRecord, decode_record
from decoders.records_catalog import RECORD_TYPES
from jobs.replay import ABORT, COMMIT, ReplayEvent
from jobs.replay.events import NO_PRODUCER_ID

EVENT_COLUMNS = ("partition", "offset", "timestamp", "producer_id", "is_transactional",
                 "control_type", "key", "value")
# offset_commits columns an event row carries (null on the other rows); the topic's partition is
# renamed so it cannot be mistaken for the log position.
COMMIT_DDL = {"topic": "string", "topic_partition": "int", "committed_offset": "bigint",
              "leader_epoch": "int", "metadata": "string", "commit_timestamp": "bigint",
              "expire_timestamp": "bigint", "topic_id": "string", "record_type": "int",
              "value_version": "int", "is_tombstone": "boolean"}
RAW_DDL = {"control_type": "string", "key": "binary", "value": "binary"}
_COMMIT_SOURCE = {"topic_partition": "partition"}   # event column -> offset_commits column


def arrow_events(events: pa.Table) -> list[ReplayEvent]:
    """One group's event rows (any order) as replay events in log order."""
    names = [c for c in (*EVENT_COLUMNS, "group_id", *COMMIT_DDL) if c in events.column_names]
    rows = sorted(events.select(names).to_pylist(), key=lambda r: r["offset"])
    replay_events = []
    for r in rows:
        if r["control_type"]:
            record = None
        elif r["key"] is not None:
            record = decode_record(r["key"], r["value"])
        else:
            record = commit_record(r)
        # A capture cannot see producer ids (null): its records are read_committed, so they
        # replay as the non-transactional writes they now are.
        producer_id = NO_PRODUCER_ID if r["producer_id"] is None else r["producer_id"]
        replay_events.append(ReplayEvent(r["partition"], r["offset"], r["timestamp"],
                                         producer_id, bool(r["is_transactional"]),
                                         r["control_type"], record))
    return replay_events


def commit_record(row: dict) -> CoordinatorRecord:
    """The offset-commit record an ``offset_commits`` row was replayed from: the fields the replay
    and the audit read, as the decoder names them (absent values at Kafka's defaults)."""
    record_type = row["record_type"]
    key = {"group": row["group_id"], "topic": row["topic"], "partition": row["topic_partition"]}
    value = None
    if not row["is_tombstone"]:
        value = {"offset": row["committed_offset"],
                 "leaderEpoch": -1 if row["leader_epoch"] is None else row["leader_epoch"],
                 "metadata": row["metadata"], "commitTimestamp": row["commit_timestamp"],
                 "expireTimestamp": -1 if row["expire_timestamp"] is None
                 else row["expire_timestamp"]}
        if row["topic_id"] is not None:
            value["topicId"] = uuid.UUID(row["topic_id"])
    return CoordinatorRecord(record_type, RECORD_TYPES[record_type].name, key,
                             row["value_version"], value)


def group_event_rows(records, raw, commits):
    """The per-group event rows: membership records (with their bytes), resolved offset commits
    (``commits``: the snapshot's ``offset_commits``) and the markers that concern each group."""
    from pyspark.sql import functions as F

    def nulls(columns):
        return [F.lit(None).cast(COMMIT_DDL.get(c) or RAW_DDL[c]).alias(c) for c in columns]

    membership = (records.where(~F.col("record_type").isin(0, 1))
                  .select("snapshot_id", "partition", "offset", "group_id")
                  .join(raw.select("snapshot_id", "partition", "offset", "timestamp",
                                   "producer_id", "is_transactional", "control_type", "key",
                                   "value"),
                        ["snapshot_id", "partition", "offset"])
                  .drop("snapshot_id")
                  .select("*", *nulls(COMMIT_DDL)))
    resolved = commits.select(
        F.col("log_partition").alias("partition"), F.col("log_offset").alias("offset"),
        F.col("log_timestamp").alias("timestamp"), "producer_id", "is_transactional",
        *nulls(("control_type", "key", "value")), "group_id",
        *[F.col(_COMMIT_SOURCE.get(name, name)).alias(name) for name in COMMIT_DDL])
    data = membership.unionByName(resolved)
    producers = (records.where(F.col("producer_id").isNotNull()
                               & (F.col("producer_id") != NO_PRODUCER_ID))
                 .select("partition", "producer_id", "group_id").distinct())
    markers = (raw.where(F.col("is_control") & F.col("control_type").isin(COMMIT, ABORT))
               .select(*EVENT_COLUMNS)
               .join(producers, ["partition", "producer_id"])
               .select("*", *nulls(COMMIT_DDL)))
    return data.unionByName(markers)


"""Every event of each group, for code that needs a group's whole log (the audit stage).

The audit correlates each offset commit with the ownership at its log position, so it reads the
group's full history, built from what the run already produced rather than from the bytes again:

* offset commits (95% of a snapshot) from ``offset_commits``: the replay stage's resolved rows
  carry every field a commit record has, so they become replay events without a decode;
* membership records (types 2-24): in ``offsetlake run``, as its decode stage decoded them
  (:data:`jobs.stages.decode.DECODED_RECORD`, never decoded again); from a lake, ``records``
  with their bytes from ``raw_records`` (a lake keeps no decoded records), decoded here: the
  few records whose nested values the group state machine reads;
* the COMMIT/ABORT markers (``raw_records`` control rows, no bytes read) of the producers that
  wrote for the group.
"""

from __future__ import annotations

import uuid

import pyarrow as pa
import pyarrow.compute as pc

from decoders.codec import CoordinatorRecord, decode_record
from decoders.pylists import table_lists
from decoders.records_catalog import RECORD_TYPES
from jobs.replay import ABORT, COMMIT, ReplayEvent
from jobs.replay.events import NO_PRODUCER_ID
from jobs.stages.decode import DECODED_RECORD, unpack_record

# An event row's columns as raw_records holds them, then the record the decode stage staged.
RAW_EVENT_COLUMNS = ("partition", "offset", "timestamp", "producer_id", "is_transactional",
                     "control_type", "key", "value")
EVENT_COLUMNS = (*RAW_EVENT_COLUMNS, DECODED_RECORD)
# offset_commits columns an event row carries (null on the other rows); the topic's partition is
# renamed so it cannot be mistaken for the log position.
COMMIT_DDL = {"topic": "string", "topic_partition": "int", "committed_offset": "bigint",
              "leader_epoch": "int", "metadata": "string", "commit_timestamp": "bigint",
              "expire_timestamp": "bigint", "topic_id": "string", "record_type": "int",
              "value_version": "int", "is_tombstone": "boolean"}
RAW_DDL = {"control_type": "string", "key": "binary", "value": "binary", DECODED_RECORD: "binary"}
OFFSET_COMMIT_KEY_TYPES = (bytes([0, 0]), bytes([0, 1]))   # types 0 and 1, big-endian int16
_COMMIT_SOURCE = {"topic_partition": "partition"}   # event column -> offset_commits column


def arrow_events(events: pa.Table) -> list[ReplayEvent]:
    """One group's event rows (any order) as replay events in log order (read column by column:
    a group's commits are most of a snapshot, and a dict per row would cost more than the audit)."""
    names = [c for c in (*EVENT_COLUMNS, "group_id", *COMMIT_DDL) if c in events.column_names]
    events = events.select(names)
    cols = table_lists(events.take(pc.sort_indices(events, [("offset", "ascending")])))
    replay_events = []
    absent = [None] * events.num_rows
    # A row's commit fields come with it (a group of membership records alone may come without
    # the commit columns: none of its rows is a commit); each topic id is parsed once.
    commits = zip(*(cols.get(c) or absent for c in COMMIT_FIELDS))
    topic_ids: dict[str, uuid.UUID] = {}
    for (partition, offset, timestamp, producer_id, is_transactional, control_type, key, value,
         packed), commit in zip(zip(*(cols.get(c, absent) for c in EVENT_COLUMNS)), commits):
        if control_type:
            record = None
        elif packed is not None:
            record = unpack_record(packed)
        elif key is not None:
            record = decode_record(key, value)
        else:
            record = _commit(*commit, topic_ids=topic_ids)
        # A capture cannot see producer ids (null): its records are read_committed, so they
        # replay as the non-transactional writes they now are.
        replay_events.append(ReplayEvent(partition, offset, timestamp,
                                         NO_PRODUCER_ID if producer_id is None else producer_id,
                                         bool(is_transactional), control_type, record))
    return replay_events


COMMIT_FIELDS = ("group_id", *COMMIT_DDL)   # the commit record's fields, as _commit takes them


def commit_record(row: dict) -> CoordinatorRecord:
    """The offset-commit record an ``offset_commits`` row was replayed from: the fields the replay
    and the audit read, as the decoder names them (absent values at Kafka's defaults)."""
    return _commit(*(row[name] for name in COMMIT_FIELDS), topic_ids={})


def _commit(group_id, topic, topic_partition, committed_offset, leader_epoch, metadata,
            commit_timestamp, expire_timestamp, topic_id, record_type, value_version,
            is_tombstone, *, topic_ids: dict) -> CoordinatorRecord:
    value = None
    if not is_tombstone:
        value = {"offset": committed_offset,
                 "leaderEpoch": -1 if leader_epoch is None else leader_epoch,
                 "metadata": metadata, "commitTimestamp": commit_timestamp,
                 "expireTimestamp": -1 if expire_timestamp is None else expire_timestamp}
        if topic_id is not None:
            parsed = topic_ids.get(topic_id)
            if parsed is None:
                parsed = topic_ids[topic_id] = uuid.UUID(topic_id)
            value["topicId"] = parsed
    return CoordinatorRecord(record_type, RECORD_TYPES[record_type].name,
                             {"group": group_id, "topic": topic, "partition": topic_partition},
                             value_version, value)


def _nulls(columns):
    from pyspark.sql import functions as F

    return [F.lit(None).cast(COMMIT_DDL.get(c) or RAW_DDL[c]).alias(c) for c in columns]


def membership_event_rows(records, raw):
    """Membership records (types 2-24) with their bytes: ``records`` joined to ``raw_records``."""
    from pyspark.sql import functions as F

    # The same condition on both sides (a key's first two bytes are its record type): the join
    # then moves the few membership rows, not every raw row with its bytes.
    raw_membership = raw.where(~F.col("is_control")
                               & ~F.substring("key", 1, 2).isin(*OFFSET_COMMIT_KEY_TYPES))
    return (F.broadcast(records.where(~F.col("record_type").isin(0, 1))
                        .select("snapshot_id", "partition", "offset", "group_id"))
            .join(raw_membership.select("snapshot_id", "partition", "offset", "timestamp",
                                        "producer_id", "is_transactional", "control_type",
                                        "key", "value"),
                  ["snapshot_id", "partition", "offset"])
            .drop("snapshot_id")
            .select("*", *_nulls((DECODED_RECORD,)), *_nulls(COMMIT_DDL)))


def staged_membership_event_rows(membership):
    """Membership records as the run's decode stage staged them (``membership``: its decoded
    rows of types 2-24, each with :data:`~jobs.stages.decode.DECODED_RECORD`): no bytes, no
    join, no decode."""
    return membership.select("partition", "offset", "timestamp", "producer_id", "is_transactional",
                             *_nulls(("control_type", "key", "value")), DECODED_RECORD,
                             "group_id", *_nulls(COMMIT_DDL))


def commit_event_rows(commits):
    """``offset_commits`` rows as event rows (no bytes: :func:`commit_record` rebuilds them)."""
    from pyspark.sql import functions as F

    return commits.select(
        F.col("log_partition").alias("partition"), F.col("log_offset").alias("offset"),
        F.col("log_timestamp").alias("timestamp"), "producer_id", "is_transactional",
        *_nulls(("control_type", "key", "value", DECODED_RECORD)), "group_id",
        *[F.col(_COMMIT_SOURCE.get(name, name)).alias(name) for name in COMMIT_DDL])


def marker_event_rows(records, raw):
    """The COMMIT/ABORT markers (no bytes read) of the producers that wrote for each group."""
    from pyspark.sql import functions as F

    producers = (records.where(F.col("producer_id").isNotNull()
                               & (F.col("producer_id") != NO_PRODUCER_ID))
                 .select("partition", "producer_id", "group_id").distinct())
    return (raw.where(F.col("is_control") & F.col("control_type").isin(COMMIT, ABORT))
            .select(*RAW_EVENT_COLUMNS)
            .join(F.broadcast(producers), ["partition", "producer_id"])
            .select("*", *_nulls((DECODED_RECORD,)), *_nulls(COMMIT_DDL)))


def group_event_rows(records, raw, commits, membership=None):
    """The per-group event rows: membership records (``membership``: the run's staged decoded
    rows of them; None: ``records`` with their bytes), resolved offset commits (``commits``: the
    snapshot's ``offset_commits``) and the markers that concern each group."""
    members = (membership_event_rows(records, raw) if membership is None
               else staged_membership_event_rows(membership))
    return (members.unionByName(commit_event_rows(commits))
            .unionByName(marker_event_rows(records, raw)))

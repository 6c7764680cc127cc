"""Every event of each group, for code that needs a group's whole log (the audit stage).

The replay stage reduces offset commits to SQL and touches; an audit correlates each commit with
the ownership at its log position, so it reads the group's full history: its data records joined
back to their raw bytes, plus the COMMIT/ABORT markers of producers that wrote for the group.
"""

from __future__ import annotations

import pyarrow as pa

from decoders.codec import decode_record
from jobs.replay import ABORT, COMMIT, ReplayEvent
from jobs.replay.events import NO_PRODUCER_ID

EVENT_COLUMNS = ("partition", "offset", "timestamp", "producer_id", "is_transactional",
                 "control_type", "key", "value")


def arrow_events(events: pa.Table) -> list[ReplayEvent]:
    """One group's event rows (any order) as replay events in log order, records decoded."""
    rows = sorted(events.select(list(EVENT_COLUMNS)).to_pylist(), key=lambda r: r["offset"])
    replay_events = []
    for r in rows:
        record = None if r["control_type"] else decode_record(r["key"], r["value"])
        # A capture cannot see producer ids (null): its records are read_committed, so they
        # replay as the non-transactional writes they now are.
        producer_id = NO_PRODUCER_ID if r["producer_id"] is None else r["producer_id"]
        replay_events.append(ReplayEvent(r["partition"], r["offset"], r["timestamp"],
                                         producer_id, bool(r["is_transactional"]),
                                         r["control_type"], record))
    return replay_events


def group_event_rows(records, raw):
    """The per-group event rows: decoded data records plus the markers that concern each group."""
    from pyspark.sql import functions as F

    data = (records.select("snapshot_id", "partition", "offset", "group_id")
            .join(raw.select("snapshot_id", "partition", "offset", "timestamp", "producer_id",
                             "is_transactional", "control_type", "key", "value"),
                  ["snapshot_id", "partition", "offset"]))
    producers = (data.where(F.col("producer_id") != NO_PRODUCER_ID)
                 .groupBy("partition", "group_id", "producer_id").count().drop("count"))
    markers = (raw.where(F.col("is_control") & F.col("control_type").isin(COMMIT, ABORT))
               .select(*EVENT_COLUMNS)
               .join(producers, ["partition", "producer_id"]))
    return data.drop("snapshot_id").unionByName(markers)

"""Audit stage in Spark: the lake's ``records`` and ``raw_records`` of a snapshot → ``findings``.

Groups are audited in parallel, each on an executor by the pure code of :mod:`jobs.audits`
(``applyInArrow`` over the same per-group events the replay stage uses). What one group cannot
know is computed once per snapshot on the driver and shipped with the function: the fencing
regime, the compacted ranges of each partition, the snapshot time and every topic id/name pair
the lake knows (so a group that never committed still gets topic names).
"""

from __future__ import annotations

import json
import uuid

import pyarrow as pa

from jobs.lake.findings import findings_ddl
from jobs.stages.replay import arrow_events, replay_events

OUTPUT_DDL = "row string"
NAME_TABLES = (("offset_commits", "topic"), ("member_assignments", "topic_name"),
               ("target_assignments", "topic_name"))


def audit_body(regime: str, topic_names: dict[str, str], gaps: dict[int, list], snapshot_time_ms):
    """The applyInArrow function, closed over the snapshot-wide facts."""
    names = {uuid.UUID(tid): name for tid, name in topic_names.items()}

    def body(events: pa.Table) -> pa.Table:
        from jobs.audits.engine import audit_group
        from jobs.audits.evidence import LogCoverage

        findings = audit_group(arrow_events(events), regime=regime, topic_names=names,
                               coverage=LogCoverage({p: [tuple(g) for g in gs]
                                                     for p, gs in gaps.items()}),
                               snapshot_time_ms=snapshot_time_ms)
        rows = [json.dumps(f, default=str, ensure_ascii=False) for f in findings]
        return pa.table({"row": pa.array(rows, pa.string())})
    return body


def compacted_ranges(raw) -> dict[int, list[tuple[int, int]]]:
    """Missing offsets ``[start, end)`` per partition: a log that starts after 0 or skips
    offsets lost records to the cleaner (control records keep their offsets)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    previous = F.lag("offset").over(Window.partitionBy("partition").orderBy("offset"))
    gaps = (raw.select("partition", "offset").withColumn("previous", F.coalesce(previous, F.lit(-1)))
            .where(F.col("offset") > F.col("previous") + 1)
            .select("partition", (F.col("previous") + 1).alias("start"), "offset"))
    result: dict[int, list[tuple[int, int]]] = {}
    for row in gaps.orderBy("partition", "start").collect():
        result.setdefault(row["partition"], []).append((row["start"], row["offset"]))
    return result


def snapshot_regime(records) -> str:
    """``relaxed`` when any current-assignment record carries AssignmentEpochs (4.3+ writers)."""
    from pyspark.sql import functions as F

    explicit = (records.where(F.col("record_type").isin(8, 22))
                .where(F.to_json("value").rlike('"assignmentEpochs":\\[-?[0-9]')).limit(1))
    return "relaxed" if explicit.count() else "strict"


def lake_topic_names(tables: dict) -> dict[str, str]:
    """Every topic id -> name pair of the snapshot's replay tables (``{name: DataFrame}``)."""
    from pyspark.sql import functions as F

    names: dict[str, str] = {}
    for table, column in NAME_TABLES:
        df = tables.get(table)
        if df is None:
            continue
        pairs = (df.where(F.col("topic_id").isNotNull() & F.col(column).isNotNull())
                 .select("topic_id", F.col(column).alias("name")).distinct().collect())
        for row in pairs:
            names.setdefault(row["topic_id"], row["name"])
    return names


def audit_snapshot(records, raw, snapshot_id: str, *, regime: str | None = None,
                   topic_names: dict[str, str] | None = None):
    """The ``findings`` rows of one snapshot (``snapshot_id`` first, then ``findings_ddl``)."""
    from pyspark.sql import functions as F

    regime = regime or snapshot_regime(records)
    snapshot_time = raw.agg(F.max("timestamp")).first()[0]
    body = audit_body(regime, topic_names or {}, compacted_ranges(raw), snapshot_time)
    found = replay_events(records, raw).groupBy("partition", "group_id").applyInArrow(
        body, OUTPUT_DDL)
    return (found.select(F.from_json("row", findings_ddl()).alias("f"))
            .select(F.lit(snapshot_id).alias("snapshot_id"), "f.*"))

"""Audit stage in Spark: the lake's ``records`` and ``raw_records`` of a snapshot → ``findings``.

Groups are audited in parallel, each on an executor by the pure code of :mod:`jobs.audits`
(``applyInArrow`` over the same per-group events the replay stage uses). What one group cannot
know is computed once per snapshot on the driver and shipped with the function: the fencing
regime, the compacted ranges of each partition, the snapshot time and every topic id/name pair
the lake knows (so a group that never committed still gets topic names).

:func:`audit_lake` is what ``offsetlake audit`` runs: read the snapshot, write ``findings`` (and
``downgrade_findings`` when the downgrade audit is given), return the rows to print.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pyarrow as pa

from jobs.lake import RAW_RECORDS, RECORDS, read_snapshot, read_table, replace_snapshot
from jobs.lake.findings import FINDINGS, findings_ddl
from jobs.stages.group_events import arrow_events, group_event_rows

OUTPUT_DDL = "row string"
DOWNGRADE_FINDINGS = "downgrade_findings"
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
    """The fencing regime per group type (:func:`jobs.audits.validators.combine_regimes`): which
    current-assignment types (8, 22) carry AssignmentEpochs in this snapshot."""
    from pyspark.sql import functions as F

    from jobs.audits.validators import combine_regimes

    explicit = (records.where(F.col("record_type").isin(8, 22))
                .where(F.to_json("value").rlike('"assignmentEpochs":\\[-?[0-9]'))
                .groupBy("record_type").count().collect())
    types = {row["record_type"] for row in explicit}
    return combine_regimes(8 in types, 22 in types)


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
    found = group_event_rows(records, raw).groupBy("partition", "group_id").applyInArrow(
        body, OUTPUT_DDL)
    return (found.select(F.from_json("row", findings_ddl()).alias("f"))
            .select(F.lit(snapshot_id).alias("snapshot_id"), "f.*"))


def _snapshot(spark, lake: Path, wanted: str | None) -> str:
    ids = sorted(r[0] for r in read_table(spark, lake, RECORDS).select("snapshot_id")
                 .distinct().collect())
    if wanted is not None:
        if wanted not in ids:
            raise LookupError(f"snapshot {wanted} is not in {lake} (snapshots: {', '.join(ids)})")
        return wanted
    if len(ids) != 1:
        raise LookupError(f"{lake} holds {len(ids)} snapshots ({', '.join(ids) or 'none'}); "
                          "pick one with --snapshot")
    return ids[0]


def _optional(spark, lake: Path, table: str, snapshot_id: str):
    """The snapshot's rows of ``table``, or None before the replay wrote it."""
    if not (Path(lake) / table / "_delta_log").is_dir():
        return None
    return read_snapshot(spark, lake, table, snapshot_id)


def audit_lake(spark, lake: Path, args, downgrade):
    """``(finding rows, downgrade rows, summary)`` or an error sentence."""
    if not (Path(lake) / RECORDS / "_delta_log").is_dir():
        return f"{lake} has no {RECORDS} table; run 'offsetlake run SNAPSHOT --lake {lake}' first"
    try:
        snapshot_id = _snapshot(spark, lake, args.snapshot)
    except LookupError as error:
        return str(error)
    records = read_snapshot(spark, lake, RECORDS, snapshot_id)
    raw = read_snapshot(spark, lake, RAW_RECORDS, snapshot_id)
    regime = snapshot_regime(records) if args.fencing == "auto" else args.fencing
    names = lake_topic_names({t: _optional(spark, lake, t, snapshot_id) for t, _ in NAME_TABLES})
    replace_snapshot(audit_snapshot(records, raw, snapshot_id, regime=regime, topic_names=names),
                     lake, FINDINGS, snapshot_id)
    rows = [r.asDict() for r in read_snapshot(spark, lake, FINDINGS, snapshot_id).drop(
        "snapshot_id").collect()]
    rows = sorted((r for r in rows if _wanted(r, args)),
                  key=lambda r: (r["group_id"] or "", r["log_partition"] or 0, r["log_offset"] or 0,
                                 r["rule_id"]))
    downgrade_rows = []
    if downgrade:
        df = downgrade(spark, records, raw, snapshot_id, args.target_version)
        replace_snapshot(df, lake, DOWNGRADE_FINDINGS, snapshot_id)
        downgrade_rows = [r.asDict() for r in read_snapshot(
            spark, lake, DOWNGRADE_FINDINGS, snapshot_id).collect()]
    summary = (f"audit: snapshot {snapshot_id}, fencing {regime}: {len(rows)} finding(s) shown"
               + _counts(rows))
    return rows, downgrade_rows, summary


def _wanted(row: dict, args) -> bool:
    return (not args.group or row["group_id"] in args.group) and \
        (not args.rule or row["rule_id"] in args.rule)


def _counts(rows: list[dict]) -> str:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["severity"]] = counts.get(r["severity"], 0) + 1
    return "" if not counts else " (" + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + ")"

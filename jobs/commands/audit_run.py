"""The Spark side of ``offsetlake audit`` (imported only when the command runs): read the
snapshot, compute and write ``findings`` (and ``downgrade_findings``), return what to print."""

from __future__ import annotations

from pathlib import Path

from jobs.lake import RAW_RECORDS, read_snapshot, read_table, replace_snapshot
from jobs.lake.findings import FINDINGS
from jobs.stages.audit import NAME_TABLES, audit_snapshot, lake_topic_names, snapshot_regime

RECORDS = "records"


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
    try:
        return read_snapshot(spark, lake, table, snapshot_id)
    except Exception:   # the table does not exist yet: the audit does without it
        return None


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
        df = downgrade[0](spark, records, raw, snapshot_id, args.target_version)
        replace_snapshot(df, lake, "downgrade_findings", snapshot_id)
        downgrade_rows = [r.asDict() for r in read_snapshot(
            spark, lake, "downgrade_findings", snapshot_id).collect()]
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

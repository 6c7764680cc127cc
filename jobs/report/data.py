"""What the report shows, read through the ``sql/`` views of one snapshot into plain Python rows.

Everything Spark does for the report happens here; :mod:`jobs.report.page` only formats.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_TIMELINE_GROUPS = 12   # the groups with the most epoch changes get a chart each
MAX_TIMELINE_MEMBERS = 10  # member lines per chart (legend space)
MAX_TABLE_ROWS = 50
MAX_LAG_BARS = 20


@dataclass
class ReportData:
    snapshot_id: str
    facts: dict | None
    groups: list[dict]
    findings: list[dict]
    findings_available: bool
    downgrade: list[dict]
    downgrade_available: bool
    reconciliations: list[dict]
    not_converged: list[dict]
    pending_revocation: list[dict]
    open_transactions: list[dict]
    load: list[dict] = field(default_factory=list)     # coordinator_load, by partition
    timelines: dict[str, list[dict]] = field(default_factory=dict)
    timeline_groups_total: int = 0
    snapshots: list[str] = field(default_factory=list)


def _rows(spark, query: str, limit: int | None = MAX_TABLE_ROWS) -> list[dict]:
    df = spark.sql(query)
    # Timestamps as text in the session time zone (UTC, conf/), not in the Python process's zone.
    df = df.selectExpr(*[f"date_format(`{f.name}`, 'yyyy-MM-dd HH:mm:ss') as `{f.name}`"
                         if f.dataType.typeName() in ("timestamp", "timestamp_ntz") else f"`{f.name}`"
                         for f in df.schema.fields])
    if limit:
        df = df.limit(limit)
    return [r.asDict(recursive=True) for r in df.collect()]


def _timelines(spark) -> tuple[dict[str, list[dict]], int]:
    busiest = _rows(spark, "select group_id, count(*) as changes from epoch_timelines "
                           "group by group_id order by changes desc, group_id", limit=None)
    chosen = [r["group_id"] for r in busiest[:MAX_TIMELINE_GROUPS]]
    timelines: dict[str, list[dict]] = {g: [] for g in chosen}
    if chosen:
        listed = ", ".join("'" + g.replace("\\", "\\\\").replace("'", "\\'") + "'" for g in chosen)
        for row in _rows(spark, "select group_id, member_id, epoch_kind, epoch, log_offset, "
                                "log_partition from epoch_timelines "
                                f"where group_id in ({listed}) order by log_offset", limit=None):
            timelines[row["group_id"]].append(row)
    return timelines, len(busiest)


def collect(spark, snapshot_id: str, placeholders: list[str], snapshots: list[str]) -> ReportData:
    """Read one snapshot's report data; the catalog must be registered for ``snapshot_id``."""
    facts = _rows(spark, "select * from snapshot_facts", limit=1)
    timelines, total = _timelines(spark)
    return ReportData(
        snapshot_id=snapshot_id,
        facts=facts[0] if facts else None,
        groups=_rows(spark, "select * from group_overview order by group_id"),
        findings=_rows(spark, "select * from findings_summary order by severity_rank, rule_id"),
        findings_available="findings" not in placeholders,
        downgrade=_rows(spark, "select * from downgrade_readiness order by target_version"),
        downgrade_available="downgrade_findings" not in placeholders,
        reconciliations=_rows(spark, "select * from long_reconciliations where reconciliation_ms "
                                     "is not null order by reconciliation_ms desc, group_id",
                              limit=MAX_LAG_BARS),
        not_converged=_rows(spark, "select * from members_not_converged "
                                   "order by epochs_behind desc, group_id, member_id"),
        pending_revocation=_rows(spark, "select * from partitions_pending_revocation "
                                        "order by group_id, topic_name, partition"),
        open_transactions=_rows(spark, "select * from open_transactions order by group_id, producer_id"),
        load=_rows(spark, "select * from coordinator_load order by records desc, partition"),
        timelines=timelines, timeline_groups_total=total, snapshots=snapshots)


def timeline_series(rows: list[dict]) -> list[tuple[str, list[tuple[float, float]], str]]:
    """Step-chart series of one group: group/target epochs (or the classic generation) solid,
    members dashed; x is the log offset."""
    lines: dict[tuple[str, str | None], list[tuple[float, float]]] = {}
    for row in rows:
        lines.setdefault((row["epoch_kind"], row["member_id"]), []).append(
            (float(row["log_offset"]), float(row["epoch"])))
    order = {"group": 0, "target_assignment": 1, "generation": 2, "member": 3}
    keys = sorted(lines, key=lambda k: (order.get(k[0], 9), k[1] or ""))
    members = [k for k in keys if k[0] == "member"]
    series = []
    for kind, member in [k for k in keys if k[0] != "member"] + members[:MAX_TIMELINE_MEMBERS]:
        name = kind.replace("_", " ") if member is None else f"member {member[:14]}"
        series.append((name, lines[(kind, member)], "" if member is None else "5,3"))
    return series

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
    expiry: list[dict] = field(default_factory=list)   # offset_expiry: the soonest first
    expiry_counts: dict = field(default_factory=dict)  # offsets expiring / blocked / expired
    ghosts: list[dict] = field(default_factory=list)   # ghost_groups
    stale: list[dict] = field(default_factory=list)    # stale_offsets
    recreated: list[dict] = field(default_factory=list)  # recreated_topics
    churn: list[dict] = field(default_factory=list)    # group_churn: the busiest group-hours
    migration: list[dict] = field(default_factory=list)  # migration_readiness
    lag: list[dict] = field(default_factory=list)      # lag per group and topic, this snapshot
    lag_history: list[dict] = field(default_factory=list)  # total lag per group and snapshot
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


EXPIRY_COUNTS = """
select count(*) as offsets,
       count_if(is_expired_at_snapshot) as expired,
       count_if(not is_expired_at_snapshot and ms_until_expiry <= s.expiry_warning_ms)
           as expiring_soon,
       count_if(blocked_by is not null) as blocked,
       min(expires_at) as first_expiry_at
from offset_expiry cross join settings as s
"""


def lag_history_rows(spark, lake) -> list[dict]:
    """Total lag per group in every snapshot of the lake's ``lag`` table (not only the one
    reported), in capture order: the report's lag history."""
    from pathlib import Path

    path = Path(lake) / "lag"
    if not (path / "_delta_log").is_dir():
        return []
    spark.read.format("delta").load(str(path.resolve())).createOrReplaceTempView("lag_all_snapshots")
    return _rows(spark, "select snapshot_id, group_id, sum(lag) as lag, max(read_at) as read_at "
                        "from lag_all_snapshots group by snapshot_id, group_id "
                        "order by read_at, snapshot_id, group_id", limit=None)


def collect(spark, snapshot_id: str, placeholders: list[str], snapshots: list[str],
            lag_history: list[dict] | None = None) -> ReportData:
    """Read one snapshot's report data; the catalog must be registered for ``snapshot_id``
    (``lag_history``: :func:`lag_history_rows`, read before)."""
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
        expiry=_rows(spark, "select * from offset_expiry where expires_at is not null "
                            "order by expires_at, group_id, topic, partition"),
        expiry_counts=_rows(spark, EXPIRY_COUNTS, limit=1)[0],
        ghosts=_rows(spark, "select * from ghost_groups order by is_ghost desc, idle_ms desc, "
                            "group_id"),
        stale=_rows(spark, "select * from stale_offsets order by group_id, topic, partition"),
        recreated=_rows(spark, "select * from recreated_topics order by is_current desc, "
                               "group_id, topic, partition, log_offset"),
        churn=_rows(spark, "select * from group_churn order by epoch_bumps + generation_bumps "
                           "desc, joins + leaves desc, group_id, hour_at", limit=MAX_LAG_BARS),
        migration=_rows(spark, "select * from migration_readiness order by is_ready, group_id, "
                               "direction"),
        lag=_rows(spark, "select group_id, topic, count(*) as partitions, sum(lag) as lag, "
                         "count_if(is_committed_below_log_start) as below_log_start, "
                         "timestamp_millis(max(read_at)) as read_at from lag "
                         "group by group_id, topic order by lag desc nulls last, group_id, topic"),
        lag_history=lag_history or [],
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

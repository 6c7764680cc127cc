"""The report as one self-contained HTML page: inline CSS and SVG, no script, no link to fetch."""

from __future__ import annotations

from datetime import datetime, UTC
from html import escape

from jobs.report.data import ReportData, timeline_series
from jobs.report.gate import counts_line, headline
from jobs.report.svg import PALETTE, SEVERITY_COLORS, bar_chart, step_chart

HOT_LOAD_FACTOR = 2.0   # a partition with twice the mean's records: its coordinator's load
MAX_LOAD_BARS = 20

CSS = """
body{font-family:sans-serif;margin:24px;color:#222;max-width:1240px}
h1{font-size:22px;margin-bottom:4px} h2{font-size:17px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:28px}
table{border-collapse:collapse;font-size:12px;margin:8px 0} th,td{border:1px solid #ddd;padding:3px 7px;text-align:left}
th{background:#f3f3f3} .muted{color:#777} .ok{color:#2a7a2a;font-weight:bold} .bad{color:#c62828;font-weight:bold}
h3{font-size:14px;margin:12px 0 4px}
.facts td:first-child{font-weight:bold} .charts{display:flex;flex-wrap:wrap;gap:8px} svg.chart{border:1px solid #eee}
"""


def _cell(value) -> str:
    if value is None:
        return "<span class='muted'>-</span>"
    if isinstance(value, bool):
        return "<span class='ok'>yes</span>" if value else "no"
    if isinstance(value, datetime):
        return escape(value.strftime("%Y-%m-%d %H:%M:%S"))
    if isinstance(value, (list, tuple)):
        return escape(", ".join(str(v) for v in value))
    return escape(str(value))


def table(rows: list[dict], columns: list[str], empty: str) -> str:
    if not rows:
        return f"<p class='muted'>{escape(empty)}</p>"
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{_cell(r.get(c))}</td>" for c in columns) + "</tr>"
                   for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _facts(data: ReportData) -> str:
    f = data.facts
    if not f:
        return "<p class='muted'>No raw_records for this snapshot.</p>"
    rows = [("snapshot", data.snapshot_id),
            ("records read", f"{f['raw_record_count']} ({f['data_record_count']} data, "
                             f"{f['control_record_count']} control)"),
            ("decoded / quarantined", f"{f['decoded_record_count']} / {f['decode_quarantine_count']}"
                                      f" (+{f['unreadable_unit_count']} unreadable units)"),
            ("partitions / files", f"{f['partition_count']} / {f['source_file_count']}"),
            ("time range", f"{_cell(f['first_record_at'])} .. {_cell(f['last_record_at'])} UTC"),
            ("groups", f"{len(data.groups)} live, {f['group_id_count']} group ids in records"),
            ("reconciled", "yes" if f["is_reconciled"] else "NO")]
    return "<table class='facts'>" + "".join(
        f"<tr><td>{escape(k)}</td><td>{_cell(v) if k != 'reconciled' else v}</td></tr>"
        for k, v in rows) + "</table>"


def _findings(data: ReportData) -> str:
    if not data.findings_available:
        return "<p class='muted'>No findings table in this lake: the audit has not run.</p>"
    bars = [(f"{r['rule_id']} {r['severity']}", float(r["finding_count"]),
             SEVERITY_COLORS.get(str(r["severity"]).upper(), "#777")) for r in data.findings]
    return bar_chart(bars, "findings by rule and severity") + table(
        data.findings, ["rule_id", "severity", "verdict", "finding_count", "group_count",
                        "first_log_partition", "first_log_offset"], "No findings: every rule passed.")


def _downgrade(data: ReportData) -> str:
    if not data.downgrade_available:
        return "<p class='muted'>No downgrade_findings table in this lake: the audit has not run.</p>"
    return table(data.downgrade, ["target_version", "is_ready", "worst_class", "break_count",
                                  "drop_count", "resurrect_count", "read_as_latest_count",
                                  "info_count", "affected_group_count", "affected_record_count"],
                 "No downgrade findings.")


def _timelines(data: ReportData) -> str:
    charts = [step_chart(timeline_series(rows), f"{group}: epochs by log offset", "log offset",
                         width=540, height=220)
              for group, rows in data.timelines.items()]
    more = data.timeline_groups_total - len(data.timelines)
    note = f"<p class='muted'>{more} more group(s) not drawn.</p>" if more > 0 else ""
    if not charts:
        return "<p class='muted'>No epoch changes in this snapshot.</p>"
    return "<div class='charts'>" + "".join(charts) + "</div>" + note


def _lag(data: ReportData) -> str:
    bars = [(f"{r['group_id']} @ {r['target_assignment_epoch']}", float(r["reconciliation_ms"]),
             PALETTE[3] if r["is_in_progress"] else PALETTE[0]) for r in data.reconciliations]
    chart = bar_chart(bars, "reconciliation lag: target epoch written -> last member arrived",
                      unit=" ms")
    return (chart or "<p class='muted'>No reconciliations in this snapshot.</p>") + table(
        data.reconciliations, ["group_id", "target_assignment_epoch", "target_set_at",
                               "last_member_arrived_at", "arrived_member_count",
                               "pending_member_count", "reconciliation_ms", "is_in_progress"], "")


def _load(data: ReportData) -> str:
    """Records per ``__consumer_offsets`` partition (the busiest first; a bar beyond twice the
    mean is a hot partition, one coordinator's load), with the superseded share."""
    bars = [(f"partition {r['partition']}", float(r["records"]),
             PALETTE[3] if r["load_factor"] >= HOT_LOAD_FACTOR else PALETTE[0])
            for r in data.load[:MAX_LOAD_BARS]]
    chart = bar_chart(bars, "records per __consumer_offsets partition (red: over "
                            f"{HOT_LOAD_FACTOR:g}x the mean)")
    return (chart or "<p class='muted'>No records in this snapshot.</p>") + table(
        data.load, ["partition", "records", "bytes", "groups", "load_factor", "top_group",
                    "top_group_records", "superseded_records", "superseded_share", "tombstones",
                    "largest_record_bytes", "largest_record_offset"], "")


def duration(ms) -> str | None:
    """``ms`` in the largest two units that fit (``2 d 3 h``, ``5 min 10 s``); negative: ago."""
    if ms is None:
        return None
    sign, ms = ("-" if ms < 0 else ""), abs(int(ms))
    parts, rest = [], ms // 1000
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if rest >= size or (unit == "s" and not parts):
            parts.append(f"{rest // size} {unit}")
            rest %= size
        if len(parts) == 2:
            break
    return sign + " ".join(parts)


def _expiry(data: ReportData) -> str:
    """When the coordinator expires each committed offset (sql/offset_expiry.sql), soonest first."""
    c = data.expiry_counts or {}
    summary = (f"<p>{c.get('offsets', 0)} committed offset(s): {c.get('expired', 0)} already past "
               f"their expiry at the snapshot, {c.get('expiring_soon', 0)} expiring within the "
               f"warning window, {c.get('blocked', 0)} that cannot expire now (members subscribe, "
               "or a transaction is pending).</p>")
    rows = [{**r, "expires_in": duration(r.get("ms_until_expiry"))} for r in data.expiry]
    return summary + table(rows, ["group_id", "group_type", "topic", "partition",
                                  "base_timestamp_kind", "base_at", "expires_at", "expires_in",
                                  "group_expires_at"], "No offset can expire: every one is held.")


def _ghosts(data: ReportData) -> str:
    rows = [{**r, "idle": duration(r.get("idle_ms"))} for r in data.ghosts]
    return ("<h3>Groups with offsets and no members</h3>" + table(
        rows, ["group_id", "group_type", "group_state", "is_ghost", "idle", "committed_partitions",
               "last_commit_at", "last_member_activity_at", "never_rebalanced"],
        "Every group with offsets has members.")
        + "<h3>Offsets of topics no member subscribes to</h3>" + table(
            data.stale, ["group_id", "group_type", "topic", "partition", "committed_offset",
                         "commit_at", "reason"], "None: every offset is of a subscribed topic."))


def _recreated(data: ReportData) -> str:
    return table(data.recreated, ["group_id", "topic", "partition", "old_topic_id", "new_topic_id",
                                  "committed_offset", "commit_at", "seen_new_id_at", "is_current"],
                 "No offset names an older incarnation of its topic.")


def _churn(data: ReportData) -> str:
    """Group epoch (and classic generation) bumps per group and hour: storms in red."""
    bars = [(f"{r['group_id']} {r['hour_at']}", float(r["epoch_bumps"] + r["generation_bumps"]),
             PALETTE[3] if r["is_storm"] else PALETTE[0]) for r in data.churn]
    chart = bar_chart(bars, "epoch and generation bumps per group and hour (red: a storm)")
    return (chart or "<p class='muted'>No rebalances in this snapshot.</p>") + table(
        data.churn, ["group_id", "group_type", "hour_at", "epoch_bumps", "generation_bumps",
                     "joins", "leaves", "static_restarts", "max_converge_ms", "is_storm"], "")


def _migration(data: ReportData) -> str:
    return table(data.migration, ["group_id", "group_type", "direction", "member_count",
                                  "is_ready", "blockers"], "No classic or consumer groups.")


MAX_LAG_GROUPS = 10   # lines in the lag history chart: the groups with the most lag last


def _lag_at_capture(data: ReportData) -> str:
    """Lag per group and topic as the capture read the log (the ``lag`` table), and, when the
    lake holds several captures, each group's total lag across them."""
    if not data.lag:
        return ("<p class='muted'>No lag for this snapshot: only a capture (offsetlake capture) "
                "reads the log end offsets.</p>")
    history = ""
    order = list(dict.fromkeys(r["snapshot_id"] for r in data.lag_history))
    if len(order) > 1:
        last = {r["group_id"]: r["lag"] or 0 for r in data.lag_history
                if r["snapshot_id"] == order[-1]}
        groups = sorted(last, key=lambda g: (-last[g], g))[:MAX_LAG_GROUPS]
        series = [(g, [(float(order.index(r["snapshot_id"]) + 1), float(r["lag"] or 0))
                       for r in data.lag_history if r["group_id"] == g], "") for g in groups]
        history = step_chart(series, "total lag per group, capture by capture",
                             f"capture (1 = {order[0]}, {len(order)} = {order[-1]})")
    return history + table(data.lag, ["group_id", "topic", "partitions", "lag", "below_log_start",
                                      "read_at"], "")


def _quality(quality: dict | None) -> str:
    if quality is None:
        return "<p class='muted'>No quality run for this snapshot (offsetlake quality).</p>"
    verdict = ("<p class='ok'>every expectation met</p>" if quality["success"]
               else "<p class='bad'>expectations failed</p>")
    rows = [{**o, "result": "PASS" if o["success"] else "FAIL"} for o in quality["outcomes"]]
    failed_first = sorted(rows, key=lambda r: r["success"])
    docs = quality.get("data_docs")
    link = f"<p class='muted'>Data Docs: {escape(docs)}</p>" if docs else ""
    return verdict + table(failed_first, ["result", "suite", "expectation", "column",
                                          "element_count", "unexpected_count",
                                          "unexpected_examples"], "") + link


def _gate(gate: dict | None) -> str:
    if gate is None:
        return ("<p class='muted'>No audit gate summary for this snapshot "
                "(offsetlake audit --summary).</p>")
    verdict = (f"<p class='{'bad' if gate['verdict'] == 'fail' else 'ok'}'>"
               f"{escape(headline(gate))}</p><p>{escape(counts_line(gate))}</p>")
    if not gate["first"]:
        return verdict
    more = gate["gating"] - len(gate["first"])
    note = (f"<p class='muted'>{more} more at or above {escape(gate['fail_on'])}.</p>"
            if more > 0 else "")
    return verdict + table(gate["first"], ["rule_id", "severity", "group_id", "message"], "") + note


def render(data: ReportData, quality: dict | None, gate: dict | None = None,
           now: datetime | None = None) -> str:
    """The page; ``gate`` is the audit's ``--summary`` (:mod:`jobs.report.gate`), None without one."""
    now = now or datetime.now(UTC)
    sections = [
        ("Gate", _gate(gate)),
        ("Snapshot", _facts(data)),
        ("Findings", _findings(data)),
        ("Downgrade readiness", _downgrade(data)),
        ("Groups", table(data.groups, ["group_id", "group_type", "group_state", "group_epoch",
                                       "target_assignment_epoch", "generation", "member_count",
                                       "unconverged_member_count", "pending_revocation_count",
                                       "committed_partition_count", "is_converged"], "No groups.")),
        ("Epoch timelines", _timelines(data)),
        ("Reconciliation lag", _lag(data)),
        ("Members not converged", table(data.not_converged, [
            "group_id", "member_id", "member_epoch", "target_assignment_epoch", "epochs_behind",
            "member_state", "pending_revocation_count"], "Every member is at its target epoch.")),
        ("Partitions pending revocation", table(data.pending_revocation, [
            "group_id", "owner_member_id", "topic_name", "partition", "assignment_epoch",
            "target_member_id"], "None.")),
        ("Open transactions", table(data.open_transactions, [
            "group_id", "producer_id", "pending_offset_count", "topic_names", "opened_at"], "None.")),
        ("Coordinator load", _load(data)),
        ("Offset expiry", _expiry(data)),
        ("Ghost groups and stale offsets", _ghosts(data)),
        ("Recreated topics", _recreated(data)),
        ("Churn", _churn(data)),
        ("Migration readiness", _migration(data)),
        ("Lag at capture time", _lag_at_capture(data)),
        ("Data quality", _quality(quality)),
    ]
    body = "".join(f"<section id='{escape(t.lower().replace(' ', '-'))}'><h2>{escape(t)}</h2>{html}"
                   "</section>" for t, html in sections)
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>offsetlake report {escape(data.snapshot_id)}</title><style>{CSS}</style></head>"
            f"<body><h1>offsetlake report: snapshot {escape(data.snapshot_id)}</h1>"
            f"<p class='muted'>generated {now.strftime('%Y-%m-%d %H:%M:%S')} UTC; "
            f"snapshots in the lake: {escape(', '.join(data.snapshots))}</p>{body}</body></html>")

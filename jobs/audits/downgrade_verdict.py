"""Downgrade findings -> ``downgrade_findings`` rows -> one verdict in plain words per target.

Rows follow :data:`jobs.lake.downgrade.DOWNGRADE_FINDINGS_COLUMNS`: one per (target, partition,
group, rule, class, failure mode, severity) with counts and the log positions of the evidence.
A BREAK is a partition's fate: every group hashed to that partition is affected, so verdicts
speak per partition.
"""

from __future__ import annotations

import heapq
import json
from collections import defaultdict
from itertools import islice

from jobs.audits.downgrade_targets import group_kind, parse_target

MAX_EVIDENCE = 20
_CONSEQUENCE = {
    "fail-open": "it is marked loaded but empty, so its groups lose their committed offsets and "
                 "consumers fall back to auto.offset.reset",
    "fail-closed": "its coordinator fails, so every group on it is unavailable",
}


def aggregate(findings, snapshot_id: str) -> list[dict]:
    """Group :class:`~jobs.audits.downgrade.Finding` (and ``AlikeFindings``: one finding for
    many records) objects into table rows (sorted)."""
    buckets: dict[tuple, list] = defaultdict(list)
    for f in findings:
        offsets, live = (f.offsets, f.live) if hasattr(f, "offsets") else ((f.offset,), (f.is_live,))
        one = getattr(f, "finding", f)
        buckets[(one.target, one.partition, one.group_id, one.rule_id, one.klass,
                 one.failure_mode, one.severity)].append((offsets, live, one))
    rows = []
    for (target, partition, group_id, rule_id, klass, mode, severity), parts in buckets.items():
        # in log order, as if each record were a finding of its own (a stable sort)
        parts.sort(key=lambda part: part[0][0])
        types: dict[int, int] = defaultdict(int)
        for offsets, _, one in parts:
            types[one.record_type] += len(offsets)
        texts = list(dict.fromkeys(one.detail for _, _, one in parts))
        count = sum(len(offsets) for offsets, _, _ in parts)
        first = parts[0][0][0]
        rows.append({
            "snapshot_id": snapshot_id, "target_version": target, "partition": partition,
            "group_id": group_id, "rule_id": rule_id, "class": klass, "failure_mode": mode,
            "severity": severity, "record_count": count,
            "live_record_count": sum(sum(live) for _, live, _ in parts),
            "first_offset": first, "last_offset": max(offsets[-1] for offsets, _, _ in parts),
            "evidence_offsets": list(islice(heapq.merge(*(offsets for offsets, _, _ in parts)),
                                            MAX_EVIDENCE)),
            "record_types": sorted(types),
            "message": _message(texts[0], count, first, group_id),
            "details": json.dumps({"record_types": {str(k): v for k, v in sorted(types.items())},
                                   "reasons": texts[:5]}, sort_keys=True),
        })
    rows.sort(key=lambda r: (r["target_version"], r["partition"], r["group_id"] or "",
                             r["rule_id"], r["class"], r["first_offset"]))
    return rows


def _message(detail: str, count: int, offset: int, group_id: str | None) -> str:
    where = f"group {group_id}" if group_id else "records without a readable group"
    more = f" ({count} records, first at offset {offset})" if count > 1 else f" (offset {offset})"
    return f"{where}: {detail}{more}"


def verdicts(rows: list[dict], target_versions: list[str]) -> list[dict]:
    """One verdict per target, as data: ``{"target_version", "safe", "headline", "partitions":
    [{"partition", "fate": "fails"|"drops", "reason"}], "cautions"}``. ``rows``: dicts or Spark
    ``Row`` objects (order does not matter: every choice below is by log position, then name)."""
    rows = [r.asDict() if hasattr(r, "asDict") else r for r in rows]
    out = []
    for text in target_versions:
        name = parse_target(text).name
        mine = [r for r in rows if r["target_version"] == name]
        reasons = _partition_reasons(mine, name)
        if not reasons:
            cautions = [r for r in mine if r["class"] == "READ-AS-LATEST" or r["severity"] == "medium"]
            caution = _caution(cautions, name) if cautions else None
            out.append({"target_version": name, "safe": True, "partitions": [], "cautions": caution,
                        "headline": f"safe to downgrade to {name}: yes"
                                    + (f" - with care: {caution}" if caution else "")})
            continue
        # The headline names the worst partition: one that does not load beats one that drops.
        first_partition, first_reason = min(reasons, key=lambda r: not r[1].startswith("does not load"))
        more = f" (and {len(reasons) - 1} more partitions)" if len(reasons) > 1 else ""
        out.append({
            "target_version": name, "safe": False, "cautions": None,
            "headline": f"safe to downgrade to {name}: no - partition {first_partition} "
                        f"{first_reason}{more}",
            "partitions": [{"partition": p, "reason": reason,
                            "fate": "fails" if reason.startswith("does not load") else "drops"}
                           for p, reason in reasons]})
    return out


def verdict_lines(rows: list[dict], target_versions: list[str]) -> list[str]:
    """One headline per target (``safe to downgrade to 3.9: no - ...``), then one indented line
    per partition that holds a reason. ``rows``: dicts or Spark ``Row`` objects."""
    lines = []
    for verdict in verdicts(rows, target_versions):
        lines.append(verdict["headline"])
        lines += [f"  partition {p['partition']}: {p['reason']}" for p in verdict["partitions"]]
    return lines


def _partition_reasons(rows: list[dict], name: str) -> list[tuple[int, str]]:
    by_partition: dict[int, list[dict]] = defaultdict(list)
    for r in rows:
        by_partition[r["partition"]].append(r)
    out = []
    for partition in sorted(by_partition):
        part = by_partition[partition]
        breaks = sorted((r for r in part if r["class"] == "BREAK"),
                        key=lambda r: (r["first_offset"], r["rule_id"], r["group_id"] or ""))
        if breaks:
            b = breaks[0]
            out.append((partition, f"does not load on {name} ({b['failure_mode']}: "
                                   f"{_CONSEQUENCE[b['failure_mode']]}): {b['message']}"))
            continue
        drops = [r for r in part if r["class"] == "DROP" and r["severity"] == "high"]
        if drops:
            out.append((partition, _drops(drops, name)))
    return out


def _drops(drops: list[dict], name: str) -> str:
    kinds: dict[str, int] = defaultdict(int)
    groups = sorted({r["group_id"] for r in drops if r["group_id"]})
    for r in drops:
        kinds[group_kind(r["record_types"][0])] += r["live_record_count"]
    what = " and ".join(f"{n} live {kind} records" for kind, n in sorted(kinds.items()))
    return (f"holds {what} that {name} drops (groups {', '.join(groups)}); they come back on "
            "re-upgrade unless the groups are converted or deleted first")


def _caution(rows: list[dict], name: str) -> str:
    groups = sorted({r["group_id"] for r in rows if r["group_id"]})
    kinds = sorted({r["rule_id"] for r in rows})
    return f"{', '.join(kinds)} on {len(groups)} groups ({', '.join(groups[:5])}); see the findings"

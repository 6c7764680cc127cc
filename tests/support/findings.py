"""Helpers for audit tests: run the pure audit on a scenario and pick findings by rule.

Tests assert rule id, group, member and log position (never message wording)."""

from __future__ import annotations

from jobs.audits.engine import audit_group, audit_partition


def audit(scenario, *, compacted: bool = False, **options) -> list[dict]:
    """Every finding of the scenario's partition (gaps read from the events)."""
    view = scenario.compacted() if compacted else scenario
    return audit_partition(view.events(), topic_names=scenario.topic_names, **options)


def audit_one(scenario, **options) -> list[dict]:
    """Findings of the whole log as one group's events (``snapshot_time_ms`` etc. allowed)."""
    return audit_group(scenario.events(), topic_names=scenario.topic_names, **options)


def hits(findings: list[dict], rule_id: str) -> list[tuple]:
    """``(group, member, log offset)`` of the findings of ``rule_id``, in log order."""
    return [(f["group_id"], f["member_id"], f["log_offset"]) for f in findings
            if f["rule_id"] == rule_id]


def verdicts(findings: list[dict], rule_id: str) -> list[str]:
    return [f["verdict"] for f in findings if f["rule_id"] == rule_id]

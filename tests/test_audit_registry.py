"""The rule registry is the one source: docs/audits.md is rendered from it, the replay's
violations map onto it, every rule is exercised by a scenario test, and the findings contract
is data."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jobs.audits.docs import render_audits_doc
from jobs.audits.evidence import LogCoverage, finding
from jobs.audits.registry import RULES, SEVERITIES, Rule, register
from jobs.audits.rules import rule_of_violation
from jobs.lake.findings import FINDINGS_COLUMNS, ROW_COLUMNS

ROOT = Path(__file__).resolve().parents[1]
INSIGHT = ("EX", "GH", "TP", "CH")   # SQL rules over the views (jobs/audits/insights.py)
CATALOGUE = [
    "CG-01", "CG-02", "CG-03", "CG-04", "CG-05", "CG-06", "CG-07", "CG-08", "CG-09", "CG-10", "CG-11", "CG-12",
    "OF-01", "OF-02", "OF-03", "OF-05",
    "WIN-01",
    "TX-01", "TX-02", "TX-03",
    "CL-01", "CL-02", "CL-03", "CL-04",
    "MG-01", "MG-02", "MG-03",
]


def test_docs_are_generated_from_the_registry():
    assert (ROOT / "docs" / "audits.md").read_text() == render_audits_doc(), \
        "regenerate docs/audits.md with jobs.audits.docs.render_audits_doc()"
    for rule in RULES.values():
        assert f"| {rule.rule_id} | {rule.severity} |" in render_audits_doc()


def test_the_whole_fencing_catalogue_is_registered():
    assert set(CATALOGUE) <= set(RULES)
    assert {r.rule_id.split("-")[0] for r in RULES.values()} <= {"CG", "OF", "WIN", "TX", "CL",
                                                                  "MG", "RP", "DU", *INSIGHT}
    history = {r.rule_id for r in RULES.values() if r.needs_history}
    assert {"CG-09", "CG-11", "OF-01", "OF-02", "OF-03"} <= history
    assert not {"CG-01", "CG-02", "CG-08", "MG-01"} & history


def test_every_rule_has_a_scenario_test():
    text = "".join(p.read_text() for p in (ROOT / "tests").glob("test_audit_*.py"))
    tested = set(re.findall(r'hits\([^)]*\), "([A-Z]+-\d+)"\)', text))
    missing = sorted(r for r in RULES if r not in tested and not r.startswith(("DU-", *INSIGHT)))
    assert missing == []


def test_every_insight_rule_has_its_sql_and_a_test_running_it():
    """An insight rule is a file sql/rules/<id>.sql, run by a test in tests/test_insights_*.py
    (``rule_rows(spark, "<id>")`` or the file's path)."""
    from jobs.audits.insights import rule_files

    insight = {r for r in RULES if r.split("-")[0] in INSIGHT}
    assert set(rule_files()) == insight
    text = "".join(p.read_text() for p in (ROOT / "tests").glob("test_insights_*.py"))
    assert sorted(r for r in insight if f'"{r}"' not in text and f"{r}.sql" not in text) == []


def test_replay_violation_kinds_map_to_registered_rules():
    for kind in ("CG-01", "CG-02", "CG-07", "CG-08", "CG-10", "MG-01", "TX-02",
                 "UNKNOWN_RECORD_TYPE", "TX-FLAG"):
        assert rule_of_violation(kind) in RULES


def test_a_rule_is_declared_once_with_a_known_severity():
    with pytest.raises(ValueError):
        register(Rule("CG-01", "low", "other", "other", "other", False))
    with pytest.raises(ValueError):
        Rule("XX-1", "severe", "t", "i", "s", False)
    assert SEVERITIES.index("high") > SEVERITIES.index("medium")


def test_findings_rows_follow_the_contract():
    row = finding("OF-01", "g", (0, 9), "evidence", topic="foo", partition=1, evidence=[4])
    assert list(row) == [name for name, _ in ROW_COLUMNS]
    assert [name for name, _, _ in FINDINGS_COLUMNS][0] == "snapshot_id"
    assert (row["verdict"], row["evidence_log_offsets"]) == ("violation", [4, 9])
    assert finding("OF-01", "g", (0, 9), "e", partial=True)["verdict"] == "partial"
    assert finding("CG-01", "g", (0, 9), "e", partial=True)["verdict"] == "violation"  # state rule
    assert finding("WIN-01", "g", (0, 9), "e")["verdict"] == "notice"


def test_log_coverage_finds_compacted_ranges():
    coverage = LogCoverage.from_offsets({0: [2, 3, 4, 7, 8], 1: [0, 1, 2]})
    assert coverage.gaps == {0: [(0, 2), (5, 7)]}
    assert coverage.has_gap(0, 3, 5) is False
    assert coverage.has_gap(0, 3, 6) is True
    assert coverage.has_gap(0, 7, 100) is False
    assert coverage.has_gap(1, 0, 3) is False

"""The audit gate without Spark or Airflow: the summary ``offsetlake audit --summary`` writes, the
verdict the DAG's ``gate`` task fails the run on, and the report's Gate section."""

from __future__ import annotations

import json
import re

import pytest

from jobs.cli import main as offsetlake
from jobs.commands.audit import write_summary
from jobs.report.data import ReportData
from jobs.report.gate import GateFailed, check, headline
from jobs.report.page import render


def finding(rule_id, severity, group_id, message, verdict="violation") -> dict:
    return {"rule_id": rule_id, "severity": severity, "verdict": verdict, "group_id": group_id,
            "member_id": None, "log_partition": 0, "log_offset": 7, "message": message}


def downgrade(rule_id, severity, group_id) -> dict:
    """A downgrade_findings row: no verdict, no message of its own in this fixture."""
    return {"target_version": "3.9", "rule_id": rule_id, "class": "DROP", "severity": severity,
            "group_id": group_id}


ROWS = [
    finding("OF-05", "low", "g-offdel", "manual commit"),
    finding("CG-03", "high", "g-cons", "target above group", verdict="partial"),  # compacted away
    finding("CG-01", "critical", "g-pay", "double ownership"),
    finding("WIN-01", "info", "g-cons", "window 3", verdict="notice"),
    downgrade("DU-3", "high", "g-classic"),
]


def read_summary(tmp_path, rows, gate_on) -> dict:
    path = tmp_path / "_reports" / "audit-s1.json"
    write_summary(path, "s1", rows, gate_on)
    return json.loads(path.read_text(encoding="utf-8"))


def test_summary_counts_and_gates_what_is_not_partial_most_severe_first(tmp_path):
    assert read_summary(tmp_path, ROWS, "high") == {
        "snapshot_id": "s1", "fail_on": "high",
        "counts": {"critical": 1, "high": 1, "medium": 0, "low": 1, "info": 1},
        "gating": 2, "verdict": "fail",
        "first": [{"rule_id": "CG-01", "severity": "critical", "group_id": "g-pay",
                   "message": "double ownership"},
                  {"rule_id": "DU-3", "severity": "high", "group_id": "g-classic",
                   "message": None}]}


def test_summary_names_five_findings_and_passes_below_the_threshold(tmp_path):
    many = [finding("OF-05", "low", f"g{i}", f"commit {i}") for i in range(6)] + \
           [finding("CG-01", "critical", "g-last", "double ownership")]
    low = read_summary(tmp_path, many, "low")
    assert (low["gating"], low["verdict"]) == (7, "fail")
    assert [(f["rule_id"], f["group_id"]) for f in low["first"]] == \
        [("CG-01", "g-last"), ("OF-05", "g0"), ("OF-05", "g1"), ("OF-05", "g2"), ("OF-05", "g3")]
    never = read_summary(tmp_path, many, "never")
    assert (never["counts"]["low"], never["gating"], never["verdict"], never["first"]) == \
        (6, 0, "pass", [])


def test_summary_needs_the_snapshot_it_names(tmp_path, capsys):
    path = tmp_path / "gate.json"
    assert offsetlake(["audit", "--lake", str(tmp_path), "--summary", str(path)]) == 2
    assert "--summary needs --snapshot" in capsys.readouterr().err
    assert not path.exists()


def test_gate_passes_with_its_headline_and_fails_naming_counts_and_findings(tmp_path):
    passing = read_summary(tmp_path, ROWS, "never")
    assert check(passing) == "Gate: pass — the gate is off (fail_on never)"
    assert check(read_summary(tmp_path, ROWS[:1], "medium")) == \
        "Gate: pass — no finding at or above medium"
    with pytest.raises(GateFailed) as failed:
        check(read_summary(tmp_path, ROWS, "low"))
    assert str(failed.value).splitlines() == [
        "Gate: FAIL — 3 findings at or above low in snapshot s1; "
        "4 findings counted: 1 critical, 1 high, 1 low, 1 info",
        "CG-01 critical g-pay: double ownership",
        "DU-3 high g-classic: None",
        "OF-05 low g-offdel: manual commit"]
    assert headline(read_summary(tmp_path, ROWS[2:3], "high")) == \
        "Gate: FAIL — 1 finding at or above high"


def test_gate_fails_saying_how_many_it_did_not_name(tmp_path):
    many = [finding("OF-05", "medium", f"g{i}", f"commit {i}") for i in range(7)]
    with pytest.raises(GateFailed, match=r"OF-05 medium g4: commit 4\n\.\.\. and 2 more$"):
        check(read_summary(tmp_path, many, "medium"))


def _gate_section(gate: dict | None) -> str:
    empty = ReportData(snapshot_id="s1", facts=None, groups=[], findings=[],
                       findings_available=False, downgrade=[], downgrade_available=False,
                       reconciliations=[], not_converged=[], pending_revocation=[],
                       open_transactions=[])
    html = render(empty, None, gate)
    assert re.findall(r"<h2>([^<]+)</h2>", html)[:2] == ["Gate", "Snapshot"]
    return html.split("<h2>Gate</h2>", 1)[1].split("</section>", 1)[0]


def test_report_gate_section_says_the_verdict_or_that_there_is_none(tmp_path):
    assert _gate_section(None) == \
        "<p class='muted'>No audit gate summary for this snapshot (offsetlake audit --summary).</p>"
    many = [finding("OF-05", "medium", f"g{i}", f"commit <{i}>") for i in range(7)]
    failed = _gate_section(read_summary(tmp_path, many, "medium"))
    assert failed.startswith("<p class='bad'>Gate: FAIL — 7 findings at or above medium</p>"
                             "<p>7 findings counted: 7 medium</p><table>")
    assert "<td>OF-05</td><td>medium</td><td>g4</td><td>commit &lt;4&gt;</td>" in failed
    assert "g5" not in failed and failed.endswith("<p class='muted'>2 more at or above medium.</p>")
    assert _gate_section(read_summary(tmp_path, many, "high")) == \
        "<p class='ok'>Gate: pass — no finding at or above high</p>" \
        "<p>7 findings counted: 7 medium</p>"

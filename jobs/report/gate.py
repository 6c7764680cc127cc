"""The audit gate's verdict, read back from the JSON ``offsetlake audit --summary`` writes.

The scheduled DAG audits with ``--fail-on never`` so quality and report always run; the verdict at
the real threshold waits in this summary until the DAG's last task (:func:`check`) fails the run
on it, and the report shows it (:func:`headline`). The summary::

    {"snapshot_id": "interval-20261123T100000Z", "fail_on": "high",
     "counts": {"critical": 0, "high": 2, "medium": 0, "low": 1, "info": 4},
     "gating": 2, "verdict": "fail",
     "first": [{"rule_id": "CG-01", "severity": "high", "group_id": "g", "message": "..."}]}

Counts and gating leave out partial findings, as the audit's exit code does.
"""

from __future__ import annotations

import json
from pathlib import Path


class GateFailed(Exception):
    """Findings reached the gate's threshold; the message names them."""


def summary_path(reports: Path, snapshot_id: str) -> Path:
    """Where the pipeline keeps a snapshot's summary: ``<report dir>/audit-<snapshot id>.json``."""
    return Path(reports) / f"audit-{snapshot_id}.json"


def load_summary(path: Path) -> dict | None:
    """The summary at ``path``, or None when no audit wrote one there."""
    path = Path(path)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _findings(n: int) -> str:
    return f"{n} finding{'' if n == 1 else 's'}"


def headline(summary: dict) -> str:
    """``Gate: FAIL — 2 findings at or above high`` or ``Gate: pass — ...``, in one line."""
    if summary["verdict"] == "fail":
        return f"Gate: FAIL — {_findings(summary['gating'])} at or above {summary['fail_on']}"
    if summary["fail_on"] == "never":
        return "Gate: pass — the gate is off (fail_on never)"
    return f"Gate: pass — no finding at or above {summary['fail_on']}"


def counts_line(summary: dict) -> str:
    """``3 findings counted: 1 high, 2 info`` (severities with none left out)."""
    counts = summary["counts"]
    named = ", ".join(f"{n} {severity}" for severity, n in counts.items() if n)
    return f"{_findings(sum(counts.values()))} counted" + (f": {named}" if named else "")


def first_lines(summary: dict) -> list[str]:
    """The first gating findings, one line each: ``CG-01 high g: message``."""
    return [f"{f['rule_id']} {f['severity']} {f['group_id'] or '-'}: {f['message']}"
            for f in summary["first"]]


def check(summary: dict) -> str:
    """The headline when the gate passes; :class:`GateFailed` naming the counts and the first
    gating findings when it does not."""
    if summary["verdict"] != "fail":
        return headline(summary)
    more = summary["gating"] - len(summary["first"])
    lines = [f"{headline(summary)} in snapshot {summary['snapshot_id']}; {counts_line(summary)}",
             *first_lines(summary), *([f"... and {more} more"] if more > 0 else [])]
    raise GateFailed("\n".join(lines))

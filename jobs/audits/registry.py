"""The audit rule registry: every rule offsetlake checks, declared once, as data.

A rule module declares its rules with :func:`register` at import time; :data:`RULES` is the one
place the CLI, the findings tables and ``docs/audits.md`` read them from. Importing
:mod:`jobs.audits.rules` fills it with the fencing catalogue (CG-, OF-, WIN-, TX-, CL-, MG-, RP-).

A finding carries its own severity (a rule may grade its evidence, e.g. OF-03's four cases) and a
verdict: ``violation`` (the evidence is complete), ``partial`` (a rule that needs uncompacted
history met a compacted range: the log cannot prove it either way) or ``notice`` (information).
"""

from __future__ import annotations

from dataclasses import dataclass

SEVERITIES = ("info", "low", "medium", "high", "critical")  # ascending
VIOLATION, PARTIAL, NOTICE = "violation", "partial", "notice"
VERDICTS = (VIOLATION, PARTIAL, NOTICE)


@dataclass(frozen=True)
class Rule:
    rule_id: str          # e.g. "CG-01", "DU-3" (ids of ../shared/reference/replay-fencing-downgrade.md)
    severity: str         # one of SEVERITIES: the highest a finding of this rule gets
    title: str            # a few words
    invariant: str        # the invariant, in one sentence
    source: str           # where Kafka enforces or defines it (class / method, KIP)
    needs_history: bool   # True: compaction can hide the evidence (verdict "partial" on gaps)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"rule {self.rule_id}: unknown severity {self.severity!r}")


RULES: dict[str, Rule] = {}


def register(*rules: Rule) -> tuple[Rule, ...]:
    """Add rules to the registry; an id may be declared only once."""
    for r in rules:
        if r.rule_id in RULES and RULES[r.rule_id] != r:
            raise ValueError(f"rule {r.rule_id} is declared twice")
        RULES[r.rule_id] = r
    return rules


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity.lower())

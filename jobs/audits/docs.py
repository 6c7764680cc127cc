"""``docs/audits.md`` from the rule registry and the findings contract (a test keeps them equal).

Regenerate after changing a rule::

    python -c "from jobs.audits.docs import render_audits_doc; print(render_audits_doc(), end='')" > docs/audits.md
"""

from __future__ import annotations

from jobs.audits import downgrade as _downgrade  # noqa: F401  (the DU- rules)
from jobs.audits import rules as _rules  # noqa: F401  (fills the registry)
from jobs.audits.registry import RULES, SEVERITIES
from jobs.lake.findings import FINDINGS_COLUMNS

INTRO = """\
# Audits: rules and findings

`offsetlake audit --lake LAKE` replays every group of a snapshot record by record and checks the
rules below; each breach is a row of the `findings` Delta table (written with `replaceWhere` on
the snapshot id) and a line of the command's output. The exit code gates a pipeline: 8 when a
finding at or above `--fail-on` (default `high`) exists, 0 when none.

Offset-commit records carry no member id or epoch, so the fencing rules (OF-, TX-03) correlate
each commit with the ownership the replay holds at the same log position, which is what the
coordinator's validator saw. Two fencing regimes exist, chosen per snapshot and group type (a
4.3+ writer puts AssignmentEpochs on type-8 records: consumer and streams groups relaxed; a 4.2
writer on type-22 records only: streams groups relaxed, consumer groups strict) or for every group
with `--fencing`:

* `strict` (consumer groups up to 4.2, streams groups in 4.1): a commit is accepted only with the
  member's exact epoch, for any partition;
* `relaxed` (KIP-1251; consumer groups 4.3+, streams groups 4.2+): the exact epoch still accepts
  any partition; an older client epoch is accepted for a partition the member holds with an
  assignment epoch at or below it (WIN-01 shows the window). Legacy records take the member
  epoch clamped at 0; streams groups do not clamp.

The insight rules (EX-, GH-, TP-, CH-) are not replayed: each is a SQL file
(`sql/rules/<rule id>.sql`) over the snapshot's tables and the views of `sql/` (docs/operate.md),
with the broker settings and thresholds of the `insights` section of `conf/offsetlake.yaml`.

**Verdicts.** `violation`: the evidence is complete. `partial`: a rule that needs uncompacted
history (column *history*) met a compacted range (missing offsets) inside its evidence, so the
log can neither prove nor refute it; partial findings never fail the gate. `notice`: information.
In an incremental lake, `offsetlake audit --history` runs the fencing rules over every record the
lake has held (the ones compaction removed since a snapshot read them included): there, only the
lake's gaps (offsets no snapshot held) make a finding partial ([lake.md](lake.md),
`history_findings`). The run's own `fencing_findings` there are that audit too, group by group,
as of each snapshot; `offsetlake audit --snapshot S` audits what the snapshot itself holds.

Severity (ascending): {severities}. A finding may be graded below its rule's severity (OF-03's
cases, OF-01 for an unsubscribed topic, CG-10 for a missing AssignmentEpochs).
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_audits_doc() -> str:
    lines = [INTRO.format(severities=", ".join(f"`{s}`" for s in SEVERITIES)), "## Rules", "",
             "| rule | severity | title | invariant | Kafka source | history |",
             "|---|---|---|---|---|---|"]
    for rule in sorted(RULES.values(), key=lambda r: (r.rule_id.split("-")[0], r.rule_id)):
        lines.append(f"| {rule.rule_id} | {rule.severity} | {_cell(rule.title)} | "
                     f"{_cell(rule.invariant)} | {_cell(rule.source)} | "
                     f"{'yes' if rule.needs_history else 'no'} |")
    lines += ["", "## The `findings` table", "", "| column | type | meaning |", "|---|---|---|"]
    lines += [f"| `{name}` | {dtype} | {_cell(meaning)} |" for name, dtype, meaning in FINDINGS_COLUMNS]
    return "\n".join(lines) + "\n"

"""``offsetlake audit``: check a snapshot in the lake against the fencing rules (and, with
``--target-version``, downgrade readiness); write ``findings`` and gate on the exit code.

Also the spark-submit entry point: ``spark-submit jobs/commands/audit.py --lake LAKE``.
The rules are listed in ``docs/audits.md`` (generated from ``jobs.audits.registry``).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys

from jobs.audits.registry import PARTIAL, SEVERITIES, severity_rank
from jobs.runtime.config import load_config

EXIT_OK, EXIT_USAGE, EXIT_FINDINGS = 0, 2, 3
FORMATS = ("table", "json", "csv")
EPILOG = """\
how it decides:
  Offset commits carry no member id or epoch, so every commit is checked against the
  ownership the replay holds at the same log position (what Kafka's validator saw).
  Fencing regime, per group type: 'relaxed' (KIP-1251) for consumer groups when type-8
  records carry AssignmentEpochs (a 4.3+ writer), for streams groups when type-8 or type-22
  records do (4.2+); else 'strict'. --fencing sets one regime for every group.
  Verdicts: violation (complete evidence), partial (the evidence spans offsets removed by
  compaction: never fails the gate), notice (information).

exit codes:
  0  no finding at or above --fail-on      3  at least one such finding
  2  usage error, or the lake has no such snapshot

examples:
  offsetlake audit --lake lake --fail-on high
  offsetlake audit --lake lake --group payments --rule OF-01 --rule CG-01 --format json
  offsetlake audit --lake lake --snapshot 2026-11-22 --target-version 3.9 --target-version 4.0
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = f"{parser.epilog}\n\n{EPILOG}" if parser.epilog else EPILOG
    parser.add_argument("--lake", help="lake directory (default: lake.path in conf/)")
    parser.add_argument("--snapshot", metavar="ID",
                        help="snapshot id to audit (default: the lake's only snapshot)")
    parser.add_argument("--target-version", metavar="V", action="append", default=[],
                        help="also judge downgrade readiness to Kafka V (2.8, 3.9, 4.0 ...); "
                             "repeatable")
    parser.add_argument("--group", metavar="G", action="append", default=[],
                        help="show only findings of group G (repeatable; the table keeps all)")
    parser.add_argument("--rule", metavar="R", action="append", default=[],
                        help="show and gate only rule R, e.g. CG-01 (repeatable)")
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format")
    parser.add_argument("--fail-on", metavar="SEVERITY", default="high",
                        choices=[*SEVERITIES, "never"],
                        help=f"exit 3 when a finding of this severity or above exists: "
                             f"{', '.join(SEVERITIES)} or never (default: high)")
    parser.add_argument("--fencing", choices=("auto", "strict", "relaxed"), default="auto",
                        help="fencing regime: strict (<= 4.2), relaxed (KIP-1251, 4.3+), or "
                             "auto: from the snapshot (default)")


def run(args: argparse.Namespace) -> int:
    from jobs.audits import rules as _rules  # noqa: F401  (fills the registry)
    from jobs.audits.registry import RULES

    unknown = [r for r in args.rule if r not in RULES and not r.startswith("DU-")]
    if unknown:
        print(f"offsetlake audit: unknown rule {unknown[0]}; rules: {', '.join(sorted(RULES))}",
              file=sys.stderr)
        return EXIT_USAGE
    downgrade = _downgrade_functions(args.target_version)
    if downgrade is False:
        return EXIT_USAGE
    from jobs.runtime.session import get_spark

    cfg = load_config().with_lake(args.lake)
    spark = get_spark(cfg, app_name="offsetlake-audit")
    from jobs.stages.audit import audit_lake

    result = audit_lake(spark, cfg.lake_path, args, downgrade)
    if isinstance(result, str):
        print(f"offsetlake audit: {result}", file=sys.stderr)
        return EXIT_USAGE
    rows, downgrade_rows, summary = result
    _print(rows, args.format)
    if downgrade:
        _print_downgrade(downgrade_rows, args.target_version, args.format)
    gating = [r for r in rows + downgrade_rows if _gates(r, args.fail_on)]
    print(summary + (f"; {len(gating)} finding(s) at or above {args.fail_on}: exit 3"
                     if gating else ""), file=sys.stderr)
    return EXIT_FINDINGS if gating else EXIT_OK


def _downgrade_functions(targets: list[str]):
    """The downgrade_findings function for the targets, None without any, False (said on
    stderr) when a target is not a version the downgrade audit knows."""
    if not targets:
        return None
    from jobs.audits.downgrade_targets import parse_target
    from jobs.stages.downgrade import downgrade_findings

    for target in targets:
        try:
            parse_target(target)
        except ValueError as error:
            print(f"offsetlake audit: --target-version {target}: {error}", file=sys.stderr)
            return False
    return downgrade_findings


def _gates(row: dict, fail_on: str) -> bool:
    if fail_on == "never" or row.get("verdict") == PARTIAL or not row.get("severity"):
        return False
    return severity_rank(row["severity"]) >= severity_rank(fail_on)


def _print_downgrade(rows: list[dict], targets: list[str], fmt: str) -> None:
    """The verdicts in words; with ``--format json`` every downgrade finding, then one verdict
    object per target (``"kind"`` tells the three kinds of line apart)."""
    from jobs.audits.downgrade_verdict import verdict_lines, verdicts

    if fmt != "json":
        for line in verdict_lines(rows, targets):
            print(line)
        return
    for row in rows:
        row = row.asDict() if hasattr(row, "asDict") else row
        print(json.dumps({"kind": "downgrade_finding", **row,
                          "details": json.loads(row["details"] or "{}")},
                         default=str, ensure_ascii=False))
    for verdict in verdicts(rows, targets):
        print(json.dumps({"kind": "downgrade_verdict", **verdict}, ensure_ascii=False))


def _print(rows: list[dict], fmt: str) -> None:
    if fmt == "json":
        for row in rows:
            print(json.dumps({"kind": "finding", **row, "details": json.loads(row["details"] or "{}")},
                             default=str, ensure_ascii=False))
    elif fmt == "csv":
        if rows:
            writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    else:
        for row in rows:
            where = f"{row['log_partition']}:{row['log_offset']}" if row["log_offset"] is not None \
                else "-"
            print(f"{row['rule_id']:<7}{row['severity']:<9}{row['verdict']:<10}"
                  f"{row['group_id'] or '-'}  @{where}  {row['message']}")


def main(argv: list[str] | None = None) -> int:
    """spark-submit entry point: ``spark-submit jobs/commands/audit.py --lake LAKE``."""
    parser = argparse.ArgumentParser(prog="audit", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

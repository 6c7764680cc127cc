"""``offsetlake audit``: check a snapshot in the lake against the fencing rules (and, with
``--target-version``, downgrade readiness); write ``findings`` and gate on the exit code (or,
with ``--summary``, write the gate's verdict for a later step to act on).

Also the spark-submit entry point: ``spark-submit jobs/commands/audit.py --lake LAKE``.
The rules are listed in ``docs/audits.md`` (generated from ``jobs.audits.registry``).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from jobs.audits.registry import PARTIAL, SEVERITIES, severity_rank
from jobs.commands.inputs import (EXIT_FINDINGS, EXIT_NO_SEGMENTS, EXIT_OK, EXIT_USAGE,
                                  small_snapshot)
from jobs.runtime.config import load_config

FORMATS = ("table", "json", "csv")
SUMMARY_FIRST = 5  # gating findings named in the --summary JSON
EPILOG = """\
how it decides:
  Offset commits carry no member id or epoch, so every commit is checked against the
  ownership the replay holds at the same log position (what Kafka's validator saw).
  Fencing regime, per group type: 'relaxed' (KIP-1251) for consumer groups when type-8
  records carry AssignmentEpochs (a 4.3+ writer), for streams groups when type-8 or type-22
  records do (4.2+); else 'strict'. --fencing sets one regime for every group.
  Verdicts: violation (complete evidence), partial (the evidence spans offsets removed by
  compaction: never fails the gate), notice (information).
  --history (an incremental lake): the fencing rules over every record the lake has held up
  to the snapshot, the ones compaction removed since included; evidence is partial only
  across the lake's gaps (offsets no snapshot held). Written to history_findings.

exit codes:
  0  no finding at or above --fail-on      8  at least one such finding
  2  bad options                           5  the lake has no such snapshot (or no tables yet)

examples:
  offsetlake audit --lake lake --fail-on high
  offsetlake audit --lake lake --group payments --rule OF-01 --rule CG-01 --format json
  offsetlake audit --lake lake --snapshot 2026-11-22 --target-version 3.9 --target-version 4.0
  offsetlake audit --lake lake --target-version all --format json
  offsetlake audit --lake lake --snapshot S --fail-on never --gate-on high --summary gate.json
  offsetlake audit --lake lake --history --rule OF-01
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = f"{parser.epilog}\n\n{EPILOG}" if parser.epilog else EPILOG
    parser.add_argument("--lake", help="lake directory (default: lake.path in conf/)")
    parser.add_argument("--snapshot", metavar="ID",
                        help="snapshot id to audit (default: the lake's only snapshot)")
    parser.add_argument("--target-version", metavar="V", action="append", default=[],
                        help="also judge downgrade readiness to Kafka V (2.8, 3.9, "
                             "3.9+new-coordinator, 4.0 ...), or 'all': every release line with "
                             "a profile; repeatable")
    parser.add_argument("--group", metavar="G", action="append", default=[],
                        help="show only findings of group G (repeatable; the table keeps all)")
    parser.add_argument("--rule", metavar="R", action="append", default=[],
                        help="show and gate only rule R, e.g. CG-01 (repeatable)")
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format")
    parser.add_argument("--fail-on", metavar="SEVERITY", default="high",
                        choices=[*SEVERITIES, "never"],
                        help=f"exit {EXIT_FINDINGS} when a finding of this severity or above exists: "
                             f"{', '.join(SEVERITIES)} or never (default: high)")
    parser.add_argument("--summary", metavar="PATH",
                        help="also write the gate's verdict as JSON to PATH: counts by severity, "
                             "the findings at or above --gate-on, the first five of them "
                             "(needs --snapshot)")
    parser.add_argument("--gate-on", metavar="SEVERITY", choices=[*SEVERITIES, "never"],
                        help="the threshold the --summary verdict is judged at, so a scheduler can "
                             "run with --fail-on never and gate later (default: --fail-on)")
    parser.add_argument("--history", action="store_true",
                        help="audit the history of an incremental lake instead of one snapshot: "
                             "every record it has held up to --snapshot (default: its newest), "
                             "written to history_findings (not with --target-version)")
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
    if args.summary and not args.snapshot:
        print("offsetlake audit: --summary needs --snapshot (the summary names its snapshot)",
              file=sys.stderr)
        return EXIT_USAGE
    targets = parse_targets(args.target_version)
    if targets is None:
        return EXIT_USAGE
    history = getattr(args, "history", False)
    if history and targets:
        print("offsetlake audit: --history audits fencing over the lake's records; downgrade "
              "readiness (--target-version) belongs to one snapshot", file=sys.stderr)
        return EXIT_USAGE
    from jobs.runtime.session import get_spark

    cfg = load_config().with_lake(args.lake)
    # A short job on a small snapshot, as report and quality start theirs: 88 s -> 59 s on the
    # bundled sample (C1 only, then interpreted queries: docs/scale.md).
    spark = get_spark(cfg, app_name="offsetlake-audit", short=small_snapshot(cfg, args.snapshot))
    from jobs.stages.audit import AuditInputError, audit_history, audit_lake

    try:
        if history:
            result = audit_history(spark, cfg.lake_path, args.snapshot, args.fencing)
        else:
            result = audit_lake(spark, cfg.lake_path, args.snapshot, targets, args.fencing)
    except AuditInputError as error:
        print(f"offsetlake audit: {error}", file=sys.stderr)
        return EXIT_NO_SEGMENTS
    return present(result, args)


def present(result, args: argparse.Namespace, prog: str = "audit") -> int:
    """Print an :class:`jobs.stages.audit.AuditResult` as ``args`` ask (``--group``, ``--rule``,
    ``--format``), write ``--summary``, and return the gate's exit code at ``--fail-on``."""
    from jobs.stages.audit import summary_line

    rows = [r for r in result.findings if _wanted(r, args)]
    _print(rows, args.format)
    if result.targets:
        _print_downgrade(result.downgrade_findings, result.targets, args.format)
    gating = [r for r in rows + result.downgrade_findings if _gates(r, args.fail_on)]
    print(summary_line(result, rows)
          + (f"; {len(gating)} finding(s) at or above {args.fail_on}: exit {EXIT_FINDINGS}"
             if gating else ""), file=sys.stderr)
    if getattr(args, "summary", None):
        write_summary(Path(args.summary), result.snapshot_id, rows + result.downgrade_findings,
                      args.gate_on or args.fail_on)
    return EXIT_FINDINGS if gating else EXIT_OK


def _wanted(row: dict, args) -> bool:
    return (not args.group or row["group_id"] in args.group) and \
        (not args.rule or row["rule_id"] in args.rule)


def write_summary(path: Path, snapshot_id: str, rows: list[dict], gate_on: str) -> None:
    """The gate's verdict at ``gate_on`` as JSON, for a later gate (the DAG's gate task) and the
    report. Partial findings are neither counted nor gating, as in the exit code."""
    counted = [r for r in rows if r.get("verdict") != PARTIAL and r.get("severity")]
    gating = sorted((r for r in counted if _gates(r, gate_on)),
                    key=lambda r: -severity_rank(r["severity"]))  # stable: most severe first
    summary = {
        "snapshot_id": snapshot_id,
        "fail_on": gate_on,
        "counts": {s: sum(r["severity"].lower() == s for r in counted) for s in reversed(SEVERITIES)},
        "gating": len(gating),
        "verdict": "fail" if gating else "pass",
        "first": [{k: r.get(k) for k in ("rule_id", "severity", "group_id", "message")}
                  for r in gating[:SUMMARY_FIRST]],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def parse_targets(texts: list[str]) -> list[str] | None:
    """The downgrade targets named (``all``: every release line the audit has a profile for),
    or None (said on stderr) when one is not a version the downgrade audit knows."""
    from jobs.audits.downgrade_targets import ALL_TARGETS, parse_target

    targets: list[str] = []
    for text in texts:
        for target in ALL_TARGETS if text == "all" else (text,):
            try:
                parse_target(target)
            except ValueError as error:
                print(f"offsetlake audit: --target-version {target}: {error}", file=sys.stderr)
                return None
            if target not in targets:
                targets.append(target)
    return targets


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

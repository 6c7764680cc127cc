"""``offsetlake report``: one self-contained HTML page about a snapshot of the lake.

The audit gate's verdict (from ``offsetlake audit --summary``), findings by rule and severity,
downgrade verdicts, per-group epoch timelines and reconciliation lag as inline SVG plots, the last
quality run, and the snapshot's facts; it opens with no network.
Also a spark-submit entry point:
``spark-submit jobs/commands/report.py --lake LAKE --out report.html [--snapshot-id ID]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jobs.runtime.config import load_config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lake", help="lake directory (default: lake.path in conf/)")
    parser.add_argument("--out", help="HTML file to write (default: <report dir>/report-<snapshot>.html)")
    parser.add_argument("--snapshot-id", help="snapshot to report on (default: the last snapshot id "
                                              "in raw_records, in sort order)")
    parser.add_argument("--audit-summary", metavar="PATH",
                        help="the gate verdict to show, as written by 'offsetlake audit --summary' "
                             "(default: <report dir>/audit-<snapshot>.json, if there)")


def run(args: argparse.Namespace) -> int:
    from jobs.commands.inputs import open_snapshot

    cfg = load_config().with_lake(args.lake)
    opened = open_snapshot("report", cfg, args.snapshot_id)
    if isinstance(opened, int):
        return opened
    spark, snapshot_id, snapshots = opened
    return write_report(spark, cfg, snapshot_id, snapshots, args.out, args.audit_summary)


def write_report(spark, cfg, snapshot_id: str, snapshots: list[str], out: str | None = None,
                 audit_summary: str | None = None, prog: str = "report") -> int:
    """Write the snapshot's page (``out``, default ``<report dir>/report-<snapshot>.html``) in
    ``spark``'s session, say where on stdout, return the exit code. ``offsetlake run --report``
    calls it in the run's own session."""
    from jobs.commands.inputs import EXIT_USAGE, fail
    from jobs.lake.views import register_lake, report_dir
    from jobs.quality.runner import load_result, result_path
    from jobs.report.data import collect, lag_history_rows
    from jobs.report.gate import load_summary, summary_path
    from jobs.report.page import render

    reports = report_dir(cfg.lake_path)
    summary = Path(audit_summary) if audit_summary else summary_path(reports, snapshot_id)
    gate = load_summary(summary)
    if gate is not None and gate["snapshot_id"] != snapshot_id:
        return fail(prog, f"{summary} is the audit summary of snapshot {gate['snapshot_id']}, "
                          f"not {snapshot_id}", EXIT_USAGE)
    history = lag_history_rows(spark, cfg.lake_path)
    catalog = register_lake(spark, cfg.lake_path, snapshot_id, materialize=True)
    data = collect(spark, snapshot_id, catalog.placeholders, snapshots, history)
    quality = load_result(result_path(reports, snapshot_id))
    out = Path(out) if out else reports / f"report-{snapshot_id}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(data, quality, gate), encoding="utf-8")
    print(f"report {snapshot_id}: {out} ({out.stat().st_size} bytes; {len(data.groups)} groups, "
          f"{sum(r['finding_count'] for r in data.findings)} findings, "
          f"quality {'not run' if quality is None else ('passed' if quality['success'] else 'failed')}, "
          f"gate {'not judged' if gate is None else gate['verdict']})")
    return 0


def main(argv: list[str] | None = None) -> int:
    """spark-submit entry point."""
    parser = argparse.ArgumentParser(prog="report", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

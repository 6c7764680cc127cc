"""``offsetlake report``: one self-contained HTML page about a snapshot of the lake.

Findings by rule and severity, downgrade verdicts, per-group epoch timelines and reconciliation lag
as inline SVG plots, the last quality run, and the snapshot's facts; it opens with no network.
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


def run(args: argparse.Namespace) -> int:
    from jobs.lake.views import lake_tables, register_lake, report_dir, snapshot_ids
    from jobs.quality.runner import load_result, result_path
    from jobs.report.data import collect
    from jobs.report.page import render
    from jobs.runtime.session import get_spark

    cfg = load_config().with_lake(args.lake)
    if not lake_tables(cfg.lake_path):
        print(f"offsetlake report: no Delta tables in {cfg.lake_path}", file=sys.stderr)
        return 2
    spark = get_spark(cfg, app_name="offsetlake-report")
    snapshots = snapshot_ids(spark, cfg.lake_path)
    snapshot_id = args.snapshot_id or (snapshots or [None])[-1]
    if snapshot_id is None:
        print(f"offsetlake report: no snapshot in {cfg.lake_path}/raw_records", file=sys.stderr)
        return 2
    catalog = register_lake(spark, cfg.lake_path, snapshot_id)
    data = collect(spark, snapshot_id, catalog.placeholders, snapshots)
    reports = report_dir(cfg.lake_path)
    quality = load_result(result_path(reports, snapshot_id))
    out = Path(args.out) if args.out else reports / f"report-{snapshot_id}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(data, quality), encoding="utf-8")
    print(f"report {snapshot_id}: {out} ({out.stat().st_size} bytes; {len(data.groups)} groups, "
          f"{sum(r['finding_count'] for r in data.findings)} findings, "
          f"quality {'not run' if quality is None else ('passed' if quality['success'] else 'failed')})")
    return 0


def main(argv: list[str] | None = None) -> int:
    """spark-submit entry point."""
    parser = argparse.ArgumentParser(prog="report", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

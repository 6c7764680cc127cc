"""``offsetlake quality``: great-expectations suites on a snapshot's decoded and replayed tables.

Writes Data Docs HTML under the lake's report directory (``report.dir`` in conf/) and exits 1
when an expectation fails. Also a spark-submit entry point:
``spark-submit jobs/commands/quality.py --lake LAKE [--snapshot-id ID]``.
"""

from __future__ import annotations

import argparse
import sys

from jobs.runtime.config import load_config

EXIT_FAILED = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lake", help="lake directory (default: lake.path in conf/)")
    parser.add_argument("--snapshot-id", help="snapshot to validate (default: the last snapshot id "
                                              "in raw_records, in sort order)")


def _print(result) -> None:
    for o in result.outcomes:
        mark = "PASS" if o.success else "FAIL"
        detail = "" if o.success else f"  unexpected {o.unexpected_count}: {o.unexpected_examples}"
        observed = f" observed={o.observed}" if o.observed is not None and not o.success else ""
        print(f"{mark} {o.suite}: {o.expectation}({o.column or ''}){observed}{detail}")
    failed = len(result.failed())
    print(f"quality {result.snapshot_id}: {len(result.outcomes) - failed}/{len(result.outcomes)} "
          f"expectations met; Data Docs: {result.data_docs}")


def run(args: argparse.Namespace) -> int:
    from jobs.commands.inputs import open_snapshot
    from jobs.lake.views import register_lake, report_dir
    from jobs.quality.runner import run_quality
    from jobs.quality.suites import suites
    from jobs.runtime.config import load_section

    cfg = load_config().with_lake(args.lake)
    opened = open_snapshot("quality", cfg, args.snapshot_id)
    if isinstance(opened, int):
        return opened
    spark, snapshot_id, _ = opened
    settings = load_section("quality")
    bound = float(settings.get("max_decode_error_rate", 0.001))
    checked = suites(bound)
    register_lake(spark, cfg.lake_path, snapshot_id, needed_by=[s.query for s in checked])
    result = run_quality(spark, checked, snapshot_id, report_dir(cfg.lake_path),
                         pandas_max_rows=int(settings.get("pandas_max_rows", 0)))
    _print(result)
    return 0 if result.success else EXIT_FAILED


def main(argv: list[str] | None = None) -> int:
    """spark-submit entry point."""
    parser = argparse.ArgumentParser(prog="quality", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

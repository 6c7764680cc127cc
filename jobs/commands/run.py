"""``offsetlake run``: ingest, decode and replay a snapshot into the lake's tables; with
``--audit`` also audit it, with ``--report`` also write its page, all in the run's one session
(one JVM start; the audit and the report read the tables the run has just written).

Also the spark-submit entry point: ``spark-submit jobs/commands/run.py SNAPSHOT --lake LAKE``.
The stages are ordered by :func:`jobs.stages.pipeline.run_pipeline`.
"""

from __future__ import annotations

import argparse
import sys

from jobs.audits.registry import SEVERITIES
from jobs.commands.inputs import EXIT_CODES_HELP
from jobs.runtime.config import load_config

EXIT_CODES = EXIT_CODES_HELP  # jobs.cli puts it in this command's --help


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="SNAPSHOT",
                        help="segment files or directories (a broker log dir, __consumer_offsets-N "
                             "dirs) or a capture directory")
    parser.add_argument("--lake", help="lake directory (default: lake.path in conf/)")
    parser.add_argument("--snapshot-id", help="id of this snapshot (default: the directory name); "
                                              "running the same id again replaces its rows")
    parser.add_argument("--audit", action="store_true",
                        help="then audit the snapshot as 'offsetlake audit' does (findings printed, "
                             "its gate summary kept for the report; exit 8 on findings at or above "
                             "--fail-on)")
    parser.add_argument("--target-version", metavar="V", action="append", default=[],
                        help="with --audit: also judge downgrade readiness to Kafka V, or 'all'")
    parser.add_argument("--fail-on", metavar="SEVERITY", default="high",
                        choices=[*SEVERITIES, "never"],
                        help="with --audit: the gate's threshold (default: high)")
    parser.add_argument("--report", metavar="PATH", nargs="?", const="",
                        help="then write the snapshot's HTML report to PATH (default: the lake's "
                             "report dir)")
    parser.add_argument("--incremental", action="store_true",
                        help="run into an incremental lake (docs/lake.md, 'Across snapshots'): "
                             "each record is kept once, only the batches the lake does not hold "
                             "are read and only the groups the snapshot changed are replayed; "
                             "the lake keeps what compaction deletes. The lake must be empty or "
                             "incremental; a snapshot of another cluster, older than the lake's "
                             "newest, or with other bytes at an offset the lake holds is refused "
                             "(exit 9). Not yet with --audit or --report")


def run(args: argparse.Namespace) -> int:
    from jobs.commands.inputs import (EXIT_FAILED, EXIT_OK, EXIT_USAGE, check_inputs, fail,
                                      write_lake)

    cfg = load_config().with_lake(args.lake)
    refused = check_inputs("run", args.paths)
    if refused is not None:
        return refused
    from jobs.lake.snapshot_views import is_incremental

    if args.incremental:
        if args.audit or args.report is not None:
            return fail("run", "--incremental does not take --audit or --report yet",
                        EXIT_USAGE)
        return write_lake("run", cfg.lake_path, lambda: _run_incremental(cfg, args))
    if is_incremental(cfg.lake_path):
        from jobs.commands.inputs import EXIT_LAKE_CONFLICT

        return fail("run", f"{cfg.lake_path} is an incremental lake (it keeps each record "
                           "once): run into it with --incremental", EXIT_LAKE_CONFLICT)
    if args.target_version and not args.audit:
        return fail("run", "--target-version needs --audit", EXIT_USAGE)
    from jobs.commands.audit import parse_targets

    targets = parse_targets(args.target_version)
    if targets is None:
        return EXIT_USAGE

    def job() -> int:
        from jobs.runtime.session import get_spark
        from jobs.stages.ingest import read_in_driver
        from jobs.stages.pipeline import run_pipeline

        spark = get_spark(cfg, app_name="offsetlake-run",
                          short=read_in_driver(args.paths, cfg.ingest))
        audited = {}

        def audit(snapshot_id: str, frames: dict) -> None:
            from jobs.stages.audit import audit_lake

            audited["result"] = audit_lake(spark, cfg.lake_path, snapshot_id, targets,
                                           frames=frames)

        report = run_pipeline(spark, cfg.lake_path, args.paths, args.snapshot_id,
                              then=audit if args.audit else None)
        print(report.summary())
        code = EXIT_OK if report.reconciled else EXIT_FAILED
        if args.audit:
            code = max(code, _present(cfg, audited["result"], args.fail_on))
        if args.report is not None:
            from jobs.commands.report import write_report
            from jobs.lake.views import snapshot_ids

            written = write_report(spark, cfg, report.snapshot_id, snapshot_ids(spark, cfg.lake_path),
                                   args.report or None, prog="run")
            code = code or written
        return code

    return write_lake("run", cfg.lake_path, job)


def _run_incremental(cfg, args) -> int:
    from jobs.commands.inputs import EXIT_LAKE_CONFLICT, EXIT_OK, fail
    from jobs.lake.snapshot_views import LakeConflict
    from jobs.runtime.session import get_spark
    from jobs.stages.increment_run import run_increment
    from jobs.stages.ingest import read_in_driver

    spark = get_spark(cfg, app_name="offsetlake-run",
                      short=read_in_driver(args.paths, cfg.ingest))
    try:
        report = run_increment(spark, cfg.lake_path, args.paths, args.snapshot_id)
    except LakeConflict as exc:
        return fail("run", str(exc), EXIT_LAKE_CONFLICT)
    print(report.summary())
    return EXIT_OK


def _present(cfg, result, fail_on: str) -> int:
    """The audit of the snapshot just written (run in the run's frames: nothing re-read),
    printed and gated as ``offsetlake audit`` does; its gate summary goes where the report looks
    for it."""
    from jobs.commands.audit import present
    from jobs.lake.views import report_dir
    from jobs.report.gate import summary_path

    shown = argparse.Namespace(group=[], rule=[], format="table", fail_on=fail_on,
                               gate_on=None,
                               summary=str(summary_path(report_dir(cfg.lake_path),
                                                        result.snapshot_id)))
    return present(result, shown)


def main(argv: list[str] | None = None) -> int:
    """spark-submit entry point: ``spark-submit jobs/commands/run.py SNAPSHOT --lake LAKE``."""
    parser = argparse.ArgumentParser(prog="pipeline", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

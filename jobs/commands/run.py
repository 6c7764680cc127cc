"""``offsetlake run``: ingest, decode and replay a snapshot into the lake's tables; with
``--audit`` also audit it, with ``--report`` also write its page, all in the run's one session
(one JVM start; the audit and the report read the tables the run has just written).

Incremental by default (docs/lake.md, "Across snapshots"): a new lake keeps each record once and
each run reads and replays only what the snapshot changed. ``--full`` rebuilds the snapshot's
tables from it alone, as a lake of full runs holds them; a lake keeps the kind it was built as.
``--backfill`` keeps a snapshot older than an incremental lake's newest beside its snapshots
(:mod:`jobs.stages.backfill`).

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
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--incremental", action="store_true",
                      help="run into an incremental lake (docs/lake.md, 'Across snapshots'): each "
                           "record is kept once, only the batches the lake does not hold are read "
                           "and only the groups the snapshot changed are replayed; the lake keeps "
                           "what compaction deletes. The default, except in a lake of full runs. "
                           "A snapshot of another cluster, older than the lake's newest (see "
                           "--backfill), or with other bytes at an offset the lake holds is "
                           "refused (exit 9)")
    mode.add_argument("--full", action="store_true",
                      help="a full run: the snapshot's tables rebuilt from it alone, each "
                           "snapshot's rows kept whole under its id (a lake of full runs; the "
                           "default in a lake that already holds them)")
    mode.add_argument("--backfill", action="store_true",
                      help="a snapshot older than an incremental lake's newest (refused without "
                           "this flag): stored whole under its id beside the lake's snapshots, "
                           "whose views and history stay as they were; read it with --snapshot "
                           "ID (docs/lake.md, 'Backfills')")


# How a run writes into a lake: a new lake takes the mode asked for (incremental by default), a
# lake keeps the mode it was built with.
NEW, FULL, INCREMENTAL, BACKFILL = "new", "full", "incremental", "backfill"


def lake_kind(lake) -> str:
    """``new`` (no run yet), ``full`` (a lake of full runs) or ``incremental``."""
    from jobs.lake.snapshot_views import holds_full_runs, is_incremental

    if is_incremental(lake):
        return INCREMENTAL
    return FULL if holds_full_runs(lake) else NEW


def choose_mode(kind: str, full: bool, incremental: bool, lake="the lake",
                backfill: bool = False) -> tuple[str, str]:
    """``(mode, note)`` of a run into a lake of ``kind`` with the flags given; ``note`` is said
    on stderr when not empty. Raises ValueError, in words, for a mode the lake cannot take.

    >>> choose_mode(NEW, False, False)
    ('incremental', '')
    >>> choose_mode(FULL, False, False)[0]
    'full'
    >>> choose_mode(INCREMENTAL, False, False, backfill=True)[0]
    'backfill'
    """
    if backfill:
        if kind != INCREMENTAL:
            raise ValueError(f"{lake} is not an incremental lake: --backfill keeps an older "
                             "snapshot beside an incremental lake's snapshots (a lake of full "
                             "runs takes snapshots in any order)")
        return BACKFILL, ""
    if kind == INCREMENTAL and full:
        raise ValueError(f"{lake} is an incremental lake (it keeps each record once): a full run "
                         "of one snapshot needs a lake of its own (--lake)")
    if kind == FULL and incremental:
        raise ValueError(f"{lake} holds full runs (each snapshot's rows whole): an incremental "
                         "run needs an empty lake or an incremental one")
    if kind == FULL and not full:
        return FULL, (f"{lake} holds full runs: this run is one too (--full); an incremental "
                      "lake starts in an empty directory")
    return (FULL if full else INCREMENTAL), ""


def run(args: argparse.Namespace) -> int:
    from jobs.commands.inputs import (EXIT_FAILED, EXIT_LAKE_CONFLICT, EXIT_OK, EXIT_USAGE,
                                      check_inputs, fail, write_lake)

    cfg = load_config().with_lake(args.lake)
    refused = check_inputs("run", args.paths)
    if refused is not None:
        return refused
    if args.target_version and not args.audit:
        return fail("run", "--target-version needs --audit", EXIT_USAGE)
    from jobs.commands.audit import parse_targets

    targets = parse_targets(args.target_version)
    if targets is None:
        return EXIT_USAGE
    try:
        mode, note = choose_mode(lake_kind(cfg.lake_path), args.full, args.incremental,
                                 cfg.lake_path, args.backfill)
    except ValueError as exc:
        return fail("run", str(exc), EXIT_LAKE_CONFLICT)
    if note:
        print(f"offsetlake run: {note}", file=sys.stderr)

    def job() -> int:
        from jobs.runtime.session import get_spark
        from jobs.stages.ingest import read_in_driver

        spark = get_spark(cfg, app_name="offsetlake-run",
                          short=read_in_driver(args.paths, cfg.ingest))
        if mode == INCREMENTAL:
            return _run_incremental(spark, cfg, args, targets)
        from jobs.stages.backfill import run_backfill
        from jobs.stages.pipeline import run_pipeline

        audited = {}

        def audit(snapshot_id: str, frames: dict) -> None:
            from jobs.stages.audit import audit_lake

            audited["result"] = audit_lake(spark, cfg.lake_path, snapshot_id, targets,
                                           frames=frames)

        if mode == BACKFILL:
            from jobs.lake.snapshot_views import LakeConflict

            try:
                report = run_backfill(spark, cfg.lake_path, args.paths, args.snapshot_id,
                                      then=audit if args.audit else None)
            except LakeConflict as exc:
                return fail("run", str(exc), EXIT_LAKE_CONFLICT)
        else:
            report = run_pipeline(spark, cfg.lake_path, args.paths, args.snapshot_id,
                                  then=audit if args.audit else None)
        print(report.summary())
        code = EXIT_OK if report.reconciled else EXIT_FAILED
        return _audit_and_report(spark, cfg, args, report.snapshot_id, code,
                                 audited.get("result"))

    return write_lake("run", cfg.lake_path, job)


def _run_incremental(spark, cfg, args, targets) -> int:
    """The incremental run, then (``--audit``, ``--report``) its audit and report in the same
    session: they read the snapshot as of it through the lake (jobs.lake.snapshot_views)."""
    from jobs.commands.inputs import EXIT_LAKE_CONFLICT, EXIT_OK, fail
    from jobs.lake.snapshot_views import LakeConflict
    from jobs.stages.increment_run import run_increment

    try:
        report = run_increment(spark, cfg.lake_path, args.paths, args.snapshot_id)
    except LakeConflict as exc:
        return fail("run", str(exc), EXIT_LAKE_CONFLICT)
    print(report.summary())
    result = None
    if args.audit:
        from jobs.stages.audit import audit_lake

        result = audit_lake(spark, cfg.lake_path, report.ingest.snapshot_id, targets)
    return _audit_and_report(spark, cfg, args, report.ingest.snapshot_id, EXIT_OK, result)


def _audit_and_report(spark, cfg, args, snapshot_id: str, code: int, audited) -> int:
    """The run's exit code after presenting its audit (``--audit``) and writing its report
    (``--report``)."""
    if args.audit:
        code = max(code, _present(cfg, audited, args.fail_on))
    if args.report is not None:
        from jobs.commands.report import write_report
        from jobs.lake.views import snapshot_ids

        written = write_report(spark, cfg, snapshot_id, snapshot_ids(spark, cfg.lake_path),
                               args.report or None, prog="run")
        code = code or written
    return code


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

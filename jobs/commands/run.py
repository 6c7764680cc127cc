"""``offsetlake run``: ingest, decode and replay a snapshot into the lake's tables.

Also the spark-submit entry point: ``spark-submit jobs/commands/run.py SNAPSHOT --lake LAKE``.
The stages are ordered by :func:`jobs.stages.pipeline.run_pipeline`.
"""

from __future__ import annotations

import argparse
import sys

from jobs.runtime.config import load_config
from jobs.commands.inputs import EXIT_CODES_HELP

EXIT_CODES = EXIT_CODES_HELP  # jobs.cli puts it in this command's --help


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="SNAPSHOT",
                        help="segment files or directories (a broker log dir, __consumer_offsets-N "
                             "dirs) or a capture directory")
    parser.add_argument("--lake", help="lake directory (default: lake.path in conf/)")
    parser.add_argument("--snapshot-id", help="id of this snapshot (default: the directory name); "
                                              "running the same id again replaces its rows")


def run(args: argparse.Namespace) -> int:
    from jobs.commands.inputs import EXIT_FAILED, EXIT_OK, check_inputs, write_lake

    cfg = load_config().with_lake(args.lake)
    refused = check_inputs("run", args.paths)
    if refused is not None:
        return refused

    def job() -> int:
        from jobs.runtime.session import get_spark
        from jobs.stages.ingest import read_in_driver
        from jobs.stages.pipeline import run_pipeline

        spark = get_spark(cfg, app_name="offsetlake-run",
                          short=read_in_driver(args.paths, cfg.ingest))
        report = run_pipeline(spark, cfg.lake_path, args.paths, args.snapshot_id)
        print(report.summary())
        return EXIT_OK if report.reconciled else EXIT_FAILED

    return write_lake("run", cfg.lake_path, job)


def main(argv: list[str] | None = None) -> int:
    """spark-submit entry point: ``spark-submit jobs/commands/run.py SNAPSHOT --lake LAKE``."""
    parser = argparse.ArgumentParser(prog="pipeline", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

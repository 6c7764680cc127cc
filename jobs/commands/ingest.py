"""``offsetlake ingest``: a snapshot into the ``raw_records`` and ``quarantine`` Delta tables.

The work is :func:`jobs.stages.ingest.ingest`; this module parses arguments and reports.
"""

from __future__ import annotations

import argparse
import sys

from jobs.runtime.config import DEFAULT_RANGE_MB, load_config
from jobs.commands.inputs import EXIT_CODES_HELP

EXIT_CODES = EXIT_CODES_HELP  # jobs.cli puts it in this command's --help



def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="a .log file, a __consumer_offsets-N directory, a broker log dir, "
                             "or a capture directory (with manifest.json)")
    parser.add_argument("--lake", help="lake directory (default: lake.path in conf/)")
    parser.add_argument("--snapshot-id", help="id of this snapshot (default: the directory name); "
                                              "ingesting the same id again replaces its rows")
    parser.add_argument("--range-mb", type=int, default=DEFAULT_RANGE_MB,
                        help="size of the byte ranges segment files are split into (default 64)")
    parser.add_argument("--incremental", action="store_true",
                        help="keep each record once across snapshots (docs/lake.md, 'Across "
                             "snapshots'): batches the lake holds unchanged are skipped, only "
                             "new records are written, and the records compaction removed since "
                             "the previous snapshot are listed in record_removals. The lake must "
                             "be empty or incremental; a snapshot of another cluster, older than "
                             "the lake's newest, or with other bytes at an offset the lake holds "
                             "is refused (exit 9)")


def run(args: argparse.Namespace) -> int:
    from jobs.commands.inputs import (EXIT_FAILED, EXIT_LAKE_CONFLICT, EXIT_OK, check_inputs,
                                      fail, write_lake)
    from jobs.lake.snapshot_views import LakeConflict, is_incremental
    from jobs.stages.increment import ingest_increment

    cfg = load_config().with_lake(args.lake)
    refused = check_inputs("ingest", args.paths)
    if refused is not None:
        return refused
    if not args.incremental and is_incremental(cfg.lake_path):
        return fail("ingest", f"{cfg.lake_path} is an incremental lake (it keeps each record "
                              "once): ingest into it with --incremental", EXIT_LAKE_CONFLICT)

    def job() -> int:
        from jobs.runtime.session import get_spark
        from jobs.stages.ingest import ingest, read_in_driver

        spark = get_spark(cfg, app_name="offsetlake-ingest",
                          short=read_in_driver(args.paths, cfg.ingest))
        if args.incremental:
            try:
                added = ingest_increment(spark, cfg.lake_path, args.paths, args.snapshot_id,
                                         args.range_mb << 20)
            except LakeConflict as exc:
                return fail("ingest", str(exc), EXIT_LAKE_CONFLICT)
            print(added.summary())
            return EXIT_OK
        report = ingest(spark, cfg.lake_path, args.paths, args.snapshot_id, args.range_mb << 20)
        print(report.summary())
        return EXIT_OK if report.reconciled else EXIT_FAILED

    return write_lake("ingest", cfg.lake_path, job)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="ingest", description=__doc__)
    add_arguments(parser)
    sys.exit(run(parser.parse_args()))

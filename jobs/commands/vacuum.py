"""``offsetlake vacuum``: retention of an incremental lake (:mod:`jobs.stages.vacuum`).

    offsetlake vacuum --lake lake --keep 24
    offsetlake vacuum --lake lake --older-than 7d --retain-hours 24
"""

from __future__ import annotations

import argparse
import re
import sys
import time

from jobs.commands.inputs import EXIT_CODES_HELP
from jobs.runtime.config import load_config

EXIT_CODES = EXIT_CODES_HELP  # jobs.cli puts it in this command's --help
UNITS_MS = {"m": 60_000, "h": 3_600_000, "d": 86_400_000}


def duration_ms(text: str) -> int:
    """``30m``, ``12h``, ``7d`` in milliseconds.

    >>> duration_ms("7d") == 7 * 86_400_000
    True
    """
    match = re.fullmatch(r"(\d+)([mhd])", text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number and m, h or d (e.g. 7d)")
    return int(match.group(1)) * UNITS_MS[match.group(2)]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lake", help="lake directory (default: lake.path in conf/); it must be "
                                       "an incremental lake (offsetlake run --incremental)")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--keep", type=int, metavar="N",
                       help="keep the per-snapshot state of the newest N snapshots")
    which.add_argument("--older-than", type=duration_ms, metavar="D",
                       help="drop the per-snapshot state of snapshots whose newest record is "
                            "older than D (30m, 12h, 7d) by this machine's clock")
    parser.add_argument("--retain-hours", type=float, default=168.0,
                        help="then Delta VACUUM: remove files no table version of the last H "
                             "hours reads (default 168, Delta's own default)")


def run(args: argparse.Namespace) -> int:
    from jobs.commands.inputs import EXIT_NO_SEGMENTS, EXIT_OK, EXIT_USAGE, fail, write_lake
    from jobs.lake.snapshot_views import is_incremental

    cfg = load_config().with_lake(args.lake)
    if not is_incremental(cfg.lake_path):
        return fail("vacuum", f"{cfg.lake_path} is not an incremental lake: a lake of full "
                              "snapshots keeps each one whole (delete a snapshot's rows by its "
                              "id)", EXIT_NO_SEGMENTS)
    if args.keep is not None and args.keep < 1:
        return fail("vacuum", "--keep must be at least 1", EXIT_USAGE)

    def job() -> int:
        from jobs.runtime.session import get_spark
        from jobs.stages.vacuum import vacuum_lake

        spark = get_spark(cfg, app_name="offsetlake-vacuum", short=True)
        report = vacuum_lake(spark, cfg.lake_path, keep=args.keep,
                             older_than_ms=args.older_than, now_ms=int(time.time() * 1000),
                             retain_hours=args.retain_hours)
        print(report.summary())
        return EXIT_OK

    return write_lake("vacuum", cfg.lake_path, job)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="vacuum", description=__doc__)
    add_arguments(parser)
    sys.exit(run(parser.parse_args()))

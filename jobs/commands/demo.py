"""``offsetlake demo`` / ``make demo``: the whole pipeline on the bundled sample snapshot.

The sample is a real ``__consumer_offsets`` snapshot taken from an Apache Kafka broker by the
integration harness (see ``samples/*/README.md``). The demo ingests, decodes and replays it into
``./lake`` and prints a short summary of what the tables now say.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jobs.runtime.config import PROJECT_ROOT, load_config
from jobs.commands.inputs import EXIT_CODES_HELP

EXIT_CODES = EXIT_CODES_HELP  # jobs.cli puts it in this command's --help

DEFAULT_SAMPLE = PROJECT_ROOT / "samples" / "kafka-4.3.1"  # a real snapshot, see its README



def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lake", help="lake directory (default: lake.path in conf/, ./lake)")
    parser.add_argument("--sample", default=str(DEFAULT_SAMPLE),
                        help=f"snapshot to run on (default: {DEFAULT_SAMPLE.relative_to(PROJECT_ROOT)})")


def _print_summary(spark, lake: Path, snapshot_id: str) -> None:
    from jobs.lake import read_snapshot

    groups = read_snapshot(spark, lake, "groups", snapshot_id).orderBy("group_id").collect()
    print(f"\n{len(groups)} group(s) in snapshot {snapshot_id}:")
    print(f"  {'group_id':<34} {'type':<9} {'state':<12} {'epoch':>5} {'members':>7}")
    for g in groups:
        epoch = g["group_epoch"] if g["group_epoch"] is not None else g["generation"]
        print(f"  {g['group_id']:<34} {g['group_type']:<9} {g['group_state']:<12} "
              f"{'' if epoch is None else epoch:>5} {g['member_count']:>7}")
    for table, what in (("offsets", "committed offsets"), ("offset_commits", "offset commits"),
                        ("transactions", "transactions"), ("violations", "replay findings")):
        print(f"{read_snapshot(spark, lake, table, snapshot_id).count():>6} {what} ({table})")
    print(f"\nTables are Delta tables under {lake.resolve()}; query them with e.g.\n"
          f"  .venv/bin/offsetlake sql --lake {lake} \"select group_id, group_state from groups\"")


def run(args: argparse.Namespace) -> int:
    from jobs.commands.inputs import EXIT_FAILED, EXIT_OK, check_inputs, write_lake

    cfg = load_config().with_lake(getattr(args, "lake", None))
    sample = Path(getattr(args, "sample", DEFAULT_SAMPLE))
    refused = check_inputs("demo", [str(sample)])
    if refused is not None:
        return refused
    print(f"offsetlake demo: running the pipeline on {sample} into {cfg.lake_path} "
          f"(Spark {cfg.spark.master}) ...", file=sys.stderr)

    def job() -> int:
        from jobs.runtime.session import get_spark
        from jobs.stages.ingest import read_in_driver
        from jobs.stages.pipeline import run_pipeline

        spark = get_spark(cfg, app_name="offsetlake-demo",
                          short=read_in_driver([str(sample)], cfg.ingest))
        report = run_pipeline(spark, cfg.lake_path, [str(sample)])
        print(report.summary())
        _print_summary(spark, cfg.lake_path, report.snapshot_id)
        return EXIT_OK if report.reconciled else EXIT_FAILED

    return write_lake("demo", cfg.lake_path, job)

"""Regenerate the committed real snapshot ``samples/kafka-<version>/`` from the test broker.

    python -m tests.integration.make_sample samples/kafka-4.3.1
    python -m tests.integration.make_sample samples/kafka-4.4.0     # a 4.4.0 broker
    python -m tests.integration.make_sample samples/rolling-upgrade # 3.9.2 -> ... -> 4.4.0

starts a fresh single-node broker (``kafka_broker.KafkaBroker``, ``offsets.topic.num.partitions``
= 3), runs every scenario of :mod:`tests.integration.workloads`, waits until the groups are
settled and, with the members still in their groups, copies each ``__consumer_offsets-N``
directory's ``.log`` files and small side files into the target,
plus ``scenarios.json`` (what each scenario did). It then rewrites the expected outputs beside
it (``<target>.expected/``: the ``offsetlake dump`` JSON lines and the pure-Python replay tables)
unless ``--no-expected`` is given. The README of the sample is kept by hand.

The helpers :func:`replay_tables` and :func:`dump_lines` are what
``tests/test_sample_regression.py`` recomputes and compares with the checked-in expectations.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from jobs.replay import TABLE_COLUMNS

OFFSETS_TOPIC = "__consumer_offsets"
# What the sample keeps of a partition directory: segments and the small side files. The active
# segment's .index/.timeindex are preallocated (10 MiB, sparse) while the broker runs, so only
# side files up to MAX_SIDE_FILE_BYTES are kept; .snapshot producer-state files are left out.
SAMPLE_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex")
SAMPLE_NAMES = ("leader-epoch-checkpoint", "partition.metadata")
MAX_SIDE_FILE_BYTES = 64 * 1024


def partition_dirs(snapshot: Path) -> list[Path]:
    dirs = [d for d in snapshot.iterdir()
            if d.is_dir() and d.name.startswith(f"{OFFSETS_TOPIC}-")
            and d.name.rsplit("-", 1)[1].isdigit()]
    return sorted(dirs, key=lambda d: int(d.name.rsplit("-", 1)[1]))


def replay_tables(snapshot: Path) -> dict[str, list[dict]]:
    """The pure-Python replay of every partition directory of ``snapshot``, merged, each table
    sorted by :func:`sort_key`."""
    from jobs.replay import replay_partition
    from tests.support.partition_dirs import events_from_partition_dir

    from jobs.replay.topics import fill_topic_names, merge_topic_names

    tables: dict[str, list[dict]] = {name: [] for name in TABLE_COLUMNS}
    learned = []
    for directory in partition_dirs(snapshot):
        result = replay_partition(events_from_partition_dir(directory))
        learned.append(result.topic_names)
        for name, rows in result.tables.items():
            tables[name].extend(rows)
    fill_topic_names(tables, merge_topic_names(learned))   # names are snapshot-wide
    return {name: sorted(rows, key=sort_key) for name, rows in tables.items()}


def sort_key(row: dict) -> tuple:
    """Deterministic order: log position first, then every column as text."""
    return (row.get("log_partition") if row.get("log_partition") is not None else -1,
            row.get("log_offset") if row.get("log_offset") is not None else -1,
            json.dumps(row, sort_keys=True, default=str))


def table_lines(rows: list[dict]) -> list[str]:
    return [json.dumps(row, sort_keys=False, separators=(",", ":"), default=str) for row in rows]


def dump_lines(snapshot: Path) -> list[str]:
    """``offsetlake dump <snapshot>`` (JSON lines), computed in-process."""
    from decoders.kafka_json import dumps
    from decoders.dump import dump_objects

    return [dumps(obj) for obj in dump_objects([str(snapshot)])]


def write_expected(snapshot: Path, expected: Path) -> None:
    """``expected/dump.jsonl`` and ``expected/tables/<table>.jsonl`` for ``snapshot``."""
    (expected / "tables").mkdir(parents=True, exist_ok=True)
    (expected / "dump.jsonl").write_text("".join(line + "\n" for line in dump_lines(snapshot)))
    for name, rows in replay_tables(snapshot).items():
        (expected / "tables" / f"{name}.jsonl").write_text(
            "".join(line + "\n" for line in table_lines(rows)))


def copy_snapshot(data_dir: Path, target: Path) -> int:
    """Copy the ``__consumer_offsets-*`` directories of a stopped broker; returns bytes copied."""
    total = 0
    for source in partition_dirs(data_dir):
        dest = target / source.name
        dest.mkdir(parents=True, exist_ok=True)
        for item in sorted(source.iterdir()):
            keep = item.suffix == ".log" or (
                (item.suffix in SAMPLE_SUFFIXES or item.name in SAMPLE_NAMES)
                and item.stat().st_size <= MAX_SIDE_FILE_BYTES)
            if item.is_file() and keep:
                shutil.copy2(item, dest / item.name)
                total += item.stat().st_size
    return total


def make_sample(target: Path, *, write_expectations: bool = True, progress=sys.stderr,
                version: str | None = None, rolling: bool = False) -> dict:
    """``version``: a broker release other than the suite's (its jars fetched by ``fetch.sh``);
    ``rolling``: the last writer release on a log every ``<rolling.versions>`` release wrote
    to first (:mod:`tests.integration.rolling_upgrade`)."""
    from .kafka_broker import KafkaBroker, kafka_version
    from .workloads import Workloads

    version = version or kafka_version()

    if target.exists() and any(target.iterdir()):
        raise SystemExit(f"{target} is not empty; remove it first")
    began = time.monotonic()
    earlier: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="offsetlake-sample-") as work:
        if rolling:
            from .rolling_upgrade import final_version, upgraded_broker

            broker, earlier = upgraded_broker(Path(work) / "kafka", progress)
            version = final_version()
        else:
            broker = KafkaBroker(Path(work) / "kafka",
                                 version=None if version == kafka_version() else version)
            broker.start()
        try:
            print(f"make_sample: Kafka {version} at {broker.bootstrap_server}",
                  file=progress)
            with Workloads(broker.bootstrap_server) as wl:
                if rolling:
                    from .rolling_upgrade import scenarios_of

                    wl.run_all(scenarios_of(version))
                else:
                    wl.run_all()
                wl.wait_settled()
                # Copied while the members are still in their groups, as a snapshot of a running
                # cluster is: every message is flushed, so the .log files are complete.
                target.mkdir(parents=True, exist_ok=True)
                size = copy_snapshot(broker.data_dir, target)
                scenarios, timings = wl.scenarios, wl.timings
        finally:
            broker.stop()
    document = {"kafka_version": version, "scenarios": scenarios}
    if rolling:   # the scenarios each earlier release ran, its members closed before it stopped
        document["earlier_scenarios"] = earlier
    (target / "scenarios.json").write_text(json.dumps(document, indent=2) + "\n")
    if write_expectations:
        write_expected(target, target.parent / f"{target.name}.expected")
    summary = {"bytes": size, "seconds": round(time.monotonic() - began, 1),
               "scenario_seconds": timings}
    print(f"make_sample: wrote {target} ({size} bytes of segment and side files) in "
          f"{summary['seconds']} s", file=progress)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.integration.make_sample",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("target", type=Path, help="e.g. samples/kafka-4.3.1 (must be empty)")
    parser.add_argument("--no-expected", action="store_true",
                        help="do not rewrite <target>.expected/")
    parser.add_argument("--kafka-version", metavar="X.Y.Z",
                        help="the broker release (its jars fetched by build/kafka/fetch.sh X.Y.Z); "
                             "default: the target's name kafka-X.Y.Z, else the suite's release")
    args = parser.parse_args(argv)
    named = re.fullmatch(r"kafka-(\d+\.\d+\.\d+)", args.target.name)
    make_sample(args.target, write_expectations=not args.no_expected,
                version=args.kafka_version or (named.group(1) if named else None),
                rolling=args.target.name == "rolling-upgrade")
    return 0


if __name__ == "__main__":
    sys.exit(main())

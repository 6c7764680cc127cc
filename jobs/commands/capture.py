"""``offsetlake capture``: snapshot ``__consumer_offsets`` from a live cluster into bronze Parquet.

The reading itself is :func:`jobs.snapshots.capture.capture`; its module docstring lists what a
capture cannot see. Run as ``python -m jobs.commands.capture`` or through ``offsetlake capture``.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any
from collections.abc import Mapping


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``capture`` subcommand's options (wired into jobs/cli.py)."""
    parser.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT",
                        help="a broker to bootstrap from (comma-separate several)")
    parser.add_argument("--out", required=True, type=Path, metavar="DIR",
                        help="new or empty directory for the Parquet files and manifest.json")
    parser.add_argument("--snapshot-id", help="id of the snapshot (default: capture-<UTC time>)")
    parser.add_argument("--timeout-s", type=float, default=30.0,
                        help="seconds to wait for the cluster, or for a stalled read (default 30)")


def run(args: argparse.Namespace, kafka_settings: Mapping[str, Any] | None = None) -> int:
    from jobs.snapshots.capture import CaptureError, capture

    """Run a capture from parsed arguments; 0 on success, 2 on a :class:`CaptureError`."""
    if not logging.getLogger().handlers:
        # kafka-python logs every failed connection attempt; the CaptureError says it once.
        logging.getLogger("kafka").addHandler(logging.NullHandler())
    if kafka_settings is None:
        from jobs.runtime.config import load_config  # the conf/ YAML's kafka: section

        kafka_settings = load_config().kafka
    try:
        capture(args.bootstrap_server, args.out, snapshot_id=args.snapshot_id,
                config=kafka_settings, timeout_s=args.timeout_s)
    except CaptureError as exc:
        print(f"offsetlake capture: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="offsetlake capture", description=__doc__.split("\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

"""Regenerate a committed streams-group snapshot ``samples/streams-<release>/`` from a real broker
and Kafka Streams application of that release.

    python -m tests.integration.make_streams_sample samples/streams-4.4.0

runs the scenario of :func:`tests.integration.streams_app.run_scenario` (one instance, then three, one
killed, one restarted; standby replicas) against a fresh broker of the release named by the
target, copies its ``__consumer_offsets-N`` directories (as :mod:`make_sample` does) and writes
``described.json`` (what ``kafka-streams-groups --describe`` said at the moment of the snapshot)
and the expected outputs beside it (``<target>.expected/``: ``offsetlake dump`` and the pure
replay's tables). ``tests/test_sample_regression.py`` compares them, no broker needed. Needs the
release's jars: ``bash build/kafka/fetch.sh X.Y.Z`` and ``bash build/streams/fetch.sh X.Y.Z``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path


class _Dirs:
    """``mktemp`` as pytest's ``tmp_path_factory`` has it, under one directory."""

    def __init__(self, root: Path):
        self.root, self.count = root, 0

    def mktemp(self, name: str) -> Path:
        self.count += 1
        path = self.root / f"{name}{self.count}"
        path.mkdir(parents=True)
        return path


def make_streams_sample(target: Path, release: str) -> dict:
    from .kafka_broker import KafkaBroker, kafka_version
    from .make_sample import copy_snapshot, write_expected
    from .streams_app import STREAMS_BROKER, StreamsApp, run_scenario

    if target.exists() and any(target.iterdir()):
        raise SystemExit(f"{target} is not empty; remove it first")
    with tempfile.TemporaryDirectory(prefix="offsetlake-streams-sample-") as work:
        dirs = _Dirs(Path(work))
        with KafkaBroker(dirs.mktemp("kafka"), overrides=STREAMS_BROKER,
                         version=None if release == kafka_version() else release) as broker:
            app = StreamsApp.compile(dirs.mktemp("app"), release)
            try:
                run = run_scenario(broker, app, release, dirs)
            finally:
                app.close()
        target.mkdir(parents=True, exist_ok=True)
        size = copy_snapshot(run.segments, target)
    described = {"kafka_version": release, "state": run.described.state,
                 "members": {mid: dict(m, tasks={k: sorted(v) for k, v in m["tasks"].items()})
                             for mid, m in sorted(run.described.members.items())},
                 "offsets": [[t, p, o] for (t, p), o in sorted(run.described.offsets.items())],
                 "restarted": run.restarted}
    (target / "described.json").write_text(json.dumps(described, indent=2) + "\n")
    write_expected(target, target.parent / f"{target.name}.expected")
    print(f"make_streams_sample: wrote {target} ({size} bytes)", file=sys.stderr)
    return described


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.integration.make_streams_sample",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("target", type=Path, help="samples/streams-X.Y.Z (must be empty)")
    args = parser.parse_args(argv)
    named = re.fullmatch(r"streams-(\d+\.\d+\.\d+)", args.target.name)
    if not named:
        parser.error("the target's name must be streams-X.Y.Z (the release to run)")
    make_streams_sample(args.target, named.group(1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

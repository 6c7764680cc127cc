"""The ``offsetlake`` command line.

Each command lives in its own module exposing ``add_arguments(parser)`` and ``run(args) -> int``;
this file only lists them, so ``offsetlake --help`` never imports Spark. A planned command whose
module does not exist yet says so and exits 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from dataclasses import dataclass

EXIT_USAGE = 2


@dataclass(frozen=True)
class Command:
    name: str
    module: str | None  # None: planned, not built yet
    summary: str
    example: str


COMMANDS: tuple[Command, ...] = (
    Command("dump", "jobs.commands.dump", "print every record of segment files as JSON lines, no Spark",
            "offsetlake dump /data/__consumer_offsets-7 --group payments"),
    Command("capture", "jobs.commands.capture", "read __consumer_offsets from a live cluster into a Parquet snapshot",
            "offsetlake capture --bootstrap-server broker:9092 --out snapshots/today"),
    Command("ingest", "jobs.commands.ingest", "load a snapshot into the raw_records Delta table (Spark)",
            "offsetlake ingest snapshots/today --lake lake"),
    Command("run", "jobs.commands.run", "ingest, decode and replay a snapshot into the lake's tables, "
            "auditing each group for fencing as it goes (--audit, --report: the whole audit and "
            "the page too, in one session)",
            "offsetlake run samples/kafka-4.3.1 --lake lake\n"
            "  offsetlake run samples/kafka-4.3.1 --lake lake --audit --target-version 4.0 --report"),
    Command("audit", "jobs.commands.audit", "check fencing and downgrade rules; the exit code gates",
            "offsetlake audit --lake lake --fail-on high --target-version 3.9"),
    Command("sql", "jobs.commands.sql", "query the lake's tables and sql/ views by name (no query: a prompt)",
            "offsetlake sql --lake lake \"select * from group_overview\""),
    Command("quality", "jobs.commands.quality", "validate the tables with great-expectations suites",
            "offsetlake quality --lake lake"),
    Command("report", "jobs.commands.report", "write a self-contained HTML report with plots",
            "offsetlake report --lake lake --out report.html"),
    Command("vacuum", "jobs.commands.vacuum", "drop the per-snapshot state of an incremental "
            "lake's old snapshots (history stays), then Delta VACUUM",
            "offsetlake vacuum --lake lake --keep 24"),
    Command("demo", "jobs.commands.demo", "run the pipeline on the bundled sample snapshot",
            "offsetlake demo"),
)

DESCRIPTION = """\
offsetlake turns snapshots of Kafka's __consumer_offsets topic into Delta Lake tables
(groups, members, epochs, assignments, committed offsets) and audits them.

A snapshot is either a copy of a broker's __consumer_offsets-N segment directories or a
capture read from a live cluster. Settings come from conf/offsetlake.yaml; any value can be
overridden with OFFSETLAKE_<SECTION>__<KEY> (for example OFFSETLAKE_SPARK__MASTER=local[2]).
"""


def _epilog() -> str:
    lines = ["examples:"] + [f"  {c.example}" for c in COMMANDS]
    planned = [c.name for c in COMMANDS if c.module is None]
    if planned:
        lines += ["", "not built yet (they exit 2): " + ", ".join(planned)]
    lines += ["", "Run 'offsetlake COMMAND --help' for a command's options."]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="offsetlake", description=DESCRIPTION, epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for command in COMMANDS:
        summary = command.summary + ("" if command.module else " [planned]")
        module = importlib.import_module(command.module) if command.module else None
        # A command documents its exit codes in its --help (EXIT_CODES, plain text).
        codes = getattr(module, "EXIT_CODES", None)
        child = sub.add_parser(command.name, help=summary, description=summary,
                               epilog=f"example:\n  {command.example}"
                                      + (f"\n\n{codes}" if codes else ""),
                               formatter_class=argparse.RawDescriptionHelpFormatter)
        if module:
            module.add_arguments(child)
        child.set_defaults(_command=command)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    # Unknown options are tolerated only for planned commands, so that the honest
    # "not built yet" answer wins over a usage error there.
    args, unknown = parser.parse_known_args(argv)
    command: Command | None = getattr(args, "_command", None)
    if unknown and (command is None or command.module is not None):
        parser.error("unrecognized arguments: " + " ".join(unknown))
    if command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if command.module is None:
        print(f"offsetlake {command.name}: not built yet. Planned: {command.summary}.",
              file=sys.stderr)
        return EXIT_USAGE
    return int(importlib.import_module(command.module).run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())

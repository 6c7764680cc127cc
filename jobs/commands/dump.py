"""``offsetlake dump``: every record of segment files as JSON lines (or text), no Spark.

The objects come from :func:`decoders.dump.dump_objects`; shapes are documented in ``docs/dump.md``.
"""

from __future__ import annotations

import argparse
import os
import sys
from jobs.commands.inputs import EXIT_CODES_HELP

EXIT_CODES = EXIT_CODES_HELP  # jobs.cli puts it in this command's --help


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="a .log segment, a __consumer_offsets-N directory, or a broker log dir")
    parser.add_argument("--format", choices=("jsonl", "text"), default="jsonl",
                        help="jsonl: one JSON object per record (default); text: one line per record")
    parser.add_argument("--group", action="append", metavar="G",
                        help="only records of this group id (repeatable)")
    parser.add_argument("--type", action="append", type=int, metavar="N",
                        help="only records of this record type id, e.g. 1 for offset commits (repeatable)")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="processes rendering segment files side by side (default: one per "
                             "core); the output is the same whatever N")


def _silence_stdout() -> None:
    """After EPIPE: point fd 1 at /dev/null so the interpreter's final flush cannot fail again
    (that would print 'Exception ignored ... BrokenPipeError' and exit 120)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (captured, replaced)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def run(args: argparse.Namespace) -> int:
    from jobs.commands.inputs import EXIT_FAILED, EXIT_OK, EXIT_USAGE, check_inputs, fail

    refused = check_inputs("dump", args.paths, captures=False)
    if refused is not None:
        return refused
    from decoders.dump import dump_lines, dump_objects, text_line, write_lines
    from decoders.dump_parallel import dump_parts, workers_for
    from decoders.log import list_segments

    if args.workers is not None and args.workers < 1:
        return fail("dump", "--workers must be at least 1", EXIT_USAGE)
    groups, types = set(args.group or ()), set(args.type or ())
    tally: dict = {}
    out = sys.stdout
    try:
        if workers_for(list_segments(args.paths), args.workers) > 1:
            out.flush()
            for copy in dump_parts(args.paths, args.format, groups, types, tally, args.workers):
                copy(out.buffer)
            out.buffer.flush()
        else:
            if args.format == "jsonl":
                lines = dump_lines(args.paths, groups, types, tally)
            else:
                lines = (text_line(obj) for obj in dump_objects(args.paths, groups, types, tally))
            write_lines(lines, out)
            out.flush()
    except BrokenPipeError:  # `offsetlake dump ... | head` is normal use
        _silence_stdout()
        return EXIT_OK
    except OSError as exc:   # unreadable file or directory: say which, no traceback
        return fail("dump", str(exc), EXIT_FAILED)
    if tally.get("recovered"):
        # Said only when it happened, so a clean dump keeps an empty stderr.
        print(f"offsetlake dump: {tally['records']} record(s) read, {tally['recovered']} of them "
              f"recovered by resynchronising after damage; {tally['unreadable']} unreadable "
              "unit(s)", file=sys.stderr)
    return EXIT_OK

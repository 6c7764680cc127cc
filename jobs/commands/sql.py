"""``offsetlake sql``: query the lake's tables and the ``sql/`` views by name.

Every Delta table directly under the lake directory is registered as a temporary view under its
directory name (``groups``, ``offsets``, ``raw_records`` ...) and every ``sql/<name>.sql`` as the
view ``<name>`` (:mod:`jobs.lake.views`), so queries read like SQL on tables. Without a query it
opens a prompt: statements end with ``;``, ``\\d`` lists the names, ``\\q`` (or end of input) quits.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from jobs.lake.views import lake_tables, register_lake
from jobs.runtime.config import load_config
from jobs.commands.inputs import EXIT_CODES_HELP

EXIT_CODES = EXIT_CODES_HELP  # jobs.cli puts it in this command's --help

FORMATS = ("table", "json", "csv")


def register_tables(spark, lake: Path) -> list[str]:
    """Register the lake's tables and the views; returns every name now queryable."""
    return register_lake(spark, lake).names()


def _json_value(value):
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if hasattr(value, "asDict"):
        return {k: _json_value(v) for k, v in value.asDict().items()}
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def write_rows(df, fmt: str, out=sys.stdout, limit: int | None = None) -> int:
    """Print a DataFrame in ``fmt``; returns the number of rows printed."""
    if fmt == "table":
        # show() prints a bounded number of rows; a table for a human is small by nature.
        df.show(n=limit or 1000, truncate=False)
        return -1
    columns = df.columns
    count = 0
    writer = csv.writer(out) if fmt == "csv" else None
    if writer:
        writer.writerow(columns)
    for row in (df.limit(limit) if limit else df).toLocalIterator():
        values = [_json_value(row[c]) for c in columns]
        if writer:
            writer.writerow(["" if v is None else (json.dumps(v) if isinstance(v, (dict, list)) else v)
                             for v in values])
        else:
            out.write(json.dumps(dict(zip(columns, values)), ensure_ascii=False) + "\n")
        count += 1
    return count



def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", nargs="?",
                        help="a Spark SQL query over the lake's tables and views, e.g. "
                             "\"select * from group_overview\"; none: an interactive prompt")
    parser.add_argument("--lake", help="lake directory (default: lake.path in conf/)")
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="table (default), json (one object per row) or csv")
    parser.add_argument("--limit", type=int, help="print at most this many rows")


PROMPT, MORE = "offsetlake> ", "        ...> "


def _statements(lines):
    """Statements ended by ``;`` from ``lines``; ``\\d``/``\\q`` pass through on their own."""
    buffer: list[str] = []
    for line in lines:
        stripped = line.strip()
        if not buffer and stripped.startswith("\\"):
            yield stripped
            continue
        buffer.append(line)
        if stripped.endswith(";"):
            text = "\n".join(buffer).strip().rstrip(";").strip()
            buffer = []
            if text:
                yield text
    if "".join(buffer).strip():
        yield "\n".join(buffer).strip()


def _input_lines(stdin):
    """Lines typed at the prompt; the prompt goes to stderr so stdout holds only results."""
    interactive = stdin.isatty()
    first = True
    while True:
        if interactive:
            sys.stderr.write(PROMPT if first else MORE)
            sys.stderr.flush()
        line = stdin.readline()
        if not line:
            return
        first = line.strip().endswith(";") or line.strip().startswith("\\")
        yield line.rstrip("\n")


def _execute(spark, text: str, fmt: str, names: list[str], limit: int | None) -> bool:
    from pyspark.errors import AnalysisException, ParseException

    try:
        df = spark.sql(text)
    except (AnalysisException, ParseException) as exc:
        print(f"offsetlake sql: {str(exc).splitlines()[0]}\n"
              f"tables and views: {', '.join(names)}", file=sys.stderr)
        return False
    write_rows(df, fmt, limit=limit)
    sys.stdout.flush()
    return True


def interactive(spark, names: list[str], fmt: str, limit: int | None, stdin=None) -> int:
    """The prompt; returns 0, or 1 when a statement failed and input was not a terminal."""
    stdin = stdin or sys.stdin
    failed = False
    if stdin.isatty():
        print(f"{len(names)} tables and views; statements end with ';', \\d lists them, "
              "\\q quits", file=sys.stderr)
    for statement in _statements(_input_lines(stdin)):
        if statement in ("\\q", "\\quit"):
            break
        if statement == "\\d":
            print("\n".join(names))
            continue
        failed |= not _execute(spark, statement, fmt, names, limit)
    return 1 if failed and not stdin.isatty() else 0


def run(args: argparse.Namespace) -> int:
    from jobs.runtime.session import get_spark

    from jobs.commands.inputs import (EXIT_EMPTY, EXIT_NO_PATH, EXIT_NO_SEGMENTS, EXIT_USAGE, fail,
                                      small_snapshot)

    cfg = load_config().with_lake(args.lake)
    lake = cfg.lake_path
    if not lake.exists():
        return fail("sql", f"{lake}: no such file or directory", EXIT_NO_PATH)
    if lake.is_dir() and not any(p for p in lake.iterdir() if p.name != ".offsetlake.lock"):
        return fail("sql", f"{lake}: empty directory, no tables yet; run `offsetlake run` first",
                    EXIT_EMPTY)
    if not lake_tables(lake):
        return fail("sql", f"no Delta tables in {lake}; run `offsetlake run` first",
                    EXIT_NO_SEGMENTS)
    spark = get_spark(cfg, app_name="offsetlake-sql", short=small_snapshot(cfg, None))
    names = register_tables(spark, cfg.lake_path)
    if args.query is None:
        return interactive(spark, names, args.format, args.limit)
    return 0 if _execute(spark, args.query, args.format, names, args.limit) else EXIT_USAGE

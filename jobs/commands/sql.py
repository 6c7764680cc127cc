"""``offsetlake sql``: query the lake's tables by name.

Every Delta table directly under the lake directory is registered as a temporary view under its
directory name (``groups``, ``offsets``, ``raw_records`` ...), so queries read like SQL on tables.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from jobs.runtime.config import load_config

FORMATS = ("table", "json", "csv")


def lake_tables(lake: Path) -> list[str]:
    """Names of the Delta tables in ``lake`` (directories holding a ``_delta_log``)."""
    if not lake.is_dir():
        return []
    return sorted(p.name for p in lake.iterdir() if (p / "_delta_log").is_dir())


def register_tables(spark, lake: Path) -> list[str]:
    names = lake_tables(lake)
    for name in names:
        spark.read.format("delta").load(str(lake.resolve() / name)).createOrReplaceTempView(name)
    return names


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

from jobs.commands.inputs import EXIT_CODES_HELP as EXIT_CODES  # shown in --help


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", help="a Spark SQL query over the lake's tables, e.g. "
                                      "\"select group_id, group_state from groups\"")
    parser.add_argument("--lake", help="lake directory (default: lake.path in conf/)")
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="table (default), json (one object per row) or csv")
    parser.add_argument("--limit", type=int, help="print at most this many rows")


def run(args: argparse.Namespace) -> int:
    from pyspark.errors import AnalysisException, ParseException

    from jobs.runtime.session import get_spark

    from jobs.commands.inputs import EXIT_EMPTY, EXIT_NO_PATH, EXIT_NO_SEGMENTS, EXIT_USAGE, fail

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
    spark = get_spark(cfg, app_name="offsetlake-sql")
    names = register_tables(spark, cfg.lake_path)
    try:
        df = spark.sql(args.query)
    except (AnalysisException, ParseException) as exc:
        print(f"offsetlake sql: {str(exc).splitlines()[0]}\n"
              f"tables in {cfg.lake_path}: {', '.join(names)}", file=sys.stderr)
        return EXIT_USAGE
    write_rows(df, args.format, limit=args.limit)
    return 0

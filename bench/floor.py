"""The floor under ``end_to_end_ratio``: what the first steps of every ``run`` cost against the copy.

Each floor runs in a process of its own, built like ``python -m bench``'s Spark part: session
start, then the same ingest (segments read and decoded once, staged) and the same table writes as
``offsetlake run``, but only some tables, then the plain copy in the same session:

* ``raw_records``: ingest, then ``raw_records`` alone (what the plain copy writes);
* ``bronze``: ingest, then ``raw_records``, ``records`` and ``quarantine``, every table a run
  writes before its replay.

``floor_ratio`` is (session start + that work) / (session start + copy), as ``end_to_end_ratio``
is for the whole run. A run writes these tables and then replays, so its ratio cannot come below
the ``bronze`` floor whatever the replay costs.

    python -m bench.floor SNAPSHOT raw_records|bronze     # one floor, JSON on stdout
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

FLOORS = ("raw_records", "bronze")


def measure_floor(snapshot: str, floor: str) -> dict:
    from bench.measure import plain_copy
    from jobs.lake import QUARANTINE, RAW_RECORDS, RECORDS
    from jobs.runtime.config import load_config
    from jobs.runtime.session import get_spark
    from jobs.stages.ingest import raw_records_rows, read_back, stage_snapshot, staging_dir
    from jobs.stages.pipeline import Writer, bronze

    work = Path(tempfile.mkdtemp(prefix="offsetlake-floor-"))
    lake = work / "lake"
    try:
        started = time.perf_counter()
        spark = get_spark(load_config(), app_name="offsetlake-bench-floor")
        session = time.perf_counter() - started
        started = time.perf_counter()
        staging = staging_dir(lake, "bench")
        staged = read_back(spark, stage_snapshot(spark, [snapshot], "bench", staging, decode=True,
                                                 progress=io.StringIO()))
        writer = Writer(spark, lake, "bench")
        try:
            if floor == "raw_records":
                writer.submit(RAW_RECORDS, raw_records_rows(staged.rows))
                tables = (RAW_RECORDS,)
            else:
                bronze(writer, staged)
                tables = (RAW_RECORDS, RECORDS, QUARANTINE)
            rows = {t: writer.rows(t) for t in tables}
        finally:
            writer.close()
            shutil.rmtree(staging, ignore_errors=True)
        work_seconds = time.perf_counter() - started
        copy = plain_copy(spark, lake, "bench")
        spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"floor": floor, "session_start": round(session, 2), "seconds": round(work_seconds, 2),
            "copy": round(copy, 2), "table_rows": rows,
            "floor_ratio": round((session + work_seconds) / (session + copy), 3)}


def floors(snapshot: Path) -> dict:
    """Both floors, each in a new process: ``{"raw_records": {...}, "bronze": {...}}``."""
    from bench.measure import module_json

    return {floor: module_json("bench.floor", str(snapshot), floor) for floor in FLOORS}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] not in FLOORS:
        print(__doc__, file=sys.stderr)
        return 2
    os.environ.setdefault("OFFSETLAKE_SPARK__MASTER", "local[2]")
    print(json.dumps(measure_floor(argv[0], argv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

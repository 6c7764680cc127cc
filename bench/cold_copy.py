"""The plain copy as a user runs it: a new process, a new Spark session (a JVM nothing has warmed
up), then ``raw_records`` of one snapshot copied to a new Delta table. Prints
``{"session_start": s, "copy": s}``; ``python -m bench`` runs it after its own ``run``.

    python -m bench.cold_copy LAKE SNAPSHOT_ID
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    from bench.measure import plain_copy
    from jobs.runtime.config import load_config
    from jobs.runtime.session import get_spark

    lake, snapshot_id = Path(argv[0]), argv[1]
    started = time.perf_counter()
    spark = get_spark(load_config(), app_name="offsetlake-bench-copy")
    session = time.perf_counter() - started
    copy = plain_copy(spark, lake, snapshot_id)
    spark.stop()
    print(json.dumps({"session_start": round(session, 2), "copy": round(copy, 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

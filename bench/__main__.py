"""``python -m bench --records N [--json PATH]``: throughput and memory of run, ingest and dump.

Everything is measured in one process on one generated snapshot (:mod:`bench.snapshot`, cached
under ``.cache/bench/``), so machine noise hits the pipeline and its baselines alike:

* ``pure_decode_records_per_s_per_core``: segment reader + ``decode_batch``, one core;
* ``run`` end to end (``offsetlake run``'s pipeline, session start included) against a plain
  Spark copy of the same raw rows to Delta (session start included): ``end_to_end_ratio``, the
  copy run in the same session after ``run`` (its JVM warmed up by the run);
  ``end_to_end_ratio_cold_copy``: the copy in a new process and session, as a user runs one
  (:mod:`bench.cold_copy`), so both sides pay for starting and warming up a JVM;
* ``audit_seconds`` and ``audit_ratio`` (audit / run): ``offsetlake audit --target-version all``
  on the lake the run wrote, in its own process as a user runs it (session start included);
* ``stage_seconds``: session start, ingest, decode, replay, copy;
* ``dump_records_per_s`` (``offsetlake dump``) and ``kafka_dump_log_records_per_s`` (Kafka's
  ``DumpLogSegments --offsets-decoder``, jars of the integration suite) on the same files;
* ``driver_peak_rss_mb`` and ``python_workers_peak_rss_mb`` during the Spark part;
* with ``--floor``, ``floor_ratio_raw_records`` and ``floor_ratio_bronze``: the same ratio for
  ingest plus ``raw_records`` alone, and plus every bronze table, each in a process of its own
  (:mod:`bench.floor`): no run that writes those tables comes below them.

``--table A.json B.json ...`` prints earlier results side by side (``make bench``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.measure import (RssSampler, cold_copy, kafka_dump, offsetlake_dump, plain_copy,
                           pure_decode)
from bench.snapshot import ensure_snapshot

ROOT = Path(__file__).resolve().parents[1]
ROWS = ("records", "end_to_end_ratio", "run_seconds", "audit_seconds", "audit_ratio",
        "copy_seconds", "end_to_end_ratio_cold_copy",
        "copy_cold_seconds", "floor_ratio_raw_records", "floor_ratio_bronze", "run_records_per_s",
        "ingest_records_per_s", "pure_decode_records_per_s_per_core", "dump_records_per_s",
        "kafka_dump_log_records_per_s", "driver_peak_rss_mb", "python_workers_peak_rss_mb")


def spark_part(snapshot: Path, work: Path, result: dict) -> None:
    from jobs.runtime.config import load_config
    from jobs.runtime.session import get_spark
    from jobs.stages.pipeline import run_pipeline

    lake = work / "lake"
    with RssSampler() as rss:
        started = time.perf_counter()
        spark = get_spark(load_config(), app_name="offsetlake-bench")
        session = time.perf_counter() - started
        started = time.perf_counter()
        report = run_pipeline(spark, lake, [str(snapshot)], "bench")
        run = time.perf_counter() - started
        copy = plain_copy(spark, lake, "bench")
        spark.stop()
    cold = cold_copy(lake, "bench")
    audit = audit_seconds(lake)
    records = report.ingest.records_read
    stages = {"session_start": session, **report.stage_seconds, "plain_copy": copy,
              "plain_copy_cold": cold["copy"], "session_start_cold_copy": cold["session_start"]}
    cold_seconds = cold["session_start"] + cold["copy"]
    result.update({
        "records": records, "reconciled": report.reconciled, "table_rows": report.table_rows,
        "run_seconds": session + run, "copy_seconds": session + copy,
        "end_to_end_ratio": (session + run) / (session + copy),
        "copy_cold_seconds": cold_seconds,
        "end_to_end_ratio_cold_copy": (session + run) / cold_seconds,
        "audit_seconds": round(audit, 2), "audit_ratio": audit / (session + run),
        "run_records_per_s": records / (session + run),
        "ingest_records_per_s": records / stages["ingest"],
        "driver_peak_rss_mb": round(rss.jvm_peak), "python_workers_peak_rss_mb": round(rss.workers_peak),
        "stage_seconds": {k: round(v, 2) for k, v in stages.items()}})


def audit_seconds(lake: Path) -> float:
    """``offsetlake audit --target-version all`` on the bench lake, as a user runs it: its own
    process and session, every release line judged, the findings written and printed."""
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "jobs.cli", "audit", "--lake", str(lake),
                           "--snapshot", "bench", "--target-version", "all", "--fail-on", "never",
                           "--format", "json"], cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"bench: the audit failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return seconds


def measure(records: int, skip_dump: bool, floor: bool = False) -> dict:
    snapshot = ensure_snapshot(records, ROOT / ".cache")
    print(f"bench: snapshot {snapshot}", file=sys.stderr)
    result: dict = {"snapshot": str(snapshot), "records_requested": records}
    done, seconds = pure_decode(snapshot)
    result["pure_decode_records_per_s_per_core"] = round(done / seconds)
    work = Path(tempfile.mkdtemp(prefix="offsetlake-bench-"))
    try:
        spark_part(snapshot, work, result)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if floor:
        from bench.floor import floors

        for name, found in floors(snapshot).items():
            result[f"floor_ratio_{name}"] = found["floor_ratio"]
            result["stage_seconds"][f"floor_{name}"] = found["seconds"]
            result["stage_seconds"][f"floor_{name}_copy"] = found["copy"]
    if not skip_dump:
        dump = offsetlake_dump(snapshot)
        kafka = kafka_dump(snapshot)
        result["dump_records_per_s"] = round(result["records"] / dump)
        result["kafka_dump_log_records_per_s"] = None if kafka is None else round(result["records"] / kafka)
        result["stage_seconds"].update({"dump": round(dump, 2),
                                        "kafka_dump_log": None if kafka is None else round(kafka, 2)})
    return result


def table(paths: list[str]) -> str:
    results = [json.loads(Path(p).read_text()) for p in paths]
    lines = ["measure".ljust(36) + "".join(f"{r.get('records', '?'):>16}" for r in results)]
    for row in ROWS[1:]:
        cells = []
        for r in results:
            value = r.get(row)
            cells.append(f"{value:>16.2f}" if isinstance(value, float) else f"{str(value):>16}")
        lines.append(row.ljust(36) + "".join(cells))
    stages = sorted({s for r in results for s in r.get("stage_seconds", {})})
    for stage in stages:
        lines.append(f"  {stage} s".ljust(36) + "".join(
            f"{str(r.get('stage_seconds', {}).get(stage)):>16}" for r in results))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--json", help="write the result object here too")
    parser.add_argument("--skip-dump", action="store_true", help="leave out the two dump timings")
    parser.add_argument("--floor", action="store_true",
                        help="also measure the ratio of ingest plus the bronze tables alone (bench.floor)")
    parser.add_argument("--table", nargs="+", metavar="JSON", help="print earlier results and exit")
    args = parser.parse_args(argv)
    if args.table:
        print(table(args.table))
        return 0
    os.environ.setdefault("OFFSETLAKE_SPARK__MASTER", "local[2]")
    result = measure(args.records, args.skip_dump, args.floor)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0 if result.get("reconciled") else 1


if __name__ == "__main__":
    sys.exit(main())

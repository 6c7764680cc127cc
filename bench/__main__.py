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
  (:mod:`bench.floor`): no run that writes those tables comes below them;
* ``run_lake_bytes``: bytes of the lake ``run`` wrote (every file under it but ``_staging``).

The ``incremental`` part (``--skip-incremental`` leaves it out): an incremental lake fed the
series of :mod:`bench.series` (the same snapshot as step 0, then 10 later snapshots of the same
log, each about 1% new records, older batches compacted away; cached under ``.cache/bench/``),
in a process and Spark session of its own: ``run_increment`` on step 0 into a new lake, then on
steps 1..10 one after another in that same session (so a step's time has no session start and
its JVM was warmed up by the steps before it):

* ``incremental_seconds``: the wall time of ``run_increment`` of each of steps 1..10;
  ``incremental_base_seconds`` that of step 0 (all of the snapshot into the empty lake) and
  ``incremental_session_start_seconds`` the session's start, neither of them in the ratios;
* ``incremental_ratio``: step 1's time / ``run_seconds`` (the full run, session start
  included); ``incremental_ratio_max`` and ``incremental_ratio_median``: the slowest step's, and
  the median step's, over steps 1..10 (step 1 is also the one that compacts the base: the base
  snapshot was never compacted, see ``incremental_steps``);
* ``lake_bytes_after_first`` and ``lake_bytes_after_all``: bytes of the incremental lake (every
  file under it but ``_staging``, old Delta versions included) after step 0 and after step 10;
  ``lake_bytes_ratio``: their ratio; ``full_lake_bytes_ratio_estimate``: what 11 full snapshots
  would cost against one, each as large as the first (11.0);
* ``incremental_steps``: per step, what the series changed (``series_*``: records added, batches
  and records removed, groups touched) and what ``run_increment`` reported (new and removed
  records, batches skipped, bytes read, groups replayed), its seconds, the Spark jobs it ran
  and the lake's bytes after it.

``--skip-audit`` and ``--skip-cold-copy`` leave out those two parts (and their keys).
``--table A.json B.json ...`` prints earlier results side by side (``make bench``).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.measure import (RssSampler, cold_copy, kafka_dump, offsetlake_dump, plain_copy,
                           pure_decode)
from bench.series import INFO, ensure_series, series_info, series_root, step_dirs
from bench.snapshot import ensure_snapshot

ROOT = Path(__file__).resolve().parents[1]
ROWS = ("records", "end_to_end_ratio", "run_seconds", "audit_seconds", "audit_ratio",
        "copy_seconds", "end_to_end_ratio_cold_copy",
        "copy_cold_seconds", "floor_ratio_raw_records", "floor_ratio_bronze", "run_records_per_s",
        "ingest_records_per_s", "pure_decode_records_per_s_per_core", "dump_records_per_s",
        "kafka_dump_log_records_per_s", "driver_peak_rss_mb", "python_workers_peak_rss_mb",
        "incremental_ratio", "incremental_ratio_max", "incremental_ratio_median",
        "incremental_seconds", "incremental_base_seconds", "incremental_session_start_seconds",
        "lake_bytes_after_first", "lake_bytes_after_all", "lake_bytes_ratio",
        "full_lake_bytes_ratio_estimate", "run_lake_bytes")


def spark_part(snapshot: Path, work: Path, result: dict, cold: bool = True,
               audit: bool = True) -> None:
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
    records = report.ingest.records_read
    stages = {"session_start": session, **report.stage_seconds, "plain_copy": copy}
    result.update({
        "records": records, "reconciled": report.reconciled, "table_rows": report.table_rows,
        "run_seconds": session + run, "copy_seconds": session + copy,
        "end_to_end_ratio": (session + run) / (session + copy),
        "run_records_per_s": records / (session + run),
        "ingest_records_per_s": records / stages["ingest"],
        "driver_peak_rss_mb": round(rss.jvm_peak), "python_workers_peak_rss_mb": round(rss.workers_peak),
        "run_lake_bytes": lake_bytes(lake)})
    if cold:
        found = cold_copy(lake, "bench")
        stages.update({"plain_copy_cold": found["copy"],
                       "session_start_cold_copy": found["session_start"]})
        cold_seconds = found["session_start"] + found["copy"]
        result.update({"copy_cold_seconds": cold_seconds,
                       "end_to_end_ratio_cold_copy": (session + run) / cold_seconds})
    if audit:
        seconds = audit_seconds(lake)
        result.update({"audit_seconds": round(seconds, 2), "audit_ratio": seconds / (session + run)})
    result["stage_seconds"] = {k: round(v, 2) for k, v in stages.items()}


def lake_bytes(lake: Path) -> int:
    """Bytes of every file under ``lake`` but its ``_staging`` directory (a job's staged rows)."""
    total = 0
    for top, dirs, files in os.walk(lake):
        if Path(top) == Path(lake):
            dirs[:] = [d for d in dirs if d != "_staging"]
        total += sum(os.lstat(os.path.join(top, f)).st_size for f in files)
    return total


def incremental_worker(root: Path) -> dict:
    """The incremental part's own process (``python -m bench --incremental-worker ROOT``): a new
    session, ``run_increment`` of every step of the series ``root`` into a new lake, in order."""
    from jobs.runtime.config import load_config
    from jobs.runtime.session import get_spark
    from jobs.stages.increment_run import run_increment

    work = Path(tempfile.mkdtemp(prefix="offsetlake-bench-incremental-"))
    lake = work / "lake"
    steps = []
    try:
        started = time.perf_counter()
        spark = get_spark(load_config(), app_name="offsetlake-bench-incremental")
        session = time.perf_counter() - started
        tracker = spark.sparkContext.statusTracker()
        for number, step in enumerate(step_dirs(root)):
            print(f"bench: incremental step {number}: {step}", file=sys.stderr)
            jobs = max(tracker.getJobIdsForGroup(None), default=-1)
            started = time.perf_counter()
            report = run_increment(spark, lake, [str(step)], snapshot_id=step.name)
            seconds = time.perf_counter() - started
            jobs = max(tracker.getJobIdsForGroup(None), default=-1) - jobs
            ingest = report.ingest
            steps.append({"step": number, "seconds": round(seconds, 2), "records": ingest.records,
                          "new_records": ingest.new_records,
                          "removed_records": ingest.removed_records,
                          "batches_skipped": ingest.batches_skipped,
                          "bytes_read": ingest.bytes_read, "bytes_total": ingest.bytes_total,
                          "groups_replayed": report.groups_replayed, "spark_jobs": jobs,
                          "lake_bytes": lake_bytes(lake)})
            print(f"bench: incremental step {number}: {seconds:.1f}s, {jobs} Spark job(s), "
                  f"{report.groups_replayed} group(s) replayed", file=sys.stderr)
        spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"session_start": round(session, 2), "steps": steps}


def worker_json(*args: str) -> dict:
    """``python -m bench args...`` in a process of its own, its stderr passed on as it comes;
    the JSON object of its last stdout line. A failure raises with the end of its stderr."""
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen([sys.executable, "-m", "bench", *args], cwd=ROOT, stdout=out,
                                stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        tail: collections.deque = collections.deque(maxlen=60)
        for line in proc.stderr:
            sys.stderr.write(line)
            tail.append(line)
        if proc.wait() != 0:
            raise RuntimeError(f"python -m bench {' '.join(args)} failed ({proc.returncode}):\n"
                               + "".join(tail))
        out.seek(0)
        return json.loads(out.read().strip().splitlines()[-1])


def incremental_part(records: int, result: dict) -> None:
    """The series (generated if not cached), then :func:`incremental_worker` in its own process;
    the ``incremental_*`` and ``lake_bytes_*`` keys of the module docstring."""
    cache = ROOT / ".cache"
    generated = not (series_root(records, cache) / INFO).is_file()
    started = time.perf_counter()
    root = ensure_series(records, cache)
    if generated:
        result["stage_seconds"]["series_generation"] = round(time.perf_counter() - started, 2)
    print(f"bench: series {root}", file=sys.stderr)
    found = worker_json("--incremental-worker", str(root))
    changes = series_info(root)["steps"]
    steps = [{**{f"series_{k}": change[k] for k in ("records_added", "batches_removed",
                                                     "records_removed", "groups_changed")},
              **step} for change, step in zip(changes, found["steps"])]
    later = [s["seconds"] for s in steps[1:]]
    run, first, last = result["run_seconds"], steps[0]["lake_bytes"], steps[-1]["lake_bytes"]
    result.update({
        "incremental_seconds": later,
        "incremental_base_seconds": steps[0]["seconds"],
        "incremental_session_start_seconds": found["session_start"],
        "incremental_ratio": later[0] / run,
        "incremental_ratio_max": max(later) / run,
        "incremental_ratio_median": statistics.median(later) / run,
        "lake_bytes_after_first": first, "lake_bytes_after_all": last,
        "lake_bytes_ratio": last / first,
        "full_lake_bytes_ratio_estimate": float(len(steps)),
        "incremental_steps": steps})


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


def measure(records: int, skip_dump: bool, floor: bool = False, incremental: bool = True,
            audit: bool = True, cold: bool = True) -> dict:
    snapshot = ensure_snapshot(records, ROOT / ".cache")
    print(f"bench: snapshot {snapshot}", file=sys.stderr)
    result: dict = {"snapshot": str(snapshot), "records_requested": records}
    done, seconds = pure_decode(snapshot)
    result["pure_decode_records_per_s_per_core"] = round(done / seconds)
    work = Path(tempfile.mkdtemp(prefix="offsetlake-bench-"))
    try:
        spark_part(snapshot, work, result, cold=cold, audit=audit)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if incremental:
        try:
            incremental_part(records, result)
        except Exception as exc:  # the other parts' results still count; the exit code says it
            print(f"bench: the incremental part failed: {exc}", file=sys.stderr)
            result["incremental_error"] = str(exc)[-4000:]
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
            if isinstance(value, list):     # per step: its range
                value = f"{min(value):.1f}..{max(value):.1f}" if value else "[]"
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
    parser.add_argument("--skip-incremental", action="store_true",
                        help="leave out the incremental lake's series (bench.series)")
    parser.add_argument("--skip-audit", action="store_true", help="leave out the audit timing")
    parser.add_argument("--skip-cold-copy", action="store_true",
                        help="leave out the plain copy in a process of its own")
    parser.add_argument("--table", nargs="+", metavar="JSON", help="print earlier results and exit")
    parser.add_argument("--incremental-worker", metavar="SERIES", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.table:
        print(table(args.table))
        return 0
    os.environ.setdefault("OFFSETLAKE_SPARK__MASTER", "local[2]")
    if args.incremental_worker:
        print(json.dumps(incremental_worker(Path(args.incremental_worker))))
        return 0
    result = measure(args.records, args.skip_dump, args.floor, incremental=not args.skip_incremental,
                     audit=not args.skip_audit, cold=not args.skip_cold_copy)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0 if result.get("reconciled") and "incremental_error" not in result else 1


if __name__ == "__main__":
    sys.exit(main())

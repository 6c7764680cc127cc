"""The measurements of ``python -m bench``, each a function of the snapshot (and the session).

Peak memory is sampled from ``/proc`` every half second: the driver JVM (the ``java`` child of
this process) and the sum of the PySpark worker processes under it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
KAFKA_TOOL = "org.apache.kafka.tools.DumpLogSegments"


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class RssSampler:
    """Peak RSS of the driver JVM and of all Python workers (summed), while running."""

    def __init__(self):
        self.jvm_peak = self.workers_peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _loop(self):
        while not self._stop.wait(0.5):
            tree, todo, jvm, workers = _children(), [os.getpid()], 0.0, 0.0
            while todo:
                pid = todo.pop()
                for child in tree.get(pid, ()):
                    todo.append(child)
                    cmd = _cmdline(child)
                    if "java" in cmd.split(" ", 1)[0]:
                        jvm += _rss_mb(child)
                    elif "pyspark" in cmd:
                        workers += _rss_mb(child)
            self.jvm_peak = max(self.jvm_peak, jvm)
            self.workers_peak = max(self.workers_peak, workers)


def segment_files(snapshot: Path) -> list[Path]:
    return sorted(snapshot.glob("__consumer_offsets-*/*.log"))


def pure_decode(snapshot: Path, limit: int = 400_000) -> tuple[int, float]:
    """Records/s of segment reading plus :func:`decoders.batch_decode.decode_batch`, one core,
    over the first ``limit`` data records (as the decode stage runs them, JSON of the 5% on)."""
    from decoders.batch_decode import decode_batch
    from decoders.log import RecordBatch, iter_segment

    done, keys, values = 0, [], []
    started = time.perf_counter()
    for path in segment_files(snapshot):
        for item in iter_segment(str(path)):
            if not isinstance(item, RecordBatch) or item.is_control:
                continue
            for record in item.records:
                keys.append(record.key)
                values.append(record.value)
            if len(keys) >= 8192:
                decode_batch(pa.array(keys, pa.binary()), pa.array(values, pa.binary()))
                done, keys, values = done + len(keys), [], []
            if done >= limit:
                return done, time.perf_counter() - started
    if keys:
        decode_batch(pa.array(keys, pa.binary()), pa.array(values, pa.binary()))
        done += len(keys)
    return done, time.perf_counter() - started


def plain_copy(spark, lake: Path, snapshot_id: str) -> float:
    """Seconds to copy the snapshot's ``raw_records`` rows to a new Delta table (the baseline)."""
    from jobs.lake import RAW_RECORDS, read_snapshot

    target = lake / "_bench_copy"
    shutil.rmtree(target, ignore_errors=True)
    started = time.perf_counter()
    read_snapshot(spark, lake, RAW_RECORDS, snapshot_id).write.format("delta").mode(
        "overwrite").partitionBy("snapshot_id").save(str(target))
    seconds = time.perf_counter() - started
    shutil.rmtree(target, ignore_errors=True)
    return seconds


def cold_copy(lake: Path, snapshot_id: str) -> dict:
    """:func:`plain_copy` in a process of its own (``bench.cold_copy``): a new JVM, as a user's
    copy job starts; ``{"session_start": s, "copy": s}``. The copy in the bench's own session runs
    after ``run`` in a JVM whose compiler has already compiled Spark's and Delta's hot code, the
    run's JIT work (about a fifth of its CPU at 2M) included in the run and not in that copy."""
    return module_json("bench.cold_copy", str(lake), snapshot_id)


def module_json(module: str, *args: str) -> dict:
    """``python -m module args...`` in a process of its own; the JSON object of its last line."""
    done = subprocess.run([sys.executable, "-m", module, *args],
                          check=True, capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(done.stdout.strip().splitlines()[-1])


def timed_command(command: list[str], env: dict | None = None) -> float:
    """Wall seconds of ``command`` with stdout discarded (it must succeed)."""
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, check=True, cwd=ROOT,
                   env={**os.environ, **(env or {})})
    return time.perf_counter() - started


def offsetlake_dump(snapshot: Path) -> float:
    return timed_command([sys.executable, "-m", "jobs.cli", "dump", str(snapshot)],
                         {"PYTHONPATH": str(ROOT)})


def kafka_dump(snapshot: Path) -> float | None:
    libs = ROOT / ".cache" / "kafka-4.3.1" / "libs"
    java = shutil.which("java")
    if not (libs / ".complete").is_file() or java is None:
        return None
    files = ",".join(str(p) for p in segment_files(snapshot))
    return timed_command([java, "-Xmx2g", "-cp", f"{libs}/*", KAFKA_TOOL, "--offsets-decoder",
                          "--files", files])

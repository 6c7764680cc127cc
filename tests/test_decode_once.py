"""Each record's bytes are decoded once per ``offsetlake run`` + ``offsetlake audit`` (issue 24):
the decode stage decodes every data record; the group replay, the run's fencing audit and the
downgrade audit of every target read what it kept.

Both commands run as a user runs them, in their own processes, with the decoder counted in every
Python process (the driver and Spark's workers: ``tests/support/count_decodes``), on the bundled
4.3.1 sample: the decoder's calls are exactly the snapshot's data records, each once."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from decoders.log.segment import iter_partition_dir
from decoders.log.types import RecordBatch

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "kafka-4.3.1"
COUNTER = ROOT / "tests" / "support" / "count_decodes"
sys.path.insert(0, str(COUNTER))
from sitecustomize import record_digest  # noqa: E402

pytestmark = pytest.mark.submit


def data_records(snapshot: Path) -> Counter:
    """The digest of each data record of the snapshot's segment files (markers are not decoded)."""
    found = Counter()
    for part in sorted(snapshot.glob("__consumer_offsets-*")):
        for _, item in iter_partition_dir(part, int(part.name.rsplit("-", 1)[1])):
            if isinstance(item, RecordBatch) and not item.is_control:
                found.update(record_digest(r.key, r.value) for r in item.records)
    return found


def decoded(log: Path) -> Counter:
    return Counter(line for f in log.glob("*.log") for line in f.read_text().split())


def extra(calls: Counter, records: Counter) -> dict[str, int]:
    """Decodes beyond one per record (by digest), and decodes of bytes no record has."""
    return {d: n - records[d] for d, n in calls.items() if n > records[d]}


def offsetlake(*args: str, log: Path) -> None:
    env = {**os.environ, "OFFSETLAKE_COUNT_DECODES": str(log),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(COUNTER), str(ROOT),
                                                       os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "jobs.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode in (0, 8), proc.stdout + proc.stderr


def test_run_then_audit_of_every_target_decodes_each_record_once(tmp_path):
    lake, log = tmp_path / "lake", tmp_path / "decodes"
    log.mkdir()
    expected = data_records(SAMPLE)
    assert sum(expected.values()) > 100

    offsetlake("run", str(SAMPLE), "--full", "--lake", str(lake), "--snapshot-id", "s1", log=log)
    assert extra(decoded(log), expected) == {}   # the replay, the fencing audit: none again
    assert decoded(log) == expected              # the decode stage: every data record, once
    offsetlake("audit", "--lake", str(lake), "--target-version", "all", log=log)
    assert extra(decoded(log), expected) == {}   # the audit of every target: none again
    assert decoded(log) == expected
    downgrade = list((lake / "downgrade_findings").rglob("*.parquet"))
    assert downgrade, "the audit wrote no downgrade findings"

"""40 zstd batches of one 48 MiB valid record each (under the 64 MiB bounds): ``offsetlake run``
completes, every record reaches the tables intact, and the peak resident memory of the whole
process tree (driver JVM and Python workers) is measured and written to the test's output."""

from __future__ import annotations

import hashlib
import json
import sys

from tests.faults.runs import PROJECT, cli_env
from tests.faults.memory import run_measured
from tests.faults.snapshots import huge_records_snapshot

COUNT, SIZE = 40, 48 << 20


def test_huge_valid_records_complete_with_bounded_memory(tmp_path, spark, record_property):
    from pyspark.sql import functions as F

    snapshot = huge_records_snapshot(tmp_path, COUNT, SIZE)
    lake = tmp_path / "lake"
    done, peak_kib = run_measured([sys.executable, "-m", "jobs.cli", "run", str(snapshot), "--full",
                                   "--lake", str(lake), "--snapshot-id", "huge"],
                                  cwd=PROJECT, env=cli_env())
    record_property("peak_rss_mib", peak_kib // 1024)
    print(f"\npeak RSS of the run's process tree: {peak_kib // 1024} MiB", file=sys.stderr)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{COUNT} records read (0 recovered after damage)" in done.stdout
    assert "0 unit(s) quarantined" in done.stdout

    raw = spark.read.format("delta").load(str(lake / "raw_records"))
    digests = {r["k"]: (r["n"], r["h"]) for r in raw.select(
        F.col("key").alias("k"), F.length("value").alias("n"), F.sha2("value", 256).alias("h")).collect()}
    from tests.faults.snapshots import huge_group_record
    key, value = huge_group_record("huge-00", SIZE)
    expected = (len(value), hashlib.sha256(value).hexdigest())
    assert len(digests) == COUNT and set(digests.values()) == {expected}
    groups = spark.read.format("delta").load(str(lake / "groups")).where("snapshot_id = 'huge'")
    assert sorted(r["group_id"] for r in groups.collect()) == [f"huge-{i:02d}" for i in range(COUNT)]
    members = spark.read.format("delta").load(str(lake / "members")).where("snapshot_id = 'huge'")
    assert members.count() == COUNT
    quarantine = spark.read.format("delta").load(str(lake / "quarantine")).where("snapshot_id = 'huge'")
    assert quarantine.collect() == []
    (tmp_path / "peak.json").write_text(json.dumps({"peak_rss_mib": peak_kib // 1024}))

"""Two ``offsetlake run`` on one lake with different snapshots at the same time: one writes, the
other is refused at once with a clear line and exit 7, leaving the lake untouched; run again, it
adds its snapshot, and each snapshot's tables equal a clean run's, isolated from the other's."""

from __future__ import annotations

from tests.faults.runs import assert_same_tables, kill_tree, lake_tables, rerun_here, start_run
from tests.faults.snapshots import copy_sample

EXIT_LAKE_BUSY = 7


def test_second_concurrent_run_is_refused_and_both_snapshots_end_complete(tmp_path, spark, clean):
    first, second = copy_sample(tmp_path / "a"), copy_sample(tmp_path / "b")
    lake = tmp_path / "lake"
    runs = [start_run(first, lake, "snap"), start_run(second, lake, "other")]
    try:
        results = [(p.communicate(timeout=600), p.returncode) for p in runs]
    finally:
        for p in runs:
            kill_tree(p)
    codes = sorted(code for _, code in results)
    assert codes == [0, EXIT_LAKE_BUSY], [err[-2000:] for (_, err), _ in results]
    refused = next(i for i, (_, code) in enumerate(results) if code == EXIT_LAKE_BUSY)
    (out, err), _ = results[refused]
    assert out == "" and len(err.strip().splitlines()) == 1 and "being written by" in err
    snapshot, snapshot_id = [(first, "snap"), (second, "other")][refused]
    again = rerun_here(snapshot, lake, snapshot_id)
    assert again.returncode == 0, again.stderr[-3000:]
    assert_same_tables(lake_tables(spark, lake, "snap"), clean)
    assert_same_tables(lake_tables(spark, lake, "other"), clean)

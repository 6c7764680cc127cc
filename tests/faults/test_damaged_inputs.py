"""Damaged inputs: ``offsetlake run`` reads every batch outside the damage, quarantines each damaged
span as exactly one unit, and every table equals a clean run of the snapshot without the damaged
batches (content, row by row).

One run carries every damage, each far from the others (partitions 1 and 2 of the sample hold 44
and 21 batches): lengths changed four ways, garbage between batches, a bad CRC, a zero-filled
batch and, last in its partition, a truncated append. Each CLI run starts a JVM of its own, so
one run instead of one per pair of damages keeps the suite within its time."""

from __future__ import annotations

import json
import os

from tests.faults.runs import assert_same_tables, lake_tables, run_cli, run_here
from tests.faults import snapshots as S

# (partition, batch index, damage): applied from the last batch of a partition to the first, so a
# damage never moves the batches a later one is placed by.
DAMAGES = [
    (2, 18, lambda s, p, k: S.set_length(s, p, k, lambda n: n - 10)),
    (2, 13, lambda s, p, k: S.set_length(s, p, k, lambda n: n + 10)),
    (2, 8, lambda s, p, k: S.set_length(s, p, k, lambda n: -n)),
    (2, 3, lambda s, p, k: S.set_length(s, p, k, lambda n: 2**31 - 1)),
    (1, 32, lambda s, p, k: S.truncate(s, p, k, 40)),
    (1, 24, lambda s, p, k: S.fill_batch(s, p, k, bytes)),
    (1, 16, S.flip_crc),
    (1, 8, lambda s, p, k: S.insert(s, p, k, os.urandom(777))),
]
# What a clean run reads instead: the damaged batches are not there (the garbage replaces none),
# and partition 1 ends where its append was cut.
LOST = [(2, 18), (2, 13), (2, 8), (2, 3), (1, 24), (1, 16)]
CUT = (1, 32)
REASONS = {"invalid_length", "bad_crc", "truncated_tail"}


def test_damage_loses_only_the_damaged_batches(tmp_path, spark):
    expected_snapshot = S.copy_sample(tmp_path / "expected")
    S.cut_at_batch(expected_snapshot, *CUT)
    for partition, k in LOST:
        S.drop_batch(expected_snapshot, partition, k)
    run_here(spark, expected_snapshot, tmp_path / "expected-lake")
    expected = lake_tables(spark, tmp_path / "expected-lake")

    snapshot = S.copy_sample(tmp_path / "damaged")
    spans = [damage(snapshot, partition, k) for partition, k, damage in DAMAGES]
    done = run_cli(snapshot, tmp_path / "lake")
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{len(DAMAGES)} unit(s) quarantined" in done.stdout and "reconciled" in done.stdout
    got = lake_tables(spark, tmp_path / "lake")
    assert_same_tables(got, expected, ignore=("quarantine",))
    units = [json.loads(r) for r in got["quarantine"]]
    assert sorted(u["length"] for u in units) == sorted(length for _, length in spans)
    assert {u["reason"] for u in units} <= REASONS

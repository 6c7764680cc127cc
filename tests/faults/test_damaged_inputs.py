"""Damaged inputs: ``offsetlake run`` reads every batch outside the damage, quarantines each damaged
span as exactly one unit, and every table equals a clean run of the snapshot without the damaged
batch (content, row by row)."""

from __future__ import annotations

import json
import os

import pytest

from tests.faults.runs import assert_same_tables, lake_tables, run_cli, run_here
from tests.faults import snapshots as S

P2_VICTIM = 10           # a batch in the middle of partition 2's segment
P1_VICTIM = 20           # and one in the middle of partition 1's


def _expected(tmp_path_factory, spark, name, change) -> dict:
    root = tmp_path_factory.mktemp(name)
    snapshot = S.copy_sample(root)
    change(snapshot)
    run_here(spark, snapshot, root / "lake")
    return lake_tables(spark, root / "lake")


@pytest.fixture(scope="module")
def without_p2_victim(tmp_path_factory, spark):
    return _expected(tmp_path_factory, spark, "minus-p2",
                     lambda s: S.drop_batch(s, 2, P2_VICTIM))


@pytest.fixture(scope="module")
def without_both_victims(tmp_path_factory, spark):
    def change(s):
        S.drop_batch(s, 2, P2_VICTIM)
        S.drop_batch(s, 1, P1_VICTIM)
    return _expected(tmp_path_factory, spark, "minus-both", change)


@pytest.fixture(scope="module")
def p1_cut(tmp_path_factory, spark):
    def change(s):
        S.drop_batch(s, 2, P2_VICTIM)
        S.cut_at_batch(s, 1, P1_VICTIM)
    return _expected(tmp_path_factory, spark, "cut-p1", change)


# Two damages per run (partition 2 and partition 1) keep the suite within its time.
CASES = {
    "huge_length+garbage_between_batches": (
        lambda s: [S.set_length(s, 2, P2_VICTIM, lambda n: 2**31 - 1),
                   S.insert(s, 1, P1_VICTIM, os.urandom(777))],
        "without_p2_victim", {"invalid_length", None}),
    "negative_length+bad_crc": (
        lambda s: [S.set_length(s, 2, P2_VICTIM, lambda n: -n),
                   S.flip_crc(s, 1, P1_VICTIM)],
        "without_both_victims", {"invalid_length", "bad_crc"}),
    "length_plus_10+zero_filled_batch": (
        lambda s: [S.set_length(s, 2, P2_VICTIM, lambda n: n + 10),
                   S.fill_batch(s, 1, P1_VICTIM, bytes)],
        "without_both_victims", {"invalid_length"}),
    "length_minus_10+truncated_append": (
        lambda s: [S.set_length(s, 2, P2_VICTIM, lambda n: n - 10),
                   S.truncate(s, 1, P1_VICTIM, 40)],
        "p1_cut", {"invalid_length", "truncated_tail"}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_damage_loses_only_the_damaged_batches(tmp_path, spark, request, case):
    damage, expected_name, reasons = CASES[case]
    snapshot = S.copy_sample(tmp_path)
    spans = damage(snapshot)
    done = run_cli(snapshot, tmp_path / "lake")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "2 unit(s) quarantined" in done.stdout and "reconciled" in done.stdout
    got = lake_tables(spark, tmp_path / "lake")
    expected = request.getfixturevalue(expected_name)
    assert_same_tables(got, expected, ignore=("quarantine",))
    units = [json.loads(r) for r in got["quarantine"]]
    assert sorted(u["length"] for u in units) == sorted(length for _, length in spans)
    assert {u["reason"] for u in units} <= {r for r in reasons if r} | {"invalid_length"}

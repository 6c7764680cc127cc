"""Compaction: a snapshot holding only the latest record per key replays to the same final state."""

from __future__ import annotations

import pytest

from jobs.replay import replay_partition
from support.scenarios import Scenario

FINAL_STATE = ("groups", "members", "member_assignments", "target_assignments", "offsets")


def busy_partition() -> Scenario:
    s = Scenario("g")
    (s.consumer_join("A", ["foo"]).compute_target({"A": {"foo": [0, 1, 2]}}).converge("A")
     .consumer_join("B", ["foo"], instance_id="i-b")
     .compute_target({"A": {"foo": [0, 1]}, "B": {"foo": [2]}})
     .converge("B").revoke("A").converge("A").converge("B")
     .offset_commit({"foo": {0: 10, 1: 11, 2: 12}})
     .transactional_commit(7, {"foo": {0: 20}})
     .transactional_commit(8, {"foo": {1: 21}}, outcome="ABORT")
     .offset_commit({"foo": {2: 30}})
     .static_leave("B").static_rejoin("B2", "i-b").converge("B2")
     .consumer_join("C", ["foo"]).session_timeout("C"))
    (s.group("h").classic_rebalance({"x": {"subscribe": ["bar"], "assignment": {"bar": [0]}}})
     .offset_commit({"bar": {0: 1}}).classic_rebalance({}).delete_group())
    s.group("k").offset_commit({"baz": {0: 5}}).txn_offset_commit(9, {"baz": {0: 6}})
    s.group("g").offset_commit({"foo": {0: 40}})
    return s


def final_state(view):
    tables = replay_partition(view.events(), topic_names=view.topic_names).tables
    return {name: tables[name] for name in FINAL_STATE}, tables["violations"]


def test_compacted_view_keeps_latest_record_per_key_with_original_offsets():
    s = busy_partition()
    full = s.events()
    compacted = s.compacted().events()
    assert len(compacted) < len(full)
    by_offset = {e.offset: e for e in full}
    assert all(by_offset[e.offset] == e for e in compacted)
    # the aborted transaction and its marker are gone, the open one (LSO) keeps everything after it
    aborted = [e.offset for e in full if e.producer_id == 8]
    assert aborted and not any(e.offset in aborted for e in compacted)
    open_start = min(e.offset for e in full if e.producer_id == 9)
    assert [e for e in full if e.offset >= open_start] == [
        e for e in compacted if e.offset >= open_start]


@pytest.mark.parametrize("drop_tombstones", [False, True])
def test_compacted_snapshot_replays_to_the_same_final_state(drop_tombstones):
    s = busy_partition()
    expected, violations = final_state(s)
    assert violations == []
    actual, _ = final_state(s.compacted(drop_tombstones=drop_tombstones))
    assert actual == expected
    assert [(r["group_id"], r["topic"], r["partition"], r["committed_offset"])
            for r in expected["offsets"]] == [
        ("g", "foo", 0, 40), ("g", "foo", 1, 11), ("g", "foo", 2, 30), ("k", "baz", 0, 5)]

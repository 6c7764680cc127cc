"""Classic groups and classic ⇄ consumer conversions (online upgrade, online downgrade)."""

from __future__ import annotations

from jobs.replay import replay_group
from support.scenarios import Scenario


def classic_group() -> Scenario:
    return Scenario("g").classic_rebalance(
        {"A": {"subscribe": ["foo"], "assignment": {"foo": [0, 1]}},
         "B": {"subscribe": ["foo"], "assignment": {"foo": [2]}, "instance_id": "i-b"}},
        generation=5)


def group_rows(result):
    return [(r["group_type"], r["group_state"], r["group_epoch"], r["target_assignment_epoch"],
             r["generation"], r["protocol_type"], r["protocol"], r["leader"])
            for r in result.tables["groups"]]


def member_rows(result):
    return [(r["member_id"], r["instance_id"], r["member_epoch"], r["previous_member_epoch"],
             r["member_state"], r["uses_classic_protocol"], r["session_timeout_ms"])
            for r in result.tables["members"]]


def assignment_rows(result):
    return [(r["member_id"], r["topic_name"], r["partition"], r["assignment_epoch"],
             r["assignment_epoch_source"]) for r in result.tables["member_assignments"]]


def test_classic_group_tables():
    s = classic_group()
    result = replay_group(s.events())
    assert result.violations == []
    assert group_rows(result) == [("classic", "Stable", None, None, 5, "consumer", "range", "A")]
    assert member_rows(result) == [("A", None, None, None, None, True, 45000),
                                   ("B", "i-b", None, None, None, True, 45000)]
    assert assignment_rows(result) == [("A", "foo", 0, 5, "classic"), ("A", "foo", 1, 5, "classic"),
                                       ("B", "foo", 2, 5, "classic")]
    s.classic_rebalance({})
    result = replay_group(s.events())
    assert group_rows(result) == [("classic", "Empty", None, None, 6, "consumer", None, None)]


def test_online_upgrade_batch_and_state():
    s = classic_group().upgrade_to_consumer("A")
    kinds = [(r.record_type, r.key.get("memberId"), r.value is None)
             for _, r in s.batches[-1].records]
    assert kinds == [(2, None, True), (5, "A", False), (5, "B", False), (3, None, False),
                     (7, "A", False), (7, "B", False), (6, None, False), (8, "A", False),
                     (8, "B", False), (5, "A", False)]
    assert len(s.batches[-1].records) == len(kinds)      # one atomic batch
    result = replay_group(s.events(), topic_names=s.topic_names)
    assert result.violations == []
    assert group_rows(result) == [("consumer", "Stable", 5, 5, None, None, None, None)]
    assert member_rows(result) == [("A", None, 5, 5, "STABLE", False, None),
                                   ("B", "i-b", 5, 5, "STABLE", True, 45000)]
    assert assignment_rows(result) == [("A", "foo", 0, 5, "explicit"), ("A", "foo", 1, 5, "explicit"),
                                       ("B", "foo", 2, 5, "explicit")]


def test_online_downgrade_batch_and_state():
    s = (classic_group().upgrade_to_consumer("A").metadata_change()
         .compute_target({"A": {"foo": [0]}, "B": {"foo": [1, 2]}})
         .revoke("A").converge("A").converge("B").downgrade_to_classic("A"))
    kinds = [(r.record_type, r.key.get("memberId"), r.value is None)
             for _, r in s.batches[-1].records]
    assert kinds == [(8, "A", True), (8, "B", True), (7, "A", True), (7, "B", True),
                     (6, None, True), (5, "A", True), (5, "B", True), (4, None, True),
                     (3, None, True), (2, None, False)]
    result = replay_group(s.events(), topic_names=s.topic_names)
    assert result.violations == []
    # generation = group epoch, leader null, assignments = the target assignment
    assert group_rows(result) == [("classic", "Stable", None, None, 6, "consumer", "range", None)]
    assert member_rows(result) == [("B", "i-b", None, None, None, True, 45000)]
    assert assignment_rows(result) == [("B", "foo", 1, 6, "classic"), ("B", "foo", 2, 6, "classic")]
    epochs = [(r["epoch_kind"], r["member_id"], r["previous_epoch"], r["epoch"])
              for r in result.tables["epochs"]]
    assert epochs == [
        ("generation", None, None, 5), ("group", None, 0, 5), ("target_assignment", None, 0, 5),
        ("member", "A", 0, 5), ("member", "B", 0, 5), ("group", None, 5, 6),
        ("target_assignment", None, 5, 6), ("member", "A", 5, 6), ("member", "B", 5, 6),
        ("member", "A", 6, -1), ("member", "B", 6, -1), ("target_assignment", None, 6, -1),
        ("generation", None, None, 6)]


def test_offsets_survive_conversions():
    s = classic_group().offset_commit({"foo": {0: 3}}).upgrade_to_consumer("A")
    s.offset_commit({"foo": {1: 4}})
    result = replay_group(s.events())
    assert [(r["partition"], r["committed_offset"]) for r in result.tables["offsets"]] == [
        (0, 3), (1, 4)]


def test_offline_upgrade_and_downgrade_of_empty_groups():
    s = Scenario("g").classic_rebalance({}).consumer_join("A", ["foo"])
    assert [(r.record_type, r.value is None) for _, r in s.batches[-1].records] == [
        (2, True), (5, False), (3, False)]
    result = replay_group(s.events())
    assert result.violations == []
    assert group_rows(result) == [("consumer", "Assigning", 1, 0, None, None, None, None)]
    s.leave("A").classic_rebalance({"x": {"subscribe": ["foo"], "assignment": {"foo": [0]}}})
    assert [(r.record_type, r.value is None) for _, r in s.batches[-1].records] == [
        (6, True), (4, True), (3, True), (2, False)]
    result = replay_group(s.events())
    assert result.violations == []
    assert group_rows(result) == [("classic", "Stable", None, None, 1, "consumer", "range", "x")]

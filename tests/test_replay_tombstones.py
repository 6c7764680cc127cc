"""Tombstone order: the coordinator's order loads cleanly; any other order is recorded as the
violation the coordinator would fail on, and replay carries on."""

from __future__ import annotations

from jobs.replay import replay_group
from support.scenarios import Scenario


def two_member_group() -> Scenario:
    return (Scenario("g").consumer_join("A", ["foo"]).consumer_join("B", ["foo"])
            .compute_target({"A": {"foo": [0]}, "B": {"foo": [1]}})
            .converge("A").converge("B").offset_commit({"foo": {0: 5, 1: 6}}))


def violation(rule, group, offset, message, member=None, severity="CRITICAL"):
    return {"rule_id": rule, "severity": severity, "group_id": group, "member_id": member,
            "message": message, "log_partition": 0, "log_offset": offset}


def test_coordinator_order_loads_cleanly_and_deletes_everything():
    s = two_member_group().leave("A").leave("B").delete_group()
    kinds = [(r.record_type, r.value is None) for _, r in s.batches[-1].records]
    # offsets first, then createGroupTombstoneRecords order for an empty consumer group
    assert kinds == [(1, True), (1, True), (6, True), (4, True), (3, True)]
    t = replay_group(s.events()).tables
    assert t["violations"] == []
    assert (t["groups"], t["members"], t["member_assignments"], t["target_assignments"],
            t["offsets"]) == ([], [], [], [], [])


def test_member_metadata_tombstone_before_assignment_tombstone():
    s = two_member_group()
    n = s.next_offset
    s.raw(5, {"groupId": "g", "memberId": "A"}, None)   # should come last
    s.raw(8, {"groupId": "g", "memberId": "A"}, None)   # member already gone: no-op
    s.raw(7, {"groupId": "g", "memberId": "A"}, None)
    result = replay_group(s.events())
    assert result.violations == [
        violation("CG-07", "g", n, "member metadata tombstone before the current-assignment "
                  "tombstone (member epoch 2); the coordinator would fail to load", "A"),
        violation("CG-07", "g", n, "member metadata tombstone while the member still has a "
                  "target assignment; the coordinator would fail to load", "A")]
    # carried on: A is removed and foo-0 released, B untouched
    assert [(r["member_id"], r["member_epoch"]) for r in result.tables["members"]] == [("B", 2)]
    assert result.group("g").ownership == {(s.topic_id("foo"), 1): ("B", 2)}
    assert [r["member_id"] for r in result.tables["target_assignments"]] == ["B"]


def test_group_tombstones_before_member_tombstones():
    s = two_member_group()
    n = s.next_offset
    s.raw(6, {"groupId": "g"}, None)
    s.raw(3, {"groupId": "g"}, None)
    s.raw(8, {"groupId": "g", "memberId": "A"}, None)    # group gone: ignored, as Kafka does
    result = replay_group(s.events())
    assert result.violations == [
        violation("CG-08", "g", n, "target assignment metadata tombstone while target members "
                  "['A', 'B'] remain; the coordinator would fail to load"),
        violation("CG-08", "g", n + 1, "group metadata tombstone while the group still has "
                  "members ['A', 'B'], target members ['A', 'B']; the coordinator would fail to "
                  "load, group removed")]
    assert result.tables["groups"] == [] and result.tables["members"] == []
    # offsets are keyed by group id only and survive the group
    assert [(r["partition"], r["committed_offset"]) for r in result.tables["offsets"]] == [
        (0, 5), (1, 6)]


def test_tombstones_for_missing_group_or_member_are_ignored():
    s = (Scenario("g").raw(8, {"groupId": "g", "memberId": "A"}, None)
         .raw(3, {"groupId": "g"}, None)
         .consumer_join("A", ["foo"]).raw(5, {"groupId": "g", "memberId": "Z"}, None))
    result = replay_group(s.events())
    assert result.violations == []
    assert [r["member_id"] for r in result.tables["members"]] == ["A"]

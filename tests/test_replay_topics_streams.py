"""Topic names resolved across the whole snapshot (not per group), and the streams fallback
epoch that Kafka does not clamp (TasksTupleWithEpochs), unlike consumer groups (Utils)."""

from __future__ import annotations

from support.scenarios import Scenario

from jobs.replay import replay_partition
from jobs.replay.topics import fill_topic_names, merge_topic_names


def test_a_group_that_never_commits_gets_topic_names_from_other_groups():
    s = (Scenario("h").consumer_join("C", ["foo"]).compute_target({"C": {"foo": [3]}}).converge("C")
         .group("txn").transactional_commit(4, {"foo": {0: 1}})       # topic id ZERO: no name
         .group("g").offset_commit({"foo": {0: 10}}))                  # 4.1+: id and name
    tables = replay_partition(s.events()).tables
    assert [(r["group_id"], r["topic_id"], r["topic_name"])
            for r in tables["member_assignments"] + tables["target_assignments"]] == [
        ("h", str(s.topic_id("foo")), "foo")] * 2
    alone = replay_partition(Scenario("h").consumer_join("C", ["foo"])
                             .compute_target({"C": {"foo": [3]}}).converge("C").events())
    assert [r["topic_name"] for r in alone.tables["member_assignments"]] == [None]


def test_fill_topic_names_only_fills_nulls():
    tables = {"member_assignments": [{"topic_id": "a", "topic_name": None},
                                     {"topic_id": "b", "topic_name": "kept"}],
              "offsets": [{"topic_id": "a", "topic_name": None}]}
    fill_topic_names(tables, merge_topic_names([{"a": "alpha"}, {"a": "other", "b": "beta"}]))
    assert tables == {"member_assignments": [{"topic_id": "a", "topic_name": "alpha"},
                                             {"topic_id": "b", "topic_name": "kept"}],
                      "offsets": [{"topic_id": "a", "topic_name": None}]}


def _streams_member(s: Scenario, epoch: int, epochs) -> None:
    task = {"subtopologyId": "0", "partitions": [0, 1]}
    if epochs is not None:
        task["assignmentEpochs"] = epochs
    s.raw(22, {"groupId": "st", "memberId": "m"}, {
        "memberEpoch": epoch, "previousMemberEpoch": 1, "state": 1, "activeTasks": [task],
        "standbyTasks": [], "warmupTasks": [], "activeTasksPendingRevocation": [],
        "standbyTasksPendingRevocation": [], "warmupTasksPendingRevocation": []})


def test_streams_fallback_keeps_a_negative_member_epoch():
    s = Scenario("st")
    _streams_member(s, -2, None)
    rows = replay_partition(s.events()).tables["member_assignments"]
    assert [(r["partition"], r["assignment_epoch"], r["assignment_epoch_source"]) for r in rows] == [
        (0, -2, "legacy_null"), (1, -2, "legacy_null")]
    s = Scenario("st")
    _streams_member(s, -2, [1])                       # length mismatch: same unclamped fallback
    rows = replay_partition(s.events()).tables["member_assignments"]
    assert [(r["assignment_epoch"], r["assignment_epoch_source"]) for r in rows] == [
        (-2, "length_mismatch"), (-2, "length_mismatch")]


def test_consumer_fallback_still_clamps_at_zero():
    s = Scenario("g", assignment_epochs=False).consumer_join("S", ["foo"], instance_id="i")
    s.compute_target({"S": {"foo": [0]}}).converge("S").static_leave("S")
    rows = replay_partition(s.events()).tables["member_assignments"]
    assert [(r["assignment_epoch"], r["assignment_epoch_source"]) for r in rows] == [
        (0, "legacy_null")]

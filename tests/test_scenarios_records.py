"""The scenario builder writes the records a 4.x coordinator writes, in its order, as real
segment files that our reader decodes back to the same events."""

from __future__ import annotations

import uuid

import pytest

from decoders.log.segment import iter_partition_dir
from jobs.replay import replay_partition
from support.partition_dirs import events_from_partition_dir
from support.scenarios import Scenario, ScenarioError

T0 = 1_700_000_000_000


def shapes(batch):
    return [(r.record_type, r.key.get("memberId"), r.value is None) for _, r in batch.records]


def test_join_target_heartbeat_leave_record_order():
    s = (Scenario("g").consumer_join("A", ["foo"]).consumer_join("B", ["foo"])
         .compute_target({"A": {"foo": [0, 1]}, "B": {"foo": [2]}}).converge("A").leave("B"))
    assert [shapes(b) for b in s.batches] == [
        [(5, "A", False), (3, None, False)],
        [(5, "B", False), (3, None, False)],
        [(7, "A", False), (7, "B", False), (6, None, False)],
        [(8, "A", False)],
        [(8, "B", True), (7, "B", True), (5, "B", True), (3, None, False)]]
    assert [(st.name, st.start_offset, st.end_offset) for st in s.steps] == [
        ("join A", 0, 2), ("join B", 2, 4), ("target assignment epoch 2", 4, 7),
        ("converge A", 7, 8), ("leave B", 8, 12)]


def test_decoded_values_are_what_the_coordinator_writes():
    s = (Scenario("g").consumer_join("A", ["foo", "bar"], instance_id="i-1", rack_id="r1")
         .compute_target({"A": {"foo": [1, 0], "bar": [0]}}).converge("A"))
    foo, bar = s.topic_id("foo"), s.topic_id("bar")
    records = [e.record for e in s.events()]
    assert [(r.type_name, r.key, r.value_version) for r in records] == [
        ("ConsumerGroupMemberMetadata", {"groupId": "g", "memberId": "A"}, 0),
        ("ConsumerGroupMetadata", {"groupId": "g"}, 0),
        ("ConsumerGroupTargetAssignmentMember", {"groupId": "g", "memberId": "A"}, 0),
        ("ConsumerGroupTargetAssignmentMetadata", {"groupId": "g"}, 0),
        ("ConsumerGroupCurrentMemberAssignment", {"groupId": "g", "memberId": "A"}, 0)]
    assert records[0].value == {
        "instanceId": "i-1", "rackId": "r1", "clientId": "consumer", "clientHost": "/127.0.0.1",
        "subscribedTopicNames": ["bar", "foo"], "subscribedTopicRegex": None,
        "rebalanceTimeoutMs": 300000, "serverAssignor": "uniform", "classicMemberMetadata": None}
    assert records[1].value == {"epoch": 1, "metadataHash": 0}
    assert records[2].value == {"topicPartitions": [{"topicId": bar, "partitions": [0]},
                                                    {"topicId": foo, "partitions": [0, 1]}]}
    assert records[4].value == {
        "memberEpoch": 1, "previousMemberEpoch": 0, "state": 0,
        "assignedPartitions": [
            {"topicId": bar, "partitions": [0], "assignmentEpochs": [1]},
            {"topicId": foo, "partitions": [0, 1], "assignmentEpochs": [1, 1]}],
        "partitionsPendingRevocation": []}


def test_offset_commits_and_transactions_on_disk(tmp_path):
    s = (Scenario("g", partition=7).offset_commit({"foo": {0: 5}}, metadata="m")
         .transactional_commit(42, {"foo": {1: 6}}, producer_epoch=3, outcome="ABORT"))
    root = s.write(tmp_path)
    part_dir = root / "__consumer_offsets-7"
    assert sorted(p.name for p in part_dir.iterdir()) == ["00000000000000000000.log"]
    batches = [item for _, item in iter_partition_dir(part_dir)]
    assert [(b.base_offset, b.producer_id, b.producer_epoch, b.is_transactional, b.is_control)
            for b in batches] == [(0, -1, -1, False, False), (1, 42, 3, True, False),
                                  (2, 42, 3, True, True)]
    events = list(events_from_partition_dir(part_dir))
    assert events == s.events()
    plain, txn, marker = events
    assert (plain.partition, plain.record.value_version, plain.record.value) == (7, 4, {
        "offset": 5, "leaderEpoch": -1, "metadata": "m", "commitTimestamp": T0,
        "topicId": s.topic_id("foo")})
    assert txn.record.value["topicId"] == uuid.UUID(int=0)   # TxnOffsetCommit writes ZERO
    assert (marker.control_type, marker.producer_id, marker.record) == ("ABORT", 42, None)


def test_legacy_offset_commit_version():
    s = Scenario("g", offset_commit_version=3).offset_commit({"foo": {0: 5}})
    assert s.events()[0].record.value == {"offset": 5, "leaderEpoch": -1, "metadata": "",
                                          "commitTimestamp": T0}


def test_several_groups_share_the_partition_and_prefixes_follow_steps():
    s = (Scenario("g").consumer_join("A", ["foo"])
         .group("h").offset_commit({"bar": {0: 1}})
         .group("g").consumer_join("B", ["foo"]))
    assert [(st.group_id, st.start_offset) for st in s.steps] == [("g", 0), ("h", 2), ("g", 3)]
    assert [e.offset for e in s.events(through_step=1)] == [0, 1, 2]
    assert [e.record.key.get("group", e.record.key.get("groupId")) for e in s.events()] == [
        "g", "g", "h", "g", "g"]
    assert [e.timestamp for e in s.events()] == [T0, T0, T0 + 1000, T0 + 2000, T0 + 2000]


def test_compacted_view_writes_sparse_offsets(tmp_path):
    s = Scenario("g").offset_commit({"foo": {0: 1}}).offset_commit({"foo": {0: 2}}).expire_offsets()
    view = s.compacted()
    assert [(e.offset, e.record.record_type, e.record.value is None) for e in view.events()] == [
        (2, 1, True), (3, 2, True)]
    view.write(tmp_path)
    assert list(events_from_partition_dir(tmp_path / "__consumer_offsets-0")) == view.events()
    assert s.compacted(drop_tombstones=True).events() == []


def test_expiry_deletes_an_empty_group_once_every_offset_expired():
    s = Scenario("g").offset_commit({"foo": {0: 1, 1: 2}}).expire_offsets([("foo", 0)])
    assert shapes(s.batches[-1]) == [(1, None, True)]
    s.expire_offsets()
    assert shapes(s.batches[-1]) == [(1, None, True), (2, None, True)]


def test_refused_steps():
    s = Scenario("g").consumer_join("A", ["foo"])
    with pytest.raises(ScenarioError, match="NON_EMPTY_GROUP"):
        s.delete_group()
    with pytest.raises(ScenarioError, match="nothing to revoke"):
        s.revoke("A")
    with pytest.raises(ScenarioError, match="unknown members"):
        s.compute_target({"Z": {"foo": [0]}})
    with pytest.raises(ScenarioError, match="not a static member"):
        s.static_leave("A")
    assert len(s.steps) == 1 and s.next_offset == 2     # refused steps write nothing


def test_written_snapshot_replays_like_the_events(tmp_path):
    s = (Scenario("g").consumer_join("A", ["foo"]).compute_target({"A": {"foo": [0]}})
         .converge("A").group("h").transactional_commit(3, {"bar": {0: 9}}))
    s.write(tmp_path)
    from_files = replay_partition(events_from_partition_dir(tmp_path / "__consumer_offsets-0"))
    assert from_files.tables == replay_partition(s.events()).tables

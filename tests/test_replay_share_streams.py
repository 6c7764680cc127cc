"""Share (KIP-932) and streams (KIP-1071) groups: typed, epochs and states derived."""

from __future__ import annotations

from jobs.replay import replay_group
from support.scenarios import Scenario


def test_share_group():
    s = Scenario("sg")
    foo = s.topic_id("foo")
    (s.raw(10, {"groupId": "sg", "memberId": "m"}, {"rackId": None, "clientId": "c",
                                                     "clientHost": "h", "subscribedTopicNames": ["foo"]})
     .raw(11, {"groupId": "sg"}, {"epoch": 1, "metadataHash": 0})
     .raw(13, {"groupId": "sg", "memberId": "m"},
          {"topicPartitions": [{"topicId": foo, "partitions": [0, 1]}]})
     .raw(12, {"groupId": "sg"}, {"assignmentEpoch": 1})
     .raw(14, {"groupId": "sg", "memberId": "m"}, {
         "memberEpoch": 1, "previousMemberEpoch": 0, "state": 0,
         "assignedPartitions": [{"topicId": foo, "partitions": [0, 1]}]}))
    t = replay_group(s.events(), topic_names=s.topic_names).tables
    assert t["violations"] == []
    assert [(r["group_type"], r["group_state"], r["group_epoch"], r["target_assignment_epoch"])
            for r in t["groups"]] == [("share", "Stable", 1, 1)]
    assert [(r["member_id"], r["topic_name"], r["partition"], r["assignment_epoch"],
             r["assignment_epoch_source"]) for r in t["member_assignments"]] == [
        ("m", "foo", 0, 1, "member_epoch"), ("m", "foo", 1, 1, "member_epoch")]


def test_streams_member_states_count_from_one():
    # streams.MemberState: STABLE 1, UNREVOKED_TASKS 2, UNRELEASED_TASKS 3 (0 is no state).
    def state_of(byte: int) -> str:
        s = Scenario("st").raw(22, {"groupId": "st", "memberId": "m"}, {
            "memberEpoch": 2, "previousMemberEpoch": 1, "state": byte, "activeTasks": [],
            "standbyTasks": [], "warmupTasks": [], "activeTasksPendingRevocation": [],
            "standbyTasksPendingRevocation": [], "warmupTasksPendingRevocation": []})
        return replay_group(s.events()).tables["members"][0]["member_state"]
    assert [state_of(b) for b in (1, 2, 3, 0)] == [
        "STABLE", "UNREVOKED_TASKS", "UNRELEASED_TASKS", "UNKNOWN"]


def test_streams_group():
    s = Scenario("st")
    member = {"instanceId": None, "rackId": None, "clientId": "c", "clientHost": "h",
              "rebalanceTimeoutMs": 1000, "topologyEpoch": 0, "processId": "p",
              "userEndpoint": None, "clientTags": []}
    tasks = [{"subtopologyId": "0", "partitions": [0, 1], "assignmentEpochs": [1, 2]}]
    (s.raw(19, {"groupId": "st", "memberId": "m"}, member)
     .raw(17, {"groupId": "st"}, {"epoch": 2, "metadataHash": 0})
     .raw(21, {"groupId": "st", "memberId": "m"},
          {"activeTasks": [{"subtopologyId": "0", "partitions": [0, 1]}], "standbyTasks": [],
           "warmupTasks": []})
     .raw(20, {"groupId": "st"}, {"assignmentEpoch": 2}))
    t = replay_group(s.events()).tables
    assert [(r["group_type"], r["group_state"]) for r in t["groups"]] == [("streams", "NotReady")]
    s.raw(22, {"groupId": "st", "memberId": "m"}, {
        "memberEpoch": 2, "previousMemberEpoch": 1, "state": 1, "activeTasks": tasks,
        "standbyTasks": [], "warmupTasks": [], "activeTasksPendingRevocation": [],
        "standbyTasksPendingRevocation": [], "warmupTasksPendingRevocation": []})
    s.raw(23, {"groupId": "st"}, {"epoch": 0, "subtopologies": []})
    t = replay_group(s.events()).tables
    assert t["violations"] == []
    assert [(r["group_type"], r["group_state"], r["group_epoch"]) for r in t["groups"]] == [
        ("streams", "Stable", 2)]
    assert [(r["member_id"], r["member_epoch"], r["member_state"]) for r in t["members"]] == [
        ("m", 2, "STABLE")]
    assert [(r["subtopology_id"], r["partition"], r["assignment_epoch"], r["topic_id"])
            for r in t["member_assignments"]] == [("0", 0, 1, None), ("0", 1, 2, None)]
    assert [(r["subtopology_id"], r["partition"]) for r in t["target_assignments"]] == [
        ("0", 0), ("0", 1)]

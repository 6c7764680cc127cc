"""Static members: temporary leave with epoch -2 keeps the partitions; the instance rejoins under a
new member id at epoch 0 and takes them over."""

from __future__ import annotations

from jobs.replay import replay_group
from support.scenarios import Scenario


def static_scenario() -> Scenario:
    return (Scenario("g").consumer_join("A", ["foo"], instance_id="i-1")
            .compute_target({"A": {"foo": [0, 1]}}).converge("A"))


def members(result):
    return [(r["member_id"], r["instance_id"], r["member_epoch"], r["previous_member_epoch"],
             r["member_state"]) for r in result.tables["members"]]


def assignments(result):
    return [(r["member_id"], r["topic_name"], r["partition"], r["assignment_epoch"],
             r["assignment_epoch_source"], r["is_pending_revocation"])
            for r in result.tables["member_assignments"]]


def test_static_leave_keeps_partitions_at_epoch_minus_two():
    s = static_scenario().static_leave("A")
    result = replay_group(s.events(), topic_names=s.topic_names)
    assert result.violations == []
    assert members(result) == [("A", "i-1", -2, 0, "STABLE")]
    # KIP-1251: a static member's leave resets the assignment epochs to 0
    assert assignments(result) == [("A", "foo", 0, 0, "explicit", False),
                                   ("A", "foo", 1, 0, "explicit", False)]
    foo = s.topic_id("foo")
    assert result.group("g").ownership == {(foo, 0): ("A", -2), (foo, 1): ("A", -2)}
    assert result.tables["groups"][0]["group_state"] == "Reconciling"


def test_static_rejoin_takes_over_under_a_new_member_id():
    s = static_scenario().static_leave("A").static_rejoin("A2", "i-1")
    kinds = [(r.record_type, r.key.get("memberId"), r.value is None)
             for _, r in s.batches[-1].records]
    assert kinds == [(8, "A", True), (7, "A", True), (5, "A", True),
                     (5, "A2", False), (7, "A2", False), (8, "A2", False)]
    result = replay_group(s.events(), topic_names=s.topic_names)
    assert result.violations == []
    assert members(result) == [("A2", "i-1", 0, 0, "STABLE")]
    assert assignments(result) == [("A2", "foo", 0, 0, "explicit", False),
                                   ("A2", "foo", 1, 0, "explicit", False)]
    assert result.group("g").static_members == {"i-1": "A2"}
    s.converge("A2")
    result = replay_group(s.events(), topic_names=s.topic_names)
    assert members(result) == [("A2", "i-1", 1, 0, "STABLE")]
    # retained partitions keep their assignment epoch (0 since the static leave)
    assert assignments(result) == [("A2", "foo", 0, 0, "explicit", False),
                                   ("A2", "foo", 1, 0, "explicit", False)]
    assert result.tables["groups"][0]["group_state"] == "Stable"
    member_epochs = [(r["member_id"], r["previous_epoch"], r["epoch"], r["log_offset"])
                     for r in result.tables["epochs"] if r["epoch_kind"] == "member"]
    assert member_epochs == [("A", 0, 1, 4), ("A", 1, -2, 5), ("A", -2, -1, 6),
                             ("A2", 0, 1, 12)]


def test_partition_of_a_static_member_at_minus_two_cannot_be_given_away():
    s = static_scenario().static_leave("A")
    n = s.next_offset
    s.raw(8, {"groupId": "g", "memberId": "B"}, {
        "memberEpoch": 1, "previousMemberEpoch": 0, "state": 0,
        "assignedPartitions": [{"topicId": s.topic_id("foo"), "partitions": [1]}],
        "partitionsPendingRevocation": []})
    result = replay_group(s.events())
    assert result.violations == [{
        "rule_id": "CG-01", "severity": "CRITICAL", "group_id": "g", "member_id": "B",
        "message": f"partition {s.topic_id('foo')}-1 already owned by member A at epoch -2; "
                   "the coordinator would fail to load", "log_partition": 0, "log_offset": n}]

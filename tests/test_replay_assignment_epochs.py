"""KIP-1251 AssignmentEpochs: explicit epochs (4.3+ writers) versus legacy null (older writers:
every partition takes the member epoch, clamped at 0) and the length-mismatch fallback."""

from __future__ import annotations

from jobs.replay import replay_group
from support.scenarios import Scenario


def rebalance(assignment_epochs: bool) -> Scenario:
    """A owns foo-0..2 at epoch 1, then gives foo-2 to B at epoch 2."""
    return (Scenario("g", assignment_epochs=assignment_epochs)
            .consumer_join("A", ["foo"], instance_id="i-a")
            .compute_target({"A": {"foo": [0, 1, 2]}}).converge("A")
            .consumer_join("B", ["foo"])
            .compute_target({"A": {"foo": [0, 1]}, "B": {"foo": [2]}}))


def rows(result):
    return [(r["member_id"], r["partition"], r["assignment_epoch"], r["assignment_epoch_source"],
             r["is_pending_revocation"]) for r in result.tables["member_assignments"]]


def test_explicit_epochs_keep_the_epoch_a_partition_was_assigned_at():
    s = rebalance(True).revoke("A")
    assert rows(replay_group(s.events())) == [
        ("A", 0, 1, "explicit", False), ("A", 1, 1, "explicit", False),
        ("A", 2, 1, "explicit", True)]
    s.converge("A").converge("B")
    assert rows(replay_group(s.events())) == [
        ("A", 0, 1, "explicit", False), ("A", 1, 1, "explicit", False),
        ("B", 2, 2, "explicit", False)]


def test_legacy_null_epochs_take_the_member_epoch():
    s = rebalance(False).revoke("A")
    record = s.events()[-1].record
    assert record.value["assignedPartitions"][0]["assignmentEpochs"] == []  # tag absent: the default
    assert rows(replay_group(s.events())) == [
        ("A", 0, 1, "legacy_null", False), ("A", 1, 1, "legacy_null", False),
        ("A", 2, 1, "legacy_null", True)]
    s.converge("A").converge("B")
    assert rows(replay_group(s.events())) == [
        ("A", 0, 2, "legacy_null", False), ("A", 1, 2, "legacy_null", False),
        ("B", 2, 2, "legacy_null", False)]


def test_legacy_null_epochs_of_a_static_member_at_minus_two_clamp_to_zero():
    s = rebalance(False).static_leave("A")
    assert rows(replay_group(s.events())) == [
        ("A", 0, 0, "legacy_null", False), ("A", 1, 0, "legacy_null", False),
        ("A", 2, 0, "legacy_null", False)]


def test_length_mismatch_falls_back_to_the_member_epoch_and_is_reported():
    s = Scenario("g")
    foo = s.topic_id("foo")
    s.raw(8, {"groupId": "g", "memberId": "A"}, {
        "memberEpoch": 3, "previousMemberEpoch": 2, "state": 0,
        "assignedPartitions": [{"topicId": foo, "partitions": [0, 1], "assignmentEpochs": [1]}],
        "partitionsPendingRevocation": []})
    result = replay_group(s.events())
    assert rows(result) == [("A", 0, 3, "length_mismatch", False),
                            ("A", 1, 3, "length_mismatch", False)]
    assert result.violations == [{
        "rule_id": "CG-10", "severity": "HIGH", "group_id": "g", "member_id": "A",
        "message": f"AssignmentEpochs length differs from Partitions for {foo}; fell back to the "
                   "member epoch", "log_partition": 0, "log_offset": 0}]

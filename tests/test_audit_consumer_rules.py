"""Consumer-group rules CG-01..CG-12 on scenarios: each with a trigger and a near miss, asserting
rule id, group, member and log position."""

from __future__ import annotations

from support.findings import audit, audit_one, hits
from support.scenarios import Scenario


def two_members() -> Scenario:
    """g: A owns foo-0..2 at epoch 2, B joined (target foo-3) and owns nothing yet."""
    return (Scenario("g").consumer_join("A", ["foo"]).consumer_join("B", ["foo"])
            .compute_target({"A": {"foo": [0, 1, 2]}, "B": {"foo": [3]}}).converge("A"))


def current(s: Scenario, member: str, epoch: int, assigned, pending=(), *, state: int = 0,
            epochs=None, previous: int = 0) -> int:
    """Append a hand-built type-8 record; returns its offset."""
    foo = s.topic_id("foo")
    at = s.next_offset

    def entry(ps, es):
        return [{"topicId": foo, "partitions": list(ps),
                 "assignmentEpochs": list(es if es is not None else [epoch] * len(ps))}] if ps else []
    s.raw(8, {"groupId": "g", "memberId": member}, {
        "memberEpoch": epoch, "previousMemberEpoch": previous, "state": state,
        "assignedPartitions": entry(assigned, epochs), "partitionsPendingRevocation": entry(pending, None)})
    return at


def test_cg01_partition_owned_by_two_members():
    s = two_members()
    current(s, "B", 2, [3])
    assert hits(audit(s), "CG-01") == []
    s = two_members()
    at = current(s, "B", 2, [2, 3])
    assert hits(audit(s), "CG-01") == [("g", "B", at)]


def test_cg02_partition_both_assigned_and_pending():
    s = two_members()
    current(s, "A", 2, [0, 1], [2], state=1)
    assert hits(audit(s), "CG-02") == []
    s = two_members()
    at = current(s, "A", 2, [0, 1, 2], [2], state=1)
    assert hits(audit(s), "CG-02") == [("g", "A", at)]


def test_cg03_member_epoch_ahead_of_the_target():
    s = two_members()
    current(s, "A", 2, [0, 1, 2])
    assert hits(audit(s), "CG-03") == []
    s = two_members()
    at = current(s, "A", 5, [0, 1, 2], epochs=[2, 2, 2])
    assert hits(audit(s), "CG-03") == [("g", "A", at)]


def test_cg04_impossible_member_epochs():
    s = (Scenario("g").consumer_join("S", ["foo"], instance_id="i-1")
         .compute_target({"S": {"foo": [0]}}).converge("S").static_leave("S"))
    assert hits(audit(s), "CG-04") == []                       # -2 for a static member is fine
    s = two_members()
    at = current(s, "A", -2, [0, 1, 2], epochs=[0, 0, 0], previous=2)
    assert hits(audit(s), "CG-04") == [("g", "A", at)]
    s = two_members()
    at = current(s, "A", 2, [0, 1, 2], previous=3)
    assert hits(audit(s), "CG-04") == [("g", "A", at)]


def test_cg05_state_contradicts_partitions():
    s = (two_members().metadata_change()
         .compute_target({"A": {"foo": [0, 1]}, "B": {"foo": [2, 3]}}).revoke("A"))
    assert hits(audit(s), "CG-05") == []                       # UNREVOKED with pending: fine
    s = two_members()
    at = current(s, "A", 2, [0, 1, 2], state=1)
    assert hits(audit(s), "CG-05") == [("g", "A", at)]


def test_cg06_partition_in_two_targets():
    s = two_members()
    foo = s.topic_id("foo")
    s.raw(7, {"groupId": "g", "memberId": "B"}, {"topicPartitions": [{"topicId": foo, "partitions": [3]}]})
    assert hits(audit(s), "CG-06") == []
    at = s.next_offset
    s.raw(7, {"groupId": "g", "memberId": "B"}, {"topicPartitions": [{"topicId": foo, "partitions": [2, 3]}]})
    assert hits(audit(s), "CG-06") == [("g", "B", at)]


def test_cg07_member_records_out_of_step():
    s = two_members()
    foo = s.topic_id("foo")
    assert hits(audit(s), "CG-07") == []
    at = s.next_offset
    s.raw(7, {"groupId": "g", "memberId": "Z"}, {"topicPartitions": [{"topicId": foo, "partitions": [9]}]})
    assert hits(audit(s), "CG-07") == [("g", "Z", at)]
    s = two_members()
    at = s.next_offset
    s.raw(5, {"groupId": "g", "memberId": "A"})                # metadata tombstone first: load fails
    found = [f for f in audit(s) if f["rule_id"] == "CG-07"]
    # the replay's load-failure check, and the target left behind for a removed member
    assert ("A", at, "critical") in {(f["member_id"], f["log_offset"], f["severity"]) for f in found}


def test_cg08_group_removed_while_it_has_members():
    s = two_members().leave("A").leave("B").delete_group()
    assert hits(audit(s), "CG-08") == []
    s = two_members()
    at = s.next_offset
    s.raw(3, {"groupId": "g"})
    assert hits(audit(s), "CG-08") == [("g", None, at)]


def test_cg09_epoch_regressions():
    s = two_members().leave("A").leave("B").delete_group().consumer_join("A", ["foo"])
    assert hits(audit(s), "CG-09") == []                       # a re-created group starts over
    s = two_members().metadata_change()
    at = s.next_offset
    s.raw(3, {"groupId": "g"}, {"epoch": 1})
    assert hits(audit(s), "CG-09") == [("g", None, at)]
    s = two_members()
    at = current(s, "A", 2, [0, 1, 2], epochs=[1, 2, 2])       # retained foo-0 changed epoch
    assert hits(audit(s), "CG-09") == [("g", "A", at)]


def test_cg10_assignment_epochs_out_of_range():
    s = two_members()
    current(s, "A", 2, [0, 1, 2], epochs=[2, 1, 2])
    assert hits(audit(s), "CG-10") == []
    s = two_members()
    at = current(s, "A", 2, [0, 1, 2], epochs=[3, 2, 2])
    assert hits(audit(s), "CG-10") == [("g", "A", at)]
    s = two_members()
    at = current(s, "A", 2, [0, 1, 2], epochs=[2, 2])          # length mismatch (replay check)
    assert hits(audit(s), "CG-10") == [("g", "A", at)]


def test_cg11_partition_handed_over_within_one_epoch():
    s = (two_members().metadata_change()
         .compute_target({"A": {"foo": [0, 1]}, "B": {"foo": [2, 3]}})
         .revoke("A").converge("A").converge("B"))
    assert hits(audit(s), "CG-11") == []                       # B takes foo-2 at a newer epoch
    s = two_members()
    current(s, "A", 2, [0, 1], epochs=[2, 2])
    at = current(s, "B", 2, [2, 3], epochs=[2, 2])
    assert hits(audit(s), "CG-11") == [("g", "B", at)]


def test_cg12_static_member_gone_longer_than_the_session_timeout():
    s = (Scenario("g").consumer_join("S", ["foo"], instance_id="i-1")
         .compute_target({"S": {"foo": [0]}}).converge("S"))
    at = s.next_offset
    s.static_leave("S")
    left = s.events()[-1].timestamp
    assert hits(audit_one(s, snapshot_time_ms=left + 10_000), "CG-12") == []
    assert hits(audit_one(s, snapshot_time_ms=left + 60_000), "CG-12") == [("g", "S", at)]


def test_cg10_records_without_assignment_epochs_are_a_notice_only_under_kip1251():
    s = (Scenario("g", assignment_epochs=False).consumer_join("A", ["foo"])
         .compute_target({"A": {"foo": [0]}}).converge("A"))
    assert hits(audit(s), "CG-10") == []                       # a 4.2 snapshot: strict regime
    found = [f for f in audit(s, regime="relaxed") if f["rule_id"] == "CG-10"]
    assert [(f["member_id"], f["log_offset"], f["severity"], f["verdict"]) for f in found] == [
        ("A", s.steps[-1].start_offset, "info", "notice")]

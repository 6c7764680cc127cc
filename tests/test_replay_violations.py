"""Where the coordinator would refuse to load, replay records the violation and carries on."""

from __future__ import annotations

from decoders.codec import UnknownRecord
from jobs.replay import ReplayEvent, replay_group
from support.scenarios import Scenario


def violation(rule, offset, message, member=None, severity="CRITICAL", group="g"):
    return {"rule_id": rule, "severity": severity, "group_id": group, "member_id": member,
            "message": message, "log_partition": 0, "log_offset": offset}


def test_double_ownership():
    s = (Scenario("g").consumer_join("A", ["foo"]).compute_target({"A": {"foo": [0, 1, 2]}})
         .converge("A"))
    foo = s.topic_id("foo")
    n = s.next_offset
    s.raw(8, {"groupId": "g", "memberId": "B"}, {
        "memberEpoch": 1, "previousMemberEpoch": 0, "state": 0,
        "assignedPartitions": [{"topicId": foo, "partitions": [2, 3], "assignmentEpochs": [1, 1]}],
        "partitionsPendingRevocation": []})
    result = replay_group(s.events(), topic_names=s.topic_names)
    assert result.violations == [violation(
        "CG-01", n, f"partition {foo}-2 already owned by member A at epoch 1; the coordinator "
        "would fail to load", "B")]
    # carried on: both records are kept in the member tables, the index names the later owner
    assert [(r["member_id"], r["partition"]) for r in result.tables["member_assignments"]] == [
        ("A", 0), ("A", 1), ("A", 2), ("B", 2), ("B", 3)]
    assert result.group("g").ownership[(foo, 2)] == ("B", 1)


def test_partition_both_assigned_and_pending_in_one_member():
    s = Scenario("g")
    foo = s.topic_id("foo")
    s.raw(8, {"groupId": "g", "memberId": "A"}, {
        "memberEpoch": 1, "previousMemberEpoch": 0, "state": 1,
        "assignedPartitions": [{"topicId": foo, "partitions": [0]}],
        "partitionsPendingRevocation": [{"topicId": foo, "partitions": [0]}]})
    assert replay_group(s.events()).violations == [violation(
        "CG-02", 0, f"partition {foo}-0 listed twice in one member's assignment", "A")]


def test_consumer_record_after_a_classic_group():
    s = Scenario("g").classic_rebalance({"A": {"subscribe": ["foo"], "assignment": {"foo": [0]}}})
    s.raw(3, {"groupId": "g"}, {"epoch": 5})
    result = replay_group(s.events())
    assert result.violations == [violation(
        "MG-01", 1, "consumer record for a live classic group (protocol type 'consumer'); the "
        "coordinator would fail to load, replaced by a new consumer group")]
    assert [(r["group_type"], r["group_epoch"], r["member_count"])
            for r in result.tables["groups"]] == [("consumer", 5, 0)]


def test_simple_group_is_silently_replaced_by_a_consumer_group():
    s = Scenario("g").offset_commit({"foo": {0: 7}}).consumer_join("A", ["foo"])
    result = replay_group(s.events())
    assert result.violations == []
    assert [(r["group_type"], r["group_state"], r["group_epoch"])
            for r in result.tables["groups"]] == [("consumer", "Assigning", 1)]
    assert [r["committed_offset"] for r in result.tables["offsets"]] == [7]


def test_classic_record_replacing_a_live_consumer_group():
    s = Scenario("g").consumer_join("A", ["foo"])
    s.raw(2, {"group": "g"}, {"protocolType": "consumer", "generation": 3, "protocol": "range",
                              "leader": None, "currentStateTimestamp": -1, "members": []},
          version=3)
    result = replay_group(s.events())
    assert result.violations == [violation(
        "MG-01", 2, "classic GroupMetadata replaces a live consumer group (group epoch 1, "
        "1 members)")]
    assert [(r["group_type"], r["generation"], r["group_state"])
            for r in result.tables["groups"]] == [("classic", 3, "Empty")]


def test_classic_tombstone_removing_a_live_consumer_group():
    s = Scenario("g").consumer_join("A", ["foo"])
    s.raw(2, {"group": "g"}, None)
    result = replay_group(s.events())
    assert result.violations == [violation(
        "MG-01", 2, "classic GroupMetadata tombstone removes a live consumer group (group epoch 1, "
        "1 members)")]
    assert result.tables["groups"] == []


def test_near_miss_a_classic_tombstone_of_a_classic_group_is_no_violation():
    s = Scenario("g").classic_rebalance({"A": {"subscribe": ["foo"], "assignment": {"foo": [0]}}})
    s.raw(2, {"group": "g"}, None)
    assert replay_group(s.events()).violations == []


def test_share_record_for_an_offset_created_simple_group():
    s = Scenario("sg").offset_commit({"foo": {0: 7}})
    s.raw(11, {"groupId": "sg"}, {"epoch": 1, "metadataHash": 0})
    assert [v["rule_id"] for v in replay_group(s.events()).violations] == ["MG-01"]
    # near miss: a consumer group replaces the simple group, as every release from 4.0 does
    c = Scenario("g").offset_commit({"foo": {0: 7}}).consumer_join("A", ["foo"])
    assert replay_group(c.events()).violations == []


def test_unknown_record_type_is_skipped():
    events = [ReplayEvent(0, 0, 1, record=UnknownRecord(99, b"\x00\x63", b"\x00\x00")),
              *Scenario("g").offset_commit({"foo": {0: 1}}).events()]
    events[1:] = [ReplayEvent(0, 1, e.timestamp, record=e.record) for e in events[1:]]
    result = replay_group(events)
    assert result.violations == [violation(
        "UNKNOWN_RECORD_TYPE", 0, "record type 99 unknown to this reader; skipped as the "
        "coordinator's loader does", severity="INFO", group=None)]
    assert [r["committed_offset"] for r in result.tables["offsets"]] == [1]

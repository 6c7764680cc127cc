"""Classic-group rules (CL-01..04), conversions and mixed groups (MG-01..03) and the replay's
own checks (RP-01, RP-02): each with a trigger and a near miss."""

from __future__ import annotations

from support.findings import audit, hits
from support.scenarios import Scenario

from decoders.codec import UnknownRecord
from jobs.audits.engine import audit_group
from jobs.replay import ReplayEvent


def member(member_id: str, owned=(), assigned=(), generation_id: int = -1) -> dict:
    def topics(ps):
        return [{"topic": "foo", "partitions": sorted(ps)}] if ps else []
    return {"memberId": member_id, "groupInstanceId": None, "clientId": "c", "clientHost": "/h",
            "rebalanceTimeout": 300_000, "sessionTimeout": 45_000,
            "subscription": {"version": 3, "topics": ["foo"], "userData": None,
                             "ownedPartitions": topics(owned), "generationId": generation_id,
                             "rackId": None},
            "assignment": {"version": 3, "assignedPartitions": topics(assigned), "userData": None}}


def classic(s: Scenario, members: list[dict], *, generation: int = 2, leader: str = "A") -> int:
    at = s.next_offset
    s.raw(2, {"group": "c"}, {"protocolType": "consumer", "generation": generation,
                              "protocol": "cooperative-sticky", "leader": leader,
                              "currentStateTimestamp": -1, "members": members}, version=3)
    return at


def test_cl01_partition_reported_owned_by_two_members():
    s = Scenario("c")
    classic(s, [member("A", [0], [0], 1), member("B", [1], [1], 1)])
    assert hits(audit(s), "CL-01") == []
    at = classic(s, [member("A", [0], [0], 1), member("B", [0, 1], [1], 0)], generation=3)
    assert hits(audit(s), "CL-01") == [("c", "B", at)]          # B: the older generation


def test_cl02_handover_without_revocation():
    s = Scenario("c")
    classic(s, [member("A", [0, 1], [0], 1), member("B", [], [], 1)])   # revocation round
    assert hits(audit(s), "CL-02") == []
    at = classic(s, [member("A", [0], [0], 1), member("B", [], [1], 1)], generation=3)
    assert hits(audit(s), "CL-02") == []
    at = classic(s, [member("A", [0, 1], [0], 2), member("B", [], [1], 2)], generation=4)
    assert hits(audit(s), "CL-02") == [("c", "B", at)]


def test_cl02_near_miss_a_stale_claim_is_not_an_owner():
    # A's claim on foo-1 is from generation 1 while B reports generation 2: the sticky assignor
    # ignores it (a stale claimant, CL-01's business), so giving foo-1 to B needs no revocation.
    s = Scenario("c")
    classic(s, [member("A", [0, 1], [0], 1), member("B", [], [], 1)])
    at = classic(s, [member("A", [1], [0], 1), member("B", [], [1], 2)], generation=3)
    assert hits(audit(s), "CL-02") == []
    classic(s, [member("A", [1], [0], 2), member("B", [], [1], 2)], generation=4)
    assert hits(audit(s), "CL-02") == [("c", "B", at + 1)]


def test_cl03_partition_assigned_twice():
    s = Scenario("c")
    classic(s, [member("A", [], [0]), member("B", [], [1])])
    assert hits(audit(s), "CL-03") == []
    at = classic(s, [member("A", [], [0]), member("B", [], [0, 1])], generation=3)
    assert hits(audit(s), "CL-03") == [("c", "B", at)]


def test_cl04_generation_and_leader():
    s = (Scenario("c").classic_rebalance({"A": {"subscribe": ["foo"], "assignment": {"foo": [0]}}})
         .classic_rebalance({"A": {"subscribe": ["foo"], "assignment": {"foo": [0, 1]}}}))
    assert hits(audit(s), "CL-04") == []
    at = classic(s, [member("A", [], [0])], generation=1)
    assert hits(audit(s), "CL-04") == [("c", None, at)]
    s = Scenario("c")
    at = classic(s, [member("A", [], [0])], leader="Z")
    assert hits(audit(s), "CL-04") == [("c", None, at)]


def test_mg01_consumer_record_for_a_live_classic_group():
    s = Scenario("g").offset_commit({"foo": {0: 7}}).consumer_join("A", ["foo"])
    assert hits(audit(s), "MG-01") == []                        # a simple group is replaced
    s = Scenario("g").classic_rebalance({"A": {"subscribe": ["foo"], "assignment": {"foo": [0]}}})
    at = s.next_offset
    s.raw(3, {"groupId": "g"}, {"epoch": 5})
    assert hits(audit(s), "MG-01") == [("g", None, at)]


def test_mg02_conversion_shapes():
    s = (Scenario("g").classic_rebalance({"A": {"subscribe": ["foo"], "assignment": {"foo": [0]}}},
                                         generation=4)
         .upgrade_to_consumer("B", ["foo"]).downgrade_to_classic("B"))
    assert hits(audit(s), "MG-02") == []                        # both conversions as Kafka writes
    s = Scenario("g").classic_rebalance({"A": {"subscribe": ["foo"], "assignment": {"foo": [0]}}},
                                        generation=4)
    s.raw(2, {"group": "g"})
    at = s.next_offset
    s.raw(3, {"groupId": "g"}, {"epoch": 9})
    assert hits(audit(s), "MG-02") == [("g", None, at)]


def test_mg03_offsets_outliving_their_group():
    s = (Scenario("g").classic_rebalance({"A": {"subscribe": ["foo"], "assignment": {"foo": [0]}}})
         .offset_commit({"foo": {0: 3}}).classic_rebalance({}).delete_group())
    assert hits(audit(s), "MG-03") == []                        # DeleteGroups: offsets first
    s = (Scenario("g").classic_rebalance({"A": {"subscribe": ["foo"], "assignment": {"foo": [0]}}})
         .offset_commit({"foo": {0: 3}}).classic_rebalance({}))
    at = s.next_offset
    s.raw(2, {"group": "g"})
    assert hits(audit(s), "MG-03") == [("g", None, at)]


def test_rp01_unknown_record_type():
    events = [ReplayEvent(0, 0, 1, record=UnknownRecord(99, b"\x00\x63", b"\x00\x00"))]
    assert hits(audit_group(events), "RP-01") == [(None, None, 0)]
    assert hits(audit(Scenario("g").offset_commit({"foo": {0: 1}})), "RP-01") == []


def test_rp02_producer_id_without_the_transactional_flag():
    key, value = {"group": "g", "topic": "foo", "partition": 0}, {
        "offset": 1, "leaderEpoch": -1, "metadata": "", "commitTimestamp": 1}
    s = Scenario("g").raw(1, key, value, version=3, producer_id=5, transactional=True)
    assert hits(audit(s), "RP-02") == []
    at = s.next_offset
    s.raw(1, key, value, version=3, producer_id=6, transactional=False)
    assert hits(audit(s), "RP-02") == [("g", None, at)]

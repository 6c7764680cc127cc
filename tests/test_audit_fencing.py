"""Fencing inferred from offset commits: OF-01, OF-02, OF-03, OF-05, TX-01..03, WIN-01, the
two regimes and Kafka's validators; each rule with a trigger and a near miss."""

from __future__ import annotations

from support.findings import audit, audit_one, hits, verdicts
from support.scenarios import Scenario

from jobs.audits.validators import (
    ILLEGAL_GENERATION,
    RELAXED,
    STALE_MEMBER_EPOCH,
    STRICT,
    accepted_client_epochs,
    commit_error,
    combine_regimes,
    detect_regime,
    regime_for,
)
from jobs.replay import replay_group


def stable(**options) -> Scenario:
    """g: A owns foo-0..2 at epoch 1 (offsets 0-4)."""
    return (Scenario("g", **options).consumer_join("A", ["foo", "bar"])
            .compute_target({"A": {"foo": [0, 1, 2]}}).converge("A"))


def handover(commit_in_gap: bool = False) -> Scenario:
    """A gives foo-2 to B: revoke at epoch 1, release at epoch 2, B takes it at epoch 2."""
    s = (stable().consumer_join("B", ["foo"])
         .compute_target({"A": {"foo": [0, 1]}, "B": {"foo": [2]}}).revoke("A").converge("A"))
    if commit_in_gap:
        s.offset_commit({"foo": {2: 50}})
    return s.converge("B")


def test_of01_commit_for_a_partition_nobody_owns():
    s = stable().offset_commit({"foo": {1: 10}})
    assert hits(audit(s), "OF-01") == []                      # near miss: A owns foo-1
    at = s.next_offset
    s.offset_commit({"foo": {5: 10}})
    found = [f for f in audit(s) if f["rule_id"] == "OF-01"]
    assert [(f["group_id"], f["member_id"], f["log_offset"], f["topic"], f["partition"],
             f["severity"], f["verdict"]) for f in found] == [
        ("g", None, at, "foo", 5, "high", "violation")]


def test_of01_on_an_unsubscribed_topic_is_medium():
    s = stable()
    at = s.next_offset
    s.offset_commit({"other": {0: 1}})
    assert [(f["rule_id"], f["log_offset"], f["severity"]) for f in audit(s)
            if f["rule_id"] == "OF-01"] == [("OF-01", at, "medium")]


def test_of01_in_a_compacted_range_is_partial():
    s = stable().metadata_change()       # supersedes the first group-epoch record (offset 1)
    at = s.next_offset
    s.offset_commit({"foo": {5: 10}})
    assert verdicts(audit(s), "OF-01") == ["violation"]
    assert hits(audit(s, compacted=True), "OF-01") == [("g", None, at)]
    assert verdicts(audit(s, compacted=True), "OF-01") == ["partial"]


def test_of02_commit_between_release_and_acquisition():
    assert hits(audit(handover()), "OF-02") == []            # near miss: nobody commits in between
    s = handover(commit_in_gap=True)
    gap = s.steps[-2]                                          # the commit step
    found = [f for f in audit(s) if f["rule_id"] == "OF-02"]
    assert [(f["group_id"], f["log_offset"], f["partition"]) for f in found] == [
        ("g", gap.start_offset, 2)]
    assert found[0]["evidence_log_offsets"] == [gap.start_offset - 1, gap.start_offset,
                                                s.steps[-1].start_offset]
    assert hits(audit(s), "OF-01") == []


def test_of02_commit_after_the_new_owner_acquired_is_fine():
    s = handover().offset_commit({"foo": {2: 50}})
    assert hits(audit(s), "OF-02") == [] and hits(audit(s), "OF-01") == []


def test_of03_offset_going_back_is_graded():
    s = stable().offset_commit({"foo": {0: 10}})
    forward = s.offset_commit({"foo": {0: 12}})
    assert hits(audit(forward), "OF-03") == []                 # near miss: forward
    rewind = s.next_offset
    s.offset_commit({"foo": {0: 5}})
    s.offset_commit({"foo": {0: 7}})                           # near miss: forward again
    assert [(f["log_offset"], f["severity"]) for f in audit(s) if f["rule_id"] == "OF-03"] == [
        (rewind, "medium")]

    empty = Scenario("s").offset_commit({"foo": {0: 9}})
    at_empty = empty.next_offset
    empty.offset_commit({"foo": {0: 3}})
    assert [(f["group_id"], f["log_offset"], f["severity"]) for f in audit(empty)
            if f["rule_id"] == "OF-03"] == [("s", at_empty, "info")]


def test_of03_late_commit_from_a_previous_owner_is_high():
    s = stable().offset_commit({"foo": {2: 40}})
    s = (s.consumer_join("B", ["foo"]).compute_target({"A": {"foo": [0, 1]}, "B": {"foo": [2]}})
         .revoke("A").converge("A").converge("B"))
    at = s.next_offset
    s.offset_commit({"foo": {2: 30}})
    found = [f for f in audit(s) if f["rule_id"] == "OF-03"]
    assert [(f["group_id"], f["member_id"], f["log_offset"], f["severity"]) for f in found] == [
        ("g", "B", at, "high")]


def test_of03_same_owner_after_an_epoch_bump_is_its_own_rewind():
    # A keeps foo-0 through the rebalance that brings B in; its epoch moves, its ownership does not.
    s = stable().offset_commit({"foo": {0: 40}})
    s = (s.consumer_join("B", ["foo"]).compute_target({"A": {"foo": [0, 1]}, "B": {"foo": [2]}})
         .revoke("A").converge("A").converge("B"))
    at = s.next_offset
    s.offset_commit({"foo": {0: 30}})
    found = [f for f in audit(s) if f["rule_id"] == "OF-03"]
    assert [(f["group_id"], f["member_id"], f["log_offset"], f["severity"]) for f in found] == [
        ("g", "A", at, "medium")]
    assert "epoch bump" in found[0]["message"]


def test_of05_classic_commit_outside_the_generation_assignment():
    s = Scenario("c").classic_rebalance({"m1": {"subscribe": ["foo"], "assignment": {"foo": [0]}}})
    s.offset_commit({"foo": {0: 3}})                           # near miss: assigned
    assert hits(audit(s), "OF-05") == []
    at = s.next_offset
    s.offset_commit({"foo": {1: 3}})
    assert hits(audit(s), "OF-05") == [("c", None, at)]
    assert [f["severity"] for f in audit(s) if f["rule_id"] == "OF-05"] == ["medium"]


def test_tx03_transactional_commit_for_an_unowned_partition():
    s = stable().transactional_commit(7, {"foo": {1: 3}})     # near miss: A owns foo-1
    assert hits(audit(s), "TX-03") == []
    at = s.next_offset
    s.transactional_commit(8, {"foo": {4: 3}})
    assert hits(audit(s), "TX-03") == [("g", None, at)]
    assert hits(audit(s), "OF-01") == []


def test_tx01_hanging_transaction():
    s = stable()
    at = s.next_offset
    s.txn_offset_commit(9, {"foo": {0: 1}})
    started = s.events()[-1].timestamp
    assert hits(audit_one(s, snapshot_time_ms=started + 5 * 60_000), "TX-01") == []
    assert hits(audit_one(s, snapshot_time_ms=started + 20 * 60_000), "TX-01") == [("g", None, at)]


def test_tx02_commit_marker_that_installs_nothing():
    s = Scenario("t").txn_offset_commit(5, {"foo": {0: 1}}).end_txn(5)  # near miss
    assert hits(audit(s), "TX-02") == []
    s = Scenario("t").txn_offset_commit(5, {"foo": {0: 1}}).offset_commit({"foo": {0: 2}})
    at = s.next_offset
    s.end_txn(5)
    assert hits(audit(s), "TX-02") == [("t", None, at)]


def test_win01_lagging_commit_window_only_under_kip1251():
    s = handover()
    a_record = s.steps[-2].start_offset                          # A converges to epoch 2
    found = [(f["member_id"], f["log_offset"], f["partition"]) for f in audit(s)
             if f["rule_id"] == "WIN-01"]
    assert found == [("A", a_record, 0), ("A", a_record, 1)]   # B's foo-2: window 0, none
    assert hits(audit(s, regime=STRICT), "WIN-01") == []
    assert hits(audit(stable()), "WIN-01") == []              # near miss: window 0


def test_regime_is_detected_from_assignment_epochs():
    assert detect_regime(stable().events()) == RELAXED
    assert detect_regime(stable(assignment_epochs=False).events()) == STRICT
    assert hits(audit(Scenario("g", assignment_epochs=False).consumer_join("A", ["foo"])
                      .compute_target({"A": {"foo": [0]}}).converge("A").metadata_change()
                      .compute_target({"A": {"foo": [0, 1]}}).converge("A")), "WIN-01") == []


def streams_member_at(epoch: int, assignment_epochs: list[int] | None) -> Scenario:
    tasks = [{"subtopologyId": "0", "partitions": [0, 1], "assignmentEpochs": assignment_epochs}]
    return Scenario("st", assignment_epochs=False).consumer_join("A", ["foo"]).raw(
        22, {"groupId": "st", "memberId": "m"}, {
            "memberEpoch": epoch, "previousMemberEpoch": epoch - 1, "state": 0,
            "activeTasks": tasks, "standbyTasks": [], "warmupTasks": [],
            "activeTasksPendingRevocation": [], "standbyTasksPendingRevocation": [],
            "warmupTasksPendingRevocation": []})


def test_regime_is_chosen_per_group_type():
    # A 4.2 writer puts assignment epochs on streams tasks only: its streams groups are fenced by
    # assignment epochs (StreamsGroup.validateOffsetCommit, 4.2), its consumer groups strictly.
    mixed = detect_regime(streams_member_at(2, [1, 2]).events())
    assert mixed == "consumer=strict,streams=relaxed"
    assert (regime_for(mixed, "consumer"), regime_for(mixed, "streams")) == (STRICT, RELAXED)
    assert detect_regime(streams_member_at(2, None).events()) == STRICT     # near miss
    # a 4.3 writer (type-8 epochs) is also a 4.2 one: both types relaxed, said once
    assert combine_regimes(True, False) == RELAXED
    assert regime_for(RELAXED, "streams") == RELAXED


def _member(scenario, member_id="A", group_id="g"):
    return replay_group(scenario.events()).group(group_id).members[member_id]


def test_validators_follow_kafka_in_both_regimes():
    s = handover()
    a = _member(s)                                   # epoch 2, foo-0/1 at assignment epoch 1
    foo = s.topic_id("foo")
    assert commit_error(a, (foo, 0), 2, STRICT) is None
    assert commit_error(a, (foo, 0), 1, STRICT) == STALE_MEMBER_EPOCH
    assert commit_error(a, (foo, 0), 1, RELAXED) is None
    assert commit_error(a, (foo, 0), 0, RELAXED) == STALE_MEMBER_EPOCH   # older than assignment
    assert commit_error(a, (foo, 2), 1, RELAXED) == STALE_MEMBER_EPOCH   # revoked: not held
    assert commit_error(a, (foo, 2), 2, RELAXED) is None                 # equal epoch: anything
    assert commit_error(a, (foo, 0), 3, RELAXED) == STALE_MEMBER_EPOCH   # newer than the broker
    a.uses_classic_protocol = True
    assert commit_error(a, (foo, 0), 3, RELAXED) == ILLEGAL_GENERATION
    assert accepted_client_epochs(a, (foo, 0), RELAXED) == [1, 2]
    assert accepted_client_epochs(a, (foo, 0), STRICT) == [2]
    assert accepted_client_epochs(a, (foo, 2), RELAXED) == [2]


def streams_group() -> Scenario:
    """st: member m holds active tasks 0_0 and 0_1 (subtopology 0 reads foo, subtopology 1 the
    repartition topic st-rep) at epoch 2."""
    s = Scenario("st")
    s.raw(23, {"groupId": "st"}, {"epoch": 0, "subtopologies": [{
        "subtopologyId": "0", "sourceTopics": ["foo"], "sourceTopicRegex": [],
        "stateChangelogTopics": [], "repartitionSinkTopics": ["st-rep"], "repartitionSourceTopics": [],
        "copartitionGroups": []}, {
        "subtopologyId": "1", "sourceTopics": [], "sourceTopicRegex": [],
        "stateChangelogTopics": [], "repartitionSinkTopics": [],
        "repartitionSourceTopics": [{"name": "st-rep", "partitions": 2, "replicationFactor": -1,
                                     "topicConfigs": []}],
        "copartitionGroups": []}]})
    s.raw(22, {"groupId": "st", "memberId": "m"}, {
        "memberEpoch": 2, "previousMemberEpoch": 1, "state": 0,
        "activeTasks": [{"subtopologyId": "0", "partitions": [0, 1], "assignmentEpochs": [1, 2]}],
        "standbyTasks": [], "warmupTasks": [], "activeTasksPendingRevocation": [],
        "standbyTasksPendingRevocation": [], "warmupTasksPendingRevocation": []})
    return s


def test_streams_commits_to_a_repartition_topic_are_checked_against_its_subtopology():
    # StreamsTopology.sourceTopicMap holds repartition source topics too: st-rep is subtopology 1,
    # whose tasks nobody holds, so a commit for it is a commit of an unowned task.
    s = streams_group()
    at = s.next_offset
    s.offset_commit({"st-rep": {0: 5}})
    assert hits(audit(s), "OF-01") == [("st", None, at)]
    assert hits(audit(streams_group().offset_commit({"bar": {0: 5}})), "OF-01") == []  # near miss:
    # a topic outside the topology gives no subtopology to correlate with


def test_streams_commits_are_checked_against_active_tasks():
    s = streams_group().offset_commit({"foo": {1: 5}})
    found = audit(s)
    assert hits(found, "OF-01") == []                          # near miss: task 0_1 is m's
    assert [(f["member_id"], f["partition"], f["topic_id"]) for f in found
            if f["rule_id"] == "WIN-01"] == [("m", 0, "0")]     # task 0_0 assigned at epoch 1
    at = s.next_offset
    s.offset_commit({"foo": {7: 5}})
    assert hits(audit(s), "OF-01") == [("st", None, at)]

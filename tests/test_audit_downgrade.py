"""Downgrade-readiness rules DU-1..DU-6: for each, a log that triggers it and a near miss.

Logs are written as real segment files (scenario builder, or raw bytes through the batch writer
for what no codec writes); assertions name rule, class, partition, group and log offset.
"""

from __future__ import annotations

import struct

import pytest

from decoders.codec import encode_key, encode_value
from decoders.log.writer import encode_batch
from jobs.audits.downgrade import audit_facts
from support.partition_dirs import facts_from_partition_dir
from jobs.audits.downgrade_targets import parse_target
from jobs.audits.downgrade_verdict import aggregate, verdict_lines
from jobs.audits.registry import RULES
from support.scenarios import Scenario


def facts_of(log, tmp_path):
    log.write(tmp_path)
    return facts_from_partition_dir(tmp_path / f"__consumer_offsets-{log.partition}")


def hits(facts, target, rule=None, klass=None):
    """(rule, class, partition, group, offset) of every finding on ``target``."""
    return sorted(((f.rule_id, f.klass, f.partition, f.group_id, f.offset)
                   for f in audit_facts(facts, [target])
                   if (rule is None or f.rule_id == rule) and (klass is None or f.klass == klass)),
                  key=lambda hit: tuple("" if x is None else x for x in hit))


def consumer_group(partition: int = 3) -> Scenario:
    """A KIP-848 group that joined, got its assignment and committed (4.3 records)."""
    return (Scenario("cg", partition=partition)
            .consumer_join("A", ["foo"]).compute_target({"A": {"foo": [0, 1]}}).converge("A")
            .offset_commit({"foo": {0: 10}}))


def raw_log(tmp_path, records, partition: int = 0):
    """A segment of raw (key, value) records at offsets 0.."""
    directory = tmp_path / f"__consumer_offsets-{partition}"
    directory.mkdir(parents=True)
    rows = [(k, v, 1_700_000_000_000) for k, v in records]
    (directory / f"{0:020d}.log").write_bytes(encode_batch(rows, base_offset=0))
    return facts_from_partition_dir(directory)


def offset_commit(version: int, *, claimed_version: int | None = None):
    key = encode_key(1, {"group": "g", "topic": "foo", "partition": 0})
    value = encode_value(1, version, {"offset": 5, "metadata": "", "commitTimestamp": 1})
    if claimed_version is not None:  # a version no codec writes: same bytes, higher number
        value = struct.pack(">h", claimed_version) + value[2:]
    return key, value


def test_every_du_rule_is_registered_once_with_its_worst_severity():
    assert {r: RULES[r].severity for r in RULES if r.startswith("DU-")} == {
        "DU-1": "critical", "DU-2": "critical", "DU-3": "critical", "DU-4": "critical",
        "DU-5": "info", "DU-6": "medium"}


# ---- DU-1 unknown record type ------------------------------------------------------------

def test_du1_live_consumer_group_records_are_dropped_and_resurrect_on_3_9(tmp_path):
    s = consumer_group()
    facts = facts_of(s, tmp_path)
    live_member = next(f.offset for f in facts if f.record_type == 5 and f.is_live)
    assert ("DU-1", "DROP", 3, "cg", live_member) in hits(facts, "3.9", "DU-1")
    assert ("DU-1", "RESURRECT", 3, "cg", live_member) in hits(facts, "3.9", "DU-1")
    rows = aggregate(audit_facts(facts, ["3.9"]), "s")
    assert verdict_lines(rows, ["3.9"])[0].startswith("safe to downgrade to 3.9: no - partition 3 ")


def test_du1_near_miss_a_deleted_group_leaves_only_harmless_drops(tmp_path):
    s = consumer_group().leave("A").delete_group()
    found = audit_facts(facts_of(s, tmp_path), ["3.9"])
    du1 = [f for f in found if f.rule_id == "DU-1"]
    assert du1 and {(f.klass, f.severity) for f in du1} == {("DROP", "info")}
    assert verdict_lines(aggregate(found, "s"), ["3.9"]) == ["safe to downgrade to 3.9: yes"]


def test_du1_types_no_release_knows_are_dropped_even_by_4_3(tmp_path):
    type24 = (encode_key(24, {"groupId": "st"}),
              encode_value(24, 0, {"assignmentEpoch": 3, "resolvedTopicIdsBySubtopology": []}))
    type99 = (struct.pack(">h", 99) + b"\x00\x02st", b"\x00\x00")  # no codec knows type 99
    facts = raw_log(tmp_path, [type24, type99], partition=4)
    assert [(f.record_type, f.group_id, f.decode_error) for f in facts] == [
        (24, "st", None), (99, None, "unknown_type")]
    assert hits(facts, "4.3") == [("DU-1", "DROP", 4, None, 1), ("DU-1", "DROP", 4, "st", 0),
                                  ("DU-1", "RESURRECT", 4, None, 1),
                                  ("DU-1", "RESURRECT", 4, "st", 0)]
    rows = aggregate(audit_facts(facts, ["4.3"]), "s")
    assert verdict_lines(rows, ["4.3"])[0].startswith("safe to downgrade to 4.3: no - partition 4 ")


def test_du1_breaks_open_before_3_4_1_and_not_from_it(tmp_path):
    facts = facts_of(consumer_group(), tmp_path)
    first = facts[0].offset
    assert hits(facts, "3.4.0", "DU-1", "BREAK")[0] == ("DU-1", "BREAK", 3, "cg", first)
    assert {f.failure_mode for f in audit_facts(facts, ["3.4.0"]) if f.klass == "BREAK"} == {"fail-open"}
    assert hits(facts, "3.4.1", "DU-1", "BREAK") == []


# ---- DU-2 value version ------------------------------------------------------------------

def test_du2_offset_commit_v4_breaks_scala_2_8_open(tmp_path):
    facts = facts_of(Scenario("g", partition=1).offset_commit({"foo": {0: 1}}), tmp_path)
    assert hits(facts, "2.8", "DU-2") == [("DU-2", "BREAK", 1, "g", 0)]


def test_du2_near_miss_offset_commit_v3_loads_on_2_8(tmp_path):
    s = Scenario("g", partition=1, offset_commit_version=3).offset_commit({"foo": {0: 1}})
    assert hits(facts_of(s, tmp_path), "2.8") == []


@pytest.mark.parametrize("target, expected", [
    ("4.0", ("DU-2", "BREAK", 0, "g", 1)),
    ("3.9+new-coordinator", ("DU-2", "READ-AS-LATEST", 0, "g", 1)),
    ("3.9", ("DU-2", "BREAK", 0, "g", 1)),
])
def test_du2_unknown_value_version_by_coordinator(tmp_path, target, expected):
    facts = raw_log(tmp_path, [offset_commit(4), offset_commit(4, claimed_version=5)])
    assert hits(facts, target, "DU-2") == [expected]


def test_du2_near_miss_known_versions_load_everywhere_from_3_4_1(tmp_path):
    facts = raw_log(tmp_path, [offset_commit(3), offset_commit(4)])
    for target in ("3.4.1", "3.9+new-coordinator", "4.0", "4.3"):
        assert hits(facts, target, "DU-2") == []


# ---- DU-3 layout ---------------------------------------------------------------------------

def test_du3_current_consumer_records_break_3_7_new_coordinator_where_it_stops(tmp_path):
    # 3.7's reader takes the current type-5 bytes without complaint (it ignores what it does not
    # expect); the first record it cannot read is the type-7 target member ("non-nullable field
    # partitions was serialized as null", as the 3.7.2 broker logs on samples/kafka-4.3.1).
    facts = facts_of(consumer_group(), tmp_path)
    first_type7 = next(f.offset for f in facts if f.record_type == 7)
    assert hits(facts, "3.7+new", "DU-3") == [("DU-3", "BREAK", 3, "cg", first_type7)]


def test_du3_near_miss_3_8_reads_the_current_layout(tmp_path):
    assert hits(facts_of(consumer_group(), tmp_path), "3.8+new", "DU-3") == []


# ---- DU-4 replay strictness -----------------------------------------------------------------

def test_du4_consumer_group_after_an_offset_created_simple_group_breaks_3_9_new(tmp_path):
    s = (Scenario("g", partition=2).offset_commit({"foo": {0: 1}})
         .consumer_join("A", ["foo"]))
    facts = facts_of(s, tmp_path)
    join = next(f.offset for f in facts if f.record_type == 5)
    assert hits(facts, "3.9+new-coordinator", "DU-4") == [("DU-4", "BREAK", 2, "g", join)]


def test_du4_near_miss_4_0_replaces_the_simple_group(tmp_path):
    s = (Scenario("g", partition=2).offset_commit({"foo": {0: 1}})
         .consumer_join("A", ["foo"]))
    assert hits(facts_of(s, tmp_path), "4.0", "DU-4") == []


def test_du4_tombstones_of_a_compacted_deleted_group_break_3_9_new_only(tmp_path):
    s = consumer_group().leave("A").delete_group()
    facts = facts_of(s.compacted(), tmp_path)
    first_tombstone = next(f.offset for f in facts if f.record_type >= 3 and f.is_tombstone)
    assert hits(facts, "3.9+new-coordinator", "DU-4") == [("DU-4", "BREAK", 3, "cg", first_tombstone)]
    assert hits(facts, "4.0", "DU-4") == []


def test_du4_near_miss_the_uncompacted_deleted_group_replays_on_3_9_new(tmp_path):
    s = consumer_group().leave("A").delete_group()
    assert hits(facts_of(s, tmp_path), "3.9+new-coordinator", "DU-4") == []


def double_owner(epoch: int) -> Scenario:
    """Member A owns foo-0 and foo-1 at epoch 1; member B (joined) is then given foo-1 at ``epoch``."""
    return (consumer_group(partition=0).consumer_join("B", ["foo"])
            .raw(8, {"groupId": "cg", "memberId": "B"}, {
                "memberEpoch": epoch, "previousMemberEpoch": 1, "state": 0,
                "assignedPartitions": [{"topicId": Scenario().topic_id("foo"), "partitions": [1]}],
                "partitionsPendingRevocation": []}))


def test_du4_double_ownership_at_the_same_epoch_breaks_every_java_target_from_3_8(tmp_path):
    facts = facts_of(double_owner(1), tmp_path)
    bad = facts[-1].offset
    for target in ("3.8+new", "3.9+new-coordinator", "4.0", "4.3", "4.4"):
        assert hits(facts, target, "DU-4") == [("DU-4", "BREAK", 0, "cg", bad)], target
    assert hits(facts, "3.7+new", "DU-4") == []  # 3.7 keeps no partition epochs
    assert hits(facts, "3.9", "DU-4") == []  # Scala never replays type 8


def test_du4_a_new_owner_at_a_higher_epoch_breaks_only_3_8_and_3_9(tmp_path):
    # ConsumerGroup.addPartitionEpochs: 3.8/3.9 refuse any partition still owned; from 4.0 a
    # partition moves to a higher epoch (the old owner's record is the stale one).
    facts = facts_of(double_owner(2), tmp_path)
    bad = facts[-1].offset
    for target in ("3.8+new", "3.9+new-coordinator"):
        assert hits(facts, target, "DU-4") == [("DU-4", "BREAK", 0, "cg", bad)], target
    for target in ("4.0", "4.3", "4.4"):
        assert hits(facts, target, "DU-4") == [], target


# ---- DU-5 tagged fields ----------------------------------------------------------------------

def test_du5_assignment_epochs_are_lost_on_4_2(tmp_path):
    facts = facts_of(consumer_group(), tmp_path)
    live8 = next(f for f in facts if f.record_type == 8 and f.is_live)
    found = [f for f in audit_facts(facts, ["4.2"]) if f.rule_id == "DU-5" and f.offset == live8.offset]
    assert len(found) == 1 and "assignedPartitions[].assignmentEpochs" in found[0].detail


def test_du5_near_miss_4_3_knows_every_tag_4_3_writes(tmp_path):
    assert hits(facts_of(consumer_group(), tmp_path), "4.3", "DU-5") == []


# ---- DU-6 behaviour ---------------------------------------------------------------------------

def test_du6_a_consumer_group_with_offsets_becomes_a_simple_group_on_3_9(tmp_path):
    facts = facts_of(consumer_group(), tmp_path)
    commit = next(f.offset for f in facts if f.record_type == 1 and f.is_live)
    assert ("DU-6", "INFO", 3, "cg", commit) in hits(facts, "3.9", "DU-6")


def test_du6_near_miss_a_classic_group_is_unchanged_on_3_9(tmp_path):
    s = (Scenario("cl", partition=3, offset_commit_version=3)
         .classic_rebalance({"c1": {"subscribe": ["foo"], "assignment": {"foo": [0]}}})
         .offset_commit({"foo": {0: 5}}))
    assert hits(facts_of(s, tmp_path), "3.9") == []


# ---- verdicts ---------------------------------------------------------------------------------

def test_verdict_headline_names_the_partition_that_does_not_load(tmp_path):
    consumer_group(partition=0).write(tmp_path)
    future = raw_log(tmp_path, [offset_commit(4, claimed_version=5)], partition=2)
    facts = facts_from_partition_dir(tmp_path / "__consumer_offsets-0") + future
    rows = aggregate(audit_facts(facts, ["3.9"]), "s")
    lines = verdict_lines(rows, ["3.9"])
    assert lines[0].startswith("safe to downgrade to 3.9: no - partition 2 does not load on 3.9 "
                               "(fail-open")
    assert [line.split(":")[0] for line in lines[1:]] == ["  partition 0", "  partition 2"]
    top = [r for r in rows if r["partition"] == 2]
    assert [(r["rule_id"], r["class"], r["failure_mode"], r["evidence_offsets"]) for r in top] == [
        ("DU-2", "BREAK", "fail-open", [0])]


def test_verdict_yes_for_classic_groups_with_v3_commits(tmp_path):
    s = (Scenario("cl", partition=1, offset_commit_version=3)
         .classic_rebalance({"c1": {"subscribe": ["foo"], "assignment": {"foo": [0]}}})
         .offset_commit({"foo": {0: 5}}))
    rows = aggregate(audit_facts(facts_of(s, tmp_path), ["2.8", "3.9", "4.0"]), "s")
    assert verdict_lines(rows, ["2.8", "3.9", "4.0"]) == [
        "safe to downgrade to 2.8: yes", "safe to downgrade to 3.9: yes",
        "safe to downgrade to 4.0: yes"]


def test_targets_parse_and_reject():
    assert parse_target("3.9+new").name == "3.9+new-coordinator"
    assert parse_target("3.4").release == (3, 4, 1)
    assert parse_target("4.4").release == (4, 4, 0)
    with pytest.raises(ValueError):
        parse_target("4.5")
    with pytest.raises(ValueError):
        parse_target("3.5+new")


def test_plain_commits_judged_alike_aggregate_as_each_record_judged_alone(tmp_path):
    """The Spark stage aggregates ``AlikeFindings`` (one finding for a shape's commits); the rows
    must be those of every record's own finding: commits of two versions interleaved with
    membership records, some superseded, one deleted, on Scala and Java targets alike."""
    from jobs.audits.downgrade import AlikeFindings, expand

    s = consumer_group(partition=0)
    for round_ in range(3):
        s.offset_commit_version = 3 + round_ % 2
        s.offset_commit({"foo": {0: 20 + round_, 1: 30 + round_}}).heartbeat("A")
    s.offset_commit_version = 4
    s.offset_commit({"foo": {2: 7}}).expire_offsets([("foo", 2)])
    facts = facts_of(s, tmp_path)
    targets = ["2.0", "2.8", "3.4.0", "3.9", "4.0", "4.2", "4.3"]
    alike = audit_facts(facts, targets, alike=True)
    assert any(isinstance(f, AlikeFindings) and len(f.offsets) > 1 for f in alike)
    each = audit_facts(facts, targets)
    assert sorted(expand(alike), key=repr) == sorted(each, key=repr)
    assert aggregate(alike, "s") == aggregate(each, "s")
    assert any(r["record_count"] > 1 and r["live_record_count"] < r["record_count"]
               for r in aggregate(alike, "s"))


def test_facts_columns_are_the_record_facts_fields_in_order():
    """``facts_from_table`` builds ``RecordFacts`` from the Arrow columns by position."""
    from dataclasses import fields

    from jobs.audits.downgrade_facts import FACTS_SCHEMA, RecordFacts

    assert [f.name for f in fields(RecordFacts)] == FACTS_SCHEMA.names

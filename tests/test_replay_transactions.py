"""Transactional offset commits: COMMIT, ABORT, the log-offset tie-break, open transactions,
tombstones wiping pending offsets, and markers fanned out to every group of the partition."""

from __future__ import annotations

from jobs.replay import replay_group, replay_partition
from support.scenarios import Scenario

T0 = 1_700_000_000_000
TICK = 1_000


def offset_row(group, topic, partition, offset, log_offset, *, ts, producer_id=-1,
               topic_id=None):
    return {"group_id": group, "topic": topic, "partition": partition, "committed_offset": offset,
            "leader_epoch": None, "metadata": "", "commit_timestamp": ts, "expire_timestamp": None,
            "topic_id": topic_id, "producer_id": producer_id,
            "is_transactional": producer_id != -1, "log_partition": 0, "log_offset": log_offset}


def commit_row(group, topic, partition, offset, log_offset, *, ts, outcome, installed,
               producer_id=-1, topic_id=None, marker=None, tombstone=False):
    return {"group_id": group, "topic": topic, "partition": partition,
            "committed_offset": None if tombstone else offset,
            "leader_epoch": None, "metadata": None if tombstone else "",
            "commit_timestamp": None if tombstone else ts, "expire_timestamp": None,
            "topic_id": topic_id, "record_type": 1, "value_version": None if tombstone else 4,
            "is_tombstone": tombstone, "producer_id": producer_id,
            "is_transactional": producer_id != -1, "outcome": outcome, "is_installed": installed,
            "marker_log_offset": marker, "log_partition": 0, "log_offset": log_offset,
            "log_timestamp": ts}


def txn_row(group, producer_id, first, last, marker, outcome, count):
    return {"group_id": group, "producer_id": producer_id, "first_log_offset": first,
            "last_log_offset": last, "marker_log_offset": marker, "outcome": outcome,
            "offset_count": count, "log_partition": 0,
            "log_offset": first if marker is None else marker}


def test_commit_installs_pending_offsets():
    s = (Scenario("g").offset_commit({"foo": {0: 10}})
         .txn_offset_commit(7, {"foo": {0: 20, 1: 21}})
         .end_txn(7, "COMMIT"))
    foo = str(s.topic_id("foo"))
    t = replay_group(s.events()).tables
    assert t["offsets"] == [
        offset_row("g", "foo", 0, 20, 1, ts=T0 + TICK, producer_id=7, topic_id=foo),
        offset_row("g", "foo", 1, 21, 2, ts=T0 + TICK, producer_id=7, topic_id=foo)]
    assert t["offset_commits"] == [
        commit_row("g", "foo", 0, 10, 0, ts=T0, outcome="non_transactional", installed=True,
                   topic_id=foo),
        commit_row("g", "foo", 0, 20, 1, ts=T0 + TICK, outcome="committed", installed=True,
                   producer_id=7, marker=3),
        commit_row("g", "foo", 1, 21, 2, ts=T0 + TICK, outcome="committed", installed=True,
                   producer_id=7, marker=3)]
    assert t["transactions"] == [txn_row("g", 7, 1, 2, 3, "committed", 2)]
    assert t["violations"] == []


def test_abort_drops_pending_offsets():
    s = (Scenario("g").offset_commit({"foo": {0: 10}})
         .transactional_commit(7, {"foo": {0: 20}}, outcome="ABORT"))
    foo = str(s.topic_id("foo"))
    t = replay_group(s.events()).tables
    assert t["offsets"] == [offset_row("g", "foo", 0, 10, 0, ts=T0, topic_id=foo)]
    assert [(r["log_offset"], r["outcome"], r["is_installed"], r["marker_log_offset"])
            for r in t["offset_commits"]] == [(0, "non_transactional", True, None),
                                              (1, "aborted", False, 2)]
    assert t["transactions"] == [txn_row("g", 7, 1, 1, 2, "aborted", 1)]


def test_tie_break_later_non_transactional_commit_wins():
    # txn commit at offset 0, plain commit at 1, COMMIT marker at 2: the pending record is older
    # than the installed one, so the coordinator keeps the plain commit.
    s = (Scenario("g").txn_offset_commit(7, {"foo": {0: 20}})
         .offset_commit({"foo": {0: 30}})
         .end_txn(7, "COMMIT"))
    foo = str(s.topic_id("foo"))
    t = replay_group(s.events()).tables
    assert t["offsets"] == [offset_row("g", "foo", 0, 30, 1, ts=T0 + TICK, topic_id=foo)]
    assert [(r["log_offset"], r["outcome"], r["is_installed"]) for r in t["offset_commits"]] == [
        (0, "committed", False), (1, "non_transactional", True)]
    assert t["violations"] == [{
        "rule_id": "TX-02", "severity": "INFO", "group_id": "g", "member_id": None,
        "message": "COMMIT of producer 7 skips foo-0: pending record at offset 0 is older than "
                   "the installed one at 1", "log_partition": 0, "log_offset": 2}]


def test_tie_break_later_transactional_commit_wins():
    s = (Scenario("g").offset_commit({"foo": {0: 30}})
         .transactional_commit(7, {"foo": {0: 20}}))
    t = replay_group(s.events()).tables
    assert [(r["committed_offset"], r["log_offset"], r["producer_id"]) for r in t["offsets"]] == [
        (20, 1, 7)]
    assert t["violations"] == []


def test_open_transaction_at_end_of_snapshot_stays_pending():
    s = Scenario("g").offset_commit({"foo": {0: 10}}).txn_offset_commit(7, {"foo": {0: 20}})
    result = replay_group(s.events())
    t = result.tables
    assert [(r["committed_offset"], r["log_offset"]) for r in t["offsets"]] == [(10, 0)]
    assert t["transactions"] == [txn_row("g", 7, 1, 1, None, "open", 1)]
    assert t["offset_commits"][1]["outcome"] == "open"
    assert list(result.offsets["g"].open_transactions) == [7]


def test_tombstone_wipes_pending_offset():
    s = (Scenario("g").txn_offset_commit(7, {"foo": {0: 20, 1: 21}})
         .raw(1, {"group": "g", "topic": "foo", "partition": 0}, None)
         .end_txn(7, "COMMIT"))
    t = replay_group(s.events()).tables
    assert [(r["topic"], r["partition"], r["committed_offset"]) for r in t["offsets"]] == [
        ("foo", 1, 21)]
    assert [(r["log_offset"], r["outcome"], r["is_installed"]) for r in t["offset_commits"]] == [
        (0, "committed", False), (1, "committed", True), (2, "tombstone", True)]


def test_marker_fans_out_to_every_group_of_the_producer():
    s = (Scenario("g").txn_offset_commit(7, {"foo": {0: 1}})
         .group("h").txn_offset_commit(7, {"bar": {0: 2}})
         .group("k").offset_commit({"baz": {0: 3}})
         .end_txn(7, "COMMIT"))
    result = replay_partition(s.events())
    t = result.tables
    assert [(r["group_id"], r["topic"], r["committed_offset"], r["log_offset"])
            for r in t["offsets"]] == [("g", "foo", 1, 0), ("h", "bar", 2, 1), ("k", "baz", 3, 2)]
    assert t["transactions"] == [txn_row("g", 7, 0, 0, 3, "committed", 1),
                                 txn_row("h", 7, 1, 1, 3, "committed", 1)]
    assert [(r["group_id"], r["group_type"], r["group_state"], r["is_simple"])
            for r in t["groups"]] == [("g", "classic", "Empty", True),
                                      ("h", "classic", "Empty", True),
                                      ("k", "classic", "Empty", True)]


def test_each_group_given_every_marker_of_its_partition_replays_the_same():
    # What the Spark job does: group by (partition, group id), add all markers of the partition.
    s = (Scenario("g").txn_offset_commit(7, {"foo": {0: 1}})
         .group("h").txn_offset_commit(8, {"bar": {0: 2}}).offset_commit({"bar": {1: 3}})
         .end_txn(8, "ABORT").end_txn(7, "COMMIT"))
    events = s.events()
    markers = [e for e in events if e.is_marker]
    per_group = {}
    for gid in ("g", "h"):
        mine = [e for e in events if not e.is_marker and
                e.record.key["group"] == gid]
        per_group[gid] = replay_group(sorted(mine + markers, key=lambda e: e.offset)).tables
    merged = replay_partition(events).tables
    assert merged["offsets"] == per_group["g"]["offsets"] + per_group["h"]["offsets"]
    assert merged["transactions"] == sorted(
        per_group["g"]["transactions"] + per_group["h"]["transactions"],
        key=lambda r: r["log_offset"])
    assert [(r["group_id"], r["outcome"]) for r in merged["transactions"]] == [
        ("h", "aborted"), ("g", "committed")]

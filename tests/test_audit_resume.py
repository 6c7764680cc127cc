"""A resumed audit is the audit of every event (jobs.audits.engine: open_fold, fold, freeze,
thaw, finish): an incremental lake folds only a group's new events into the context its last
audit kept. Random histories of a consumer group (zombie and rewinding commits, transactions
left open, deletions), split at every event: the findings and their window equal one fold of
the whole log, and :func:`resumable` never lets a fold resume under topic names that would have
audited its earlier events otherwise."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobs.audits.engine import (audit_group_window, finish, fold, freeze, open_fold, resumable,
                                thaw, topic_reads)
from jobs.audits.evidence import LogCoverage
from jobs.audits.validators import detect_regime
from support.scenarios import Scenario
from test_scenarios_properties import PARTITIONS, apply


def history(draw) -> Scenario:
    s = Scenario("g").consumer_join("A", ["foo"])
    for _ in range(draw(st.integers(1, 20))):
        action = draw(st.sampled_from(["scenario", "scenario", "scenario", "stray", "open_txn",
                                       "delete", "time"]))
        if action == "scenario":
            apply(s, draw)
        elif action == "stray":   # a commit for a topic nobody subscribes to, or a rewind
            topic = draw(st.sampled_from(["foo", "bar"]))
            s.offset_commit({topic: {draw(st.sampled_from(PARTITIONS)): draw(st.integers(0, 9))}})
        elif action == "open_txn":
            s.txn_offset_commit(draw(st.integers(7, 8)), {"foo": {0: draw(st.integers(0, 9))}})
        elif action == "delete" and not s.model.members:
            s.delete_group()
        elif action == "time":
            s.advance(draw(st.sampled_from([1_000, 60_000, 3_600_000])))
    return s


def drawn(data) -> tuple[Scenario, list, str]:
    """A random history, its events and their regime."""
    s = history(data.draw)
    events = s.events()
    return s, events, detect_regime(events)


def resumed(events, split: int, *, regime, names, then_names=None, coverage, now):
    a = open_fold(regime=regime, topic_names=names, coverage=coverage, snapshot_time_ms=now)
    fold(a, events[:split])
    reads = topic_reads(a, names)
    blob = freeze(a)
    later = names if then_names is None else then_names
    b = thaw(blob, topic_names=later, coverage=coverage, snapshot_time_ms=now)
    fold(b, events[split:])
    return reads, finish(b)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_fold_resumed_at_any_event_finds_what_one_fold_finds(data):
    s, events, regime = drawn(data)
    names = s.topic_names
    last = max(e.timestamp for e in events)
    now = last + data.draw(st.sampled_from([0, 50_000, 1_000_000, 10**9]))
    gap = data.draw(st.sampled_from([None, (1, 3), (len(events) // 2, len(events) // 2 + 2)]))
    coverage = LogCoverage({} if gap is None else {events[0].partition: [gap]})
    whole = audit_group_window(events, regime=regime, topic_names=names, coverage=coverage,
                               snapshot_time_ms=now)
    for split in range(len(events) + 1):
        reads, got = resumed(events, split, regime=regime, names=names, coverage=coverage,
                             now=now)
        assert resumable(reads, {str(t): n for t, n in names.items()})
        assert got == whole, split


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_fold_resumes_only_under_names_that_audit_its_events_alike(data):
    s, events, regime = drawn(data)
    names = s.topic_names
    foo, bar, other = s.topic_id("foo"), s.topic_id("bar"), uuid.UUID(int=7)
    variants = [{}, {foo: "foo"}, {**names, other: "baz"}, {**names, other: "foo"},
                {foo: "renamed"}, {bar: "bar"}]
    then = data.draw(st.sampled_from(variants))
    before = data.draw(st.sampled_from(variants))
    now = max(e.timestamp for e in events)
    split = data.draw(st.integers(0, len(events)))
    reads, got = resumed(events, split, regime=regime, names=before, then_names=then,
                         coverage=LogCoverage(), now=now)
    if resumable(reads, {str(t): n for t, n in then.items()}):
        assert got == audit_group_window(events, regime=regime, topic_names=then,
                                         coverage=LogCoverage(), snapshot_time_ms=now)


def test_a_frozen_fold_keeps_no_replay_history():
    s = Scenario("g").consumer_join("A", ["foo"])
    s.offset_commit({"foo": {0: 5}})
    a = open_fold(regime="strict", topic_names=s.topic_names)
    fold(a, s.events())
    assert a.replay.epochs   # the replay's epochs rows: the audit never reads them
    b = thaw(freeze(a), topic_names=s.topic_names)
    assert b.replay.epochs == [] and a.replay.epochs
    assert b.folded_until == s.events()[-1].offset


@pytest.mark.parametrize("reads, names, ok", [
    ({"ids": {"t1": "foo"}, "names": {}, "ambiguous": False}, {"t1": "foo", "t2": "x"}, True),
    ({"ids": {"t1": "foo"}, "names": {}, "ambiguous": False}, {"t1": "bar"}, False),
    ({"ids": {"t1": None}, "names": {}, "ambiguous": False}, {"t1": "foo"}, False),
    ({"ids": {}, "names": {"foo": ["t1"]}, "ambiguous": False}, {"t1": "foo", "t2": "x"}, True),
    ({"ids": {}, "names": {"foo": ["t1"]}, "ambiguous": False}, {"t1": "foo", "t2": "foo"}, False),
    ({"ids": {}, "names": {"foo": []}, "ambiguous": False}, {"t2": "foo"}, False),
    ({"ids": {}, "names": {}, "ambiguous": True}, {}, False),
])
def test_resumable_compares_what_the_fold_read(reads, names, ok):
    assert resumable(reads, names) is ok


def owned_rewinds() -> Scenario:
    """A owns foo-0 and rewinds it (OF-03, same owner); B takes foo-0 over and a late commit
    rewinds it again (OF-03, ownership changed): the grade reads the owner of the commit before."""
    s = Scenario("g").consumer_join("A", ["foo"])
    s.compute_target({"A": {"foo": [0, 1]}})
    s.converge("A")
    s.offset_commit({"foo": {0: 50}})
    s.offset_commit({"foo": {0: 10}})
    s.consumer_join("B", ["foo"])
    s.compute_target({"A": {"foo": [1]}, "B": {"foo": [0]}})
    s.revoke("A")
    s.converge("A")
    s.converge("B")
    s.offset_commit({"foo": {0: 60}})
    s.offset_commit({"foo": {0: 5}})
    return s


def test_a_resumed_fold_grades_a_rewind_by_the_owner_before_the_split():
    s = owned_rewinds()
    events = s.events()
    whole = audit_group_window(events, regime="strict", topic_names=s.topic_names)
    assert [f["rule_id"] for f in whole[0]].count("OF-03") == 2
    for split in range(len(events) + 1):
        _, got = resumed(events, split, regime="strict", names=s.topic_names,
                         coverage=LogCoverage(), now=None)
        assert got == whole, split

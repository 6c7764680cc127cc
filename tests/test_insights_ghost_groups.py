"""sql/ghost_groups.sql and rule GH-01 (sql/rules/GH-01.sql) on a hand-written lake.

Snapshot ``s1`` ends at T0 + 10 h (its newest raw record); ``ghost_idle_hours`` is 1. Groups:

* ``g-empty-classic``: a classic group that rebalanced (a GroupMetadata value), now Empty; last
  commit at 1 h: a ghost for 9 h.
* ``g-simple``: a simple group (commits only), two topics, last commit at 3 h: a ghost that never
  rebalanced.
* ``g-orphan``: offsets whose group a GroupMetadata tombstone removed at 4.5 h (no groups row).
* ``g-recent-leave``: an Empty consumer group whose commits are old (2 h) but whose last member
  left at 9.5 h: idle 0.5 h, not a ghost.
* ``g-boundary``: a simple group committed exactly 1 h before the end: idle == threshold, not a
  ghost.
* ``g-live``: a consumer group with a member: not in the view at all; ``g-no-offsets``: Empty,
  no offsets: not in the view either.

Snapshot ``s0`` ends much later (T0 + 100 h) and holds nothing else: s1's idle times must not
use it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from jobs.lake.views import register_lake
from support.lake_fixture import write_lake

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
HOUR = 3_600_000
SETTINGS = {"ghost_idle_hours": 1}
RULE = Path(__file__).resolve().parents[1] / "sql" / "rules" / "GH-01.sql"


def ms(hours: float) -> int:
    return T0 + int(hours * HOUR)


def at(hours: float) -> str:
    """T0 + hours as to_json writes a timestamp (session time zone UTC)."""
    moment = ms(hours)
    return datetime.fromtimestamp(moment / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def group(group_id, group_type, state, members, simple=False, protocol_type=None):
    return dict(snapshot_id="s1", group_id=group_id, group_type=group_type, group_state=state,
                is_simple=simple, protocol_type=protocol_type, member_count=members)


def record(partition, offset, hours, group_id, record_type, tombstone=False):
    return dict(snapshot_id="s1", partition=partition, offset=offset, timestamp=ms(hours),
                group_id=group_id, record_type=record_type, is_tombstone=tombstone)


def offset(group_id, topic, partition, hours, log_partition, log_offset):
    return dict(snapshot_id="s1", group_id=group_id, topic=topic, partition=partition,
                committed_offset=42, commit_timestamp=ms(hours), log_partition=log_partition,
                log_offset=log_offset)


TABLES = {
    "raw_records": [dict(snapshot_id="s1", partition=2, offset=99, timestamp=ms(10)),
                    dict(snapshot_id="s1", partition=0, offset=0, timestamp=ms(0)),
                    dict(snapshot_id="s0", partition=0, offset=0, timestamp=ms(100))],
    "groups": [
        group("g-empty-classic", "classic", "Empty", 0, protocol_type="consumer"),
        group("g-simple", "classic", "Empty", 0, simple=True),
        group("g-recent-leave", "consumer", "Empty", 0),
        group("g-boundary", "classic", "Empty", 0, simple=True),
        group("g-live", "consumer", "Stable", 1),
        group("g-no-offsets", "consumer", "Empty", 0),
    ],
    "records": [
        record(0, 10, 0, "g-empty-classic", 2),
        record(0, 11, 1, "g-empty-classic", 1),
        record(1, 20, 2, "g-simple", 1),
        record(1, 21, 3, "g-simple", 1),
        record(1, 22, 2.5, "g-simple", 1),
        record(2, 30, 4, "g-orphan", 1),
        record(2, 31, 4.5, "g-orphan", 2, tombstone=True),
        record(0, 40, 1.5, "g-recent-leave", 3),
        record(0, 41, 2, "g-recent-leave", 1),
        record(0, 42, 9.5, "g-recent-leave", 5, tombstone=True),
        record(1, 50, 9, "g-boundary", 1),
        record(2, 60, 9.9, "g-live", 1),
        record(2, 61, 0.5, "g-no-offsets", 3),
    ],
    "offsets": [
        offset("g-empty-classic", "orders", 0, 1, 0, 11),
        offset("g-simple", "orders", 0, 2, 1, 20),
        offset("g-simple", "pay", 1, 3, 1, 21),
        offset("g-simple", "orders", 1, 2.5, 1, 22),
        offset("g-orphan", "orders", 0, 4, 2, 30),
        offset("g-recent-leave", "orders", 0, 2, 0, 41),
        offset("g-boundary", "orders", 0, 9, 1, 50),
        offset("g-live", "orders", 0, 9.9, 2, 60),
    ],
}


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory):
    return write_lake(spark, tmp_path_factory.mktemp("ghost") / "lake", TABLES)


def as_dicts(df) -> list[dict]:
    payload = df.selectExpr("to_json(struct(*), map('ignoreNullFields', 'false')) as j")
    return [json.loads(r.j) for r in payload.collect()]


def test_ghost_groups(spark, lake):
    register_lake(spark, lake, settings=SETTINGS)
    got = as_dicts(spark.sql(
        "select group_id, group_type, group_state, is_simple, committed_partitions, "
        "committed_topics, last_commit_at, last_member_activity_at, idle_ms, is_ghost, "
        "never_rebalanced, log_partition, log_offset, commit_log_offsets "
        "from ghost_groups where snapshot_id = 's1' order by group_id"))
    assert got == [
        dict(group_id="g-boundary", group_type="classic", group_state="Empty", is_simple=True,
             committed_partitions=1, committed_topics=1, last_commit_at=at(9),
             last_member_activity_at=None, idle_ms=HOUR, is_ghost=False, never_rebalanced=True,
             log_partition=1, log_offset=50, commit_log_offsets=[50]),
        dict(group_id="g-empty-classic", group_type="classic", group_state="Empty",
             is_simple=False, committed_partitions=1, committed_topics=1, last_commit_at=at(1),
             last_member_activity_at=at(0), idle_ms=9 * HOUR, is_ghost=True,
             never_rebalanced=False, log_partition=0, log_offset=11, commit_log_offsets=[11]),
        # The tombstone that removed the group counts as the last group record.
        dict(group_id="g-orphan", group_type=None, group_state=None, is_simple=None,
             committed_partitions=1, committed_topics=1, last_commit_at=at(4),
             last_member_activity_at=at(4.5), idle_ms=int(5.5 * HOUR), is_ghost=True,
             never_rebalanced=True, log_partition=2, log_offset=31, commit_log_offsets=[30]),
        # Old commits, but a member left half an hour ago.
        dict(group_id="g-recent-leave", group_type="consumer", group_state="Empty",
             is_simple=False, committed_partitions=1, committed_topics=1, last_commit_at=at(2),
             last_member_activity_at=at(9.5), idle_ms=HOUR // 2, is_ghost=False,
             never_rebalanced=False, log_partition=0, log_offset=42, commit_log_offsets=[41]),
        dict(group_id="g-simple", group_type="classic", group_state="Empty", is_simple=True,
             committed_partitions=3, committed_topics=2, last_commit_at=at(3),
             last_member_activity_at=None, idle_ms=7 * HOUR, is_ghost=True,
             never_rebalanced=True, log_partition=1, log_offset=22,
             commit_log_offsets=[20, 21, 22]),
    ]
    assert spark.sql("select * from ghost_groups where snapshot_id = 's0'").collect() == []


def test_ghost_groups_threshold_comes_from_settings(spark, lake):
    """With the default 168 h nothing of s1 is a ghost; the rows stay."""
    register_lake(spark, lake, settings={})
    got = spark.sql("select group_id, is_ghost from ghost_groups order by group_id").collect()
    assert [(r.group_id, r.is_ghost) for r in got] == [
        ("g-boundary", False), ("g-empty-classic", False), ("g-orphan", False),
        ("g-recent-leave", False), ("g-simple", False)]


def gh01(spark) -> list[dict]:
    return as_dicts(spark.sql(RULE.read_text()).orderBy("group_id"))


def test_gh01_finds_the_ghosts(spark, lake):
    register_lake(spark, lake, settings=SETTINGS)
    got = gh01(spark)
    for finding in got:
        finding["details"] = json.loads(finding["details"])
    assert got == [
        dict(snapshot_id="s1", rule_id="GH-01", severity="low", verdict="violation",
             group_id="g-empty-classic", member_id=None, topic=None, topic_id=None,
             partition=None, log_partition=0, log_offset=11, evidence_log_offsets=[11],
             message="Group 'g-empty-classic' (classic, Empty) has committed offsets for 1 "
                     "partition of 1 topic and no members, and has been idle for 9.0 h "
                     "(threshold 1.0 h): lag alerts on it are false until its offsets expire "
                     "or the group is deleted.",
             details=dict(group_type="classic", group_state="Empty", is_simple=False,
                          committed_partitions=1, committed_topics=1, last_commit_at=at(1),
                          last_member_activity_at=at(0), idle_ms=9 * HOUR,
                          never_rebalanced=False)),
        dict(snapshot_id="s1", rule_id="GH-01", severity="info", verdict="notice",
             group_id="g-orphan", member_id=None, topic=None, topic_id=None, partition=None,
             log_partition=2, log_offset=31, evidence_log_offsets=[30],
             message="Group 'g-orphan' (no group record, never rebalanced) has committed "
                     "offsets for 1 partition of 1 topic and no members, and has been idle for "
                     "5.5 h (threshold 1.0 h): lag alerts on it are false until its offsets "
                     "expire or the group is deleted.",
             details=dict(committed_partitions=1, committed_topics=1, last_commit_at=at(4),
                          last_member_activity_at=at(4.5), idle_ms=int(5.5 * HOUR),
                          never_rebalanced=True)),
        dict(snapshot_id="s1", rule_id="GH-01", severity="info", verdict="notice",
             group_id="g-simple", member_id=None, topic=None, topic_id=None, partition=None,
             log_partition=1, log_offset=22, evidence_log_offsets=[20, 21, 22],
             message="Group 'g-simple' (classic, Empty, never rebalanced) has committed offsets "
                     "for 3 partitions of 2 topics and no members, and has been idle for 7.0 h "
                     "(threshold 1.0 h): lag alerts on it are false until its offsets expire or "
                     "the group is deleted.",
             details=dict(group_type="classic", group_state="Empty", is_simple=True,
                          committed_partitions=3, committed_topics=2, last_commit_at=at(3),
                          idle_ms=7 * HOUR, never_rebalanced=True)),
    ]


def test_gh01_near_miss_idle_just_at_the_threshold(spark, lake):
    """g-boundary is idle exactly ghost_idle_ms, g-recent-leave less: neither is found; with a
    threshold of 10 h nothing is."""
    register_lake(spark, lake, settings=SETTINGS)
    assert {f["group_id"] for f in gh01(spark)} == {"g-empty-classic", "g-orphan", "g-simple"}
    register_lake(spark, lake, settings={"ghost_idle_hours": 10})
    assert gh01(spark) == []

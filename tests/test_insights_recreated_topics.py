"""sql/recreated_topics.sql and rule TP-01 (sql/rules/TP-01.sql) on a hand-written lake.

Snapshot ``s1`` (times in hours after T0):

* ``orders`` had id A until it was recreated as B. g-old committed orders-0 and orders-1 under
  A at 1 h; orders-0 is still current (TP-01), orders-1 was committed again under B at 5 h (a
  near miss: the old offset is history). B first appears in g-new's commit at 3 h (partition 1),
  then in g-new's member assignment at 3.5 h.
* ``events`` had three ids: E1 (1 h), E2 (2 h), E3 (4 h, known only from a target assignment).
  g-old's current offsets under E1 and E2 both belong to older incarnations of E3.
* ``pay`` has one id, C: nothing. A classic member assignment pairs ``pay`` with another id,
  looked up by name and not recorded: it must not count as an incarnation.
* A transactional commit of orders (no topic id) and an offset tombstone are left out.

Snapshot ``s0`` holds only orders under A: one incarnation, nothing found.
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
RULE = Path(__file__).resolve().parents[1] / "sql" / "rules" / "TP-01.sql"
A, B = "0a0a0a0a-0000-4000-8000-00000000000a", "0b0b0b0b-0000-4000-8000-00000000000b"
C, D = "0c0c0c0c-0000-4000-8000-00000000000c", "0d0d0d0d-0000-4000-8000-00000000000d"
E1, E2, E3 = ("0e0e0e0e-0000-4000-8000-0000000000e1", "0e0e0e0e-0000-4000-8000-0000000000e2",
              "0e0e0e0e-0000-4000-8000-0000000000e3")


def ms(hours: float) -> int:
    return T0 + int(hours * HOUR)


def at(hours: float) -> str:
    moment = ms(hours)
    return datetime.fromtimestamp(moment / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def commit(group_id, topic, partition, topic_id, hours, log_partition, log_offset, *,
           snapshot_id="s1", tombstone=False, producer_id=-1):
    return dict(snapshot_id=snapshot_id, group_id=group_id, topic=topic, partition=partition,
                committed_offset=None if tombstone else 1000 + log_offset,
                commit_timestamp=None if tombstone else ms(hours), topic_id=topic_id,
                record_type=1, is_tombstone=tombstone, producer_id=producer_id,
                is_transactional=producer_id != -1, log_partition=log_partition,
                log_offset=log_offset, log_timestamp=ms(hours))


def current(row: dict) -> dict:
    """The `offsets` row a commit left."""
    keys = ("snapshot_id", "group_id", "topic", "partition", "committed_offset",
            "commit_timestamp", "topic_id", "producer_id", "is_transactional", "log_partition",
            "log_offset")
    return {k: row[k] for k in keys}


COMMITS = [
    commit("g-old", "orders", 0, A, 1, 0, 10),
    commit("g-old", "orders", 1, A, 1, 0, 11),
    commit("g-new", "orders", 0, B, 3, 1, 5),
    commit("g-old", "orders", 1, B, 5, 0, 30),
    commit("g-old", "events", 0, E1, 1, 0, 12),
    commit("g-old", "events", 1, E2, 2, 0, 13),
    commit("g-old", "pay", 0, C, 1, 0, 14),
    commit("g-txn", "orders", 2, None, 6, 2, 40, producer_id=7),
    commit("g-old", "orders", 2, None, 6, 0, 31, tombstone=True),
    commit("g-old", "orders", 0, A, 1, 0, 10, snapshot_id="s0"),
]
CURRENT = [current(COMMITS[i]) for i in (0, 2, 3, 4, 5, 6, 7)] + [current(COMMITS[9])]

TABLES = {
    "offset_commits": COMMITS,
    "offsets": CURRENT,
    "member_assignments": [
        dict(snapshot_id="s1", group_id="g-new", member_id="m1", topic_id=B, topic_name="orders",
             partition=0, assignment_epoch=3, assignment_epoch_source="explicit",
             is_pending_revocation=False, log_partition=1, log_offset=6),
        dict(snapshot_id="s1", group_id="g-classic", member_id="c1", topic_id=D,
             topic_name="pay", partition=0, assignment_epoch=2, assignment_epoch_source="classic",
             is_pending_revocation=False, log_partition=2, log_offset=50),
    ],
    "target_assignments": [
        dict(snapshot_id="s1", group_id="g-new", member_id="m1", topic_id=E3,
             topic_name="events", partition=0, target_assignment_epoch=4, log_partition=1,
             log_offset=8),
    ],
    "records": [
        # the records the assignments come from: a current assignment (type 8), a target
        # assignment member (type 7), a classic GroupMetadata (type 2)
        dict(snapshot_id="s1", partition=1, offset=6, timestamp=ms(3.5), record_type=8),
        dict(snapshot_id="s1", partition=1, offset=8, timestamp=ms(4), record_type=7),
        dict(snapshot_id="s1", partition=2, offset=50, timestamp=ms(9), record_type=2),
    ],
}


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory):
    return write_lake(spark, tmp_path_factory.mktemp("recreated") / "lake", TABLES)


def as_dicts(df) -> list[dict]:
    payload = df.selectExpr("to_json(struct(*), map('ignoreNullFields', 'false')) as j")
    return [json.loads(r.j) for r in payload.collect()]


def old(topic, partition, old_id, new_id, log_offset, hours, seen, is_current):
    seen_hours, seen_partition, seen_offset = seen
    return dict(group_id="g-old", topic=topic, partition=partition, old_topic_id=old_id,
                new_topic_id=new_id, committed_offset=1000 + log_offset, commit_at=at(hours),
                seen_new_id_at=at(seen_hours), seen_new_id_log_partition=seen_partition,
                seen_new_id_log_offset=seen_offset, is_current=is_current, log_partition=0,
                log_offset=log_offset)


def test_recreated_topics(spark, lake):
    register_lake(spark, lake)
    got = as_dicts(spark.sql(
        "select group_id, topic, partition, old_topic_id, new_topic_id, committed_offset, "
        "commit_at, seen_new_id_at, seen_new_id_log_partition, seen_new_id_log_offset, "
        "is_current, log_partition, log_offset from recreated_topics "
        "where snapshot_id = 's1' order by topic, partition, log_offset"))
    assert got == [
        old("events", 0, E1, E3, 12, 1, (4, 1, 8), True),
        old("events", 1, E2, E3, 13, 2, (4, 1, 8), True),
        old("orders", 0, A, B, 10, 1, (3, 1, 5), True),
        old("orders", 1, A, B, 11, 1, (3, 1, 5), False),
    ]
    assert spark.sql("select * from recreated_topics where snapshot_id = 's0'").collect() == []


def tp01(spark) -> list[dict]:
    findings = as_dicts(spark.sql(RULE.read_text()).orderBy("topic", "partition"))
    for finding in findings:
        finding["details"] = json.loads(finding["details"])
    return findings


def finding(topic, partition, old_id, new_id, log_offset, hours, seen):
    seen_hours, seen_partition, seen_offset = seen
    committed = 1000 + log_offset
    return dict(
        snapshot_id="s1", rule_id="TP-01", severity="high", verdict="violation",
        group_id="g-old", member_id=None, topic=topic, topic_id=old_id, partition=partition,
        log_partition=0, log_offset=log_offset, evidence_log_offsets=[log_offset, seen_offset],
        message=f"Group 'g-old' still has committed offset {committed} for {topic}-{partition} "
                f"under topic id {old_id}, but topic '{topic}' was recreated with id {new_id} "
                f"(first seen {at(seen_hours)[:19].replace('T', ' ')} UTC): a consumer fetching "
                "by topic id gets no offset and applies auto.offset.reset, one fetching by name "
                f"resumes at {committed} of the new log; either way data is skipped or reread "
                "silently.",
        details=dict(old_topic_id=old_id, new_topic_id=new_id, committed_offset=committed,
                     commit_at=at(hours), seen_new_id_at=at(seen_hours),
                     seen_new_id_log_partition=seen_partition,
                     seen_new_id_log_offset=seen_offset))


def test_tp01_finds_current_offsets_of_an_older_incarnation(spark, lake):
    register_lake(spark, lake)
    assert tp01(spark) == [
        finding("events", 0, E1, E3, 12, 1, (4, 1, 8)),
        finding("events", 1, E2, E3, 13, 2, (4, 1, 8)),
        finding("orders", 0, A, B, 10, 1, (3, 1, 5)),
    ]


def test_tp01_near_miss_the_old_offset_was_committed_again(spark, lake, tmp_path):
    """Once g-old commits orders-0 under B too (as a consumer resuming on the new topic does),
    the old-incarnation offset is history: recreated_topics still lists it, TP-01 says nothing
    about orders."""
    again = commit("g-old", "orders", 0, B, 6, 0, 32)
    tables = dict(TABLES, offset_commits=COMMITS + [again],
                  offsets=[current(again)] + CURRENT[1:])
    register_lake(spark, write_lake(spark, tmp_path / "lake", tables))
    assert [(f["topic"], f["partition"]) for f in tp01(spark)] == [("events", 0), ("events", 1)]
    listed = spark.sql("select partition, is_current from recreated_topics "
                       "where topic = 'orders' order by partition").collect()
    assert [(r.partition, r.is_current) for r in listed] == [(0, False), (1, False)]

"""The offset expiry forecast (sql/offset_expiry.sql) and its rule EX-01 (sql/rules/EX-01.sql),
each on a hand-written lake whose every row is a case of Kafka 4.3.1's expiry logic (the view's
header names the classes and methods).

Settings in both lakes: offsets.retention.minutes 60, check interval 10 min, warning 2 h, recent
activity 24 h. ``S`` is the snapshot time (the newest raw record of ``s1``).
"""

from __future__ import annotations

import json
from pathlib import Path

from jobs.lake.views import register_lake
from support.lake_fixture import write_lake

M = 60_000
H = 60 * M
T0 = 1_795_000_000_000
S = T0 + 100 * H
SETTINGS = {"offsets_retention_minutes": 60, "offsets_retention_check_interval_ms": 10 * M,
            "expiry_warning_hours": 2, "recent_activity_hours": 24}
EX_01 = Path(__file__).resolve().parents[1] / "sql" / "rules" / "EX-01.sql"


def write_records(spark, lake: Path, rows: list[dict]) -> None:
    """``records`` rows whose ``value`` is given as a JSON-able object (the column is a variant,
    which write_lake cannot build from Python values)."""
    from pyspark.sql import functions as F

    from jobs.lake.delta import replace_snapshot
    from jobs.lake.views import contract_columns

    columns = contract_columns()["records"]
    ddl = ", ".join(f"`{n}` {'string' if n == 'value' else t}" for n, t in columns)
    for snapshot_id in sorted({row["snapshot_id"] for row in rows}):
        values = [tuple(json.dumps(row[n]) if n == "value" and row.get(n) is not None
                        else row.get(n) for n, _ in columns)
                  for row in rows if row["snapshot_id"] == snapshot_id]
        df = spark.createDataFrame(values, ddl).withColumn("value", F.parse_json("value"))
        replace_snapshot(df, lake, "records", snapshot_id)


def group(group_id, group_type, state, members=0, **extra) -> dict:
    return {"snapshot_id": "s1", "group_id": group_id, "group_type": group_type,
            "group_state": state, "member_count": members, "is_simple": False, **extra}


def offset(group_id, topic, partition, log_offset, commit_ms, **extra) -> dict:
    return dict(snapshot_id="s1", group_id=group_id, topic=topic, partition=partition,
                committed_offset=100 + log_offset, commit_timestamp=commit_ms,
                is_transactional=False, producer_id=-1, log_partition=0, log_offset=log_offset,
                **extra)


def commit_row(group_id, topic, partition, log_offset, outcome, tombstone=False) -> dict:
    return dict(snapshot_id="s1", group_id=group_id, topic=topic, partition=partition,
                outcome=outcome, is_tombstone=tombstone, log_partition=0, log_offset=log_offset)


def raw(offset_, timestamp, key, value=b"v", snapshot_id="s1") -> dict:
    return dict(snapshot_id=snapshot_id, partition=0, offset=offset_, timestamp=timestamp,
                key=key, value=value, is_control=False)


def keyed(offset_, group_id, record_type, value) -> dict:
    return dict(snapshot_id="s1", partition=0, offset=offset_, timestamp=S - 5 * H,
                record_type=record_type, group_id=group_id, is_tombstone=value is None,
                value=value)


def topology(*subtopologies) -> dict:
    return {"version": 0, "data": {"epoch": 0, "subtopologies": [
        {"subtopologyId": str(i), "sourceTopics": list(sources),
         "repartitionSourceTopics": [{"name": name} for name in repartition]}
        for i, (sources, repartition) in enumerate(subtopologies)]}}


def forecast_lake(spark, path: Path) -> Path:
    lake = write_lake(spark, path, {
        "groups": [
            group("g-simple", "classic", "Empty", is_simple=True),
            group("g-empty", "classic", "Empty", protocol_type="consumer",
                  current_state_timestamp=S - 20 * M),
            group("g-legacy", "classic", "Empty", protocol_type="consumer"),
            group("g-v1", "classic", "Empty", is_simple=True),
            group("g-stable", "classic", "Stable", 1, protocol_type="consumer",
                  current_state_timestamp=S - 6 * H),
            group("g-connect", "classic", "Stable", 1, protocol_type="connect"),
            group("g-cons", "consumer", "Stable", 1),
            group("g-txn", "consumer", "Empty"),
            group("g-cleared", "classic", "Empty", is_simple=True),
            group("g-txn2", "classic", "Empty", is_simple=True),
            group("g-streams", "streams", "Stable", 1),
            group("g-streams-idle", "streams", "Empty"),
            group("g-share", "share", "Empty"),
        ],
        "members": [
            dict(snapshot_id="s1", group_id="g-stable", member_id="c1",
                 subscribed_topic_names=["orders", "refunds"], uses_classic_protocol=True),
            dict(snapshot_id="s1", group_id="g-connect", member_id="w1",
                 subscribed_topic_names=[], uses_classic_protocol=True),
            dict(snapshot_id="s1", group_id="g-cons", member_id="m1",
                 subscribed_topic_names=["orders"], subscribed_topic_regex="click.*"),
            dict(snapshot_id="s1", group_id="g-streams", member_id="s1-m", subscribed_topic_names=[]),
        ],
        "offsets": [
            offset("g-simple", "orders", 0, 1, S - 30 * M),
            offset("g-simple", "orders", 1, 2, S - 2 * H),
            offset("g-empty", "orders", 0, 3, S - 5 * H),
            offset("g-legacy", "orders", 0, 4, S - 10 * M),
            offset("g-v1", "orders", 0, 5, S - 3 * H, expire_timestamp=S + 15 * M),
            offset("g-stable", "orders", 0, 6, S - 2 * H),
            offset("g-stable", "audit", 0, 7, S - 50 * M),
            offset("g-connect", "configs", 0, 8, S - 5 * H),
            offset("g-cons", "orders", 0, 9, S - 3 * H),
            offset("g-cons", "clicks", 0, 10, S - 3 * H),
            offset("g-cons", "old", 0, 11, S - 30 * M),
            offset("g-txn", "pay", 0, 12, S - 2 * H),
            offset("g-txn", "pay", 1, 13, S - 30 * M),
            offset("g-cleared", "x", 0, 52, S - 30 * M),
            offset("g-txn2", "a", 0, 14, S - 30 * M),
            offset("g-streams", "st-in", 0, 15, S - 3 * H),
            offset("g-streams", "st-rep", 0, 16, S - 3 * H),
            offset("g-streams", "st-old", 0, 17, S - 30 * M),
            offset("g-streams-idle", "st-in", 0, 18, S - 30 * M),
            offset("g-orphan", "o", 0, 19, S - 30 * M),
            offset("g-share", "s", 0, 20, S - 30 * M),
            dict(offset("g-simple", "orders", 0, 1, S - 30 * M), snapshot_id="s0"),
        ],
        "offset_commits": [
            commit_row("g-txn", "pay", 0, 40, "open"),        # pending: blocks pay-0
            commit_row("g-cleared", "x", 0, 50, "open"),      # cleared by the tombstone at 51
            commit_row("g-cleared", "x", 0, 51, "tombstone", tombstone=True),
            commit_row("g-cleared", "x", 0, 52, "non_transactional"),
            commit_row("g-txn2", "a", 1, 41, "open"),         # no committed offset of a-1
            commit_row("g-txn", "pay", 1, 42, "aborted"),     # ended: blocks nothing
        ],
        "raw_records": [
            raw(60, S - 5 * H, b"regex g-cons click.*"),
            raw(61, S - 5 * H, b"regex g-cons ol.*"),
            raw(62, S - 4 * H, b"regex g-cons ol.*", None),
            raw(63, S - 5 * H, b"topology g-streams"),
            raw(64, S - 4 * H, b"topology g-streams"),
            raw(65, S - 5 * H, b"topology g-streams-idle"),
            raw(100, S, b"latest"),
            raw(100, S + 50 * H, b"latest", snapshot_id="s0"),
        ],
    })
    write_records(spark, lake, [
        keyed(60, "g-cons", 16, {"version": 0, "data": {"topics": ["clicks"]}}),
        keyed(61, "g-cons", 16, {"version": 0, "data": {"topics": ["old"]}}),
        keyed(62, "g-cons", 16, None),
        keyed(63, "g-streams", 23, topology((["st-old"], []))),
        keyed(64, "g-streams", 23, topology((["st-in"], []), ([], ["st-rep"]))),
        keyed(65, "g-streams-idle", 23, topology((["st-in"], []))),
    ])
    return lake


COLUMNS = ("group_id, topic, partition, base_timestamp_kind, unix_millis(base_at), blocked_by, "
           "unix_millis(expires_at), ms_until_expiry, is_expired_at_snapshot, "
           "unix_millis(group_expires_at)")


def test_offset_expiry(spark, tmp_path):
    register_lake(spark, forecast_lake(spark, tmp_path / "forecast"), settings=SETTINGS)
    got = [tuple(r) for r in spark.sql(
        f"select {COLUMNS} from offset_expiry where snapshot_id = 's1' "
        "order by group_id, topic, partition").collect()]
    commit, state, expire = "commit_timestamp", "current_state_timestamp", "expire_timestamp"
    subscribed = "subscribed_by_members"
    assert got == [
        # the pending offset at 50 was cleared by the tombstone at 51
        ("g-cleared", "x", 0, commit, S - 30 * M, None, S + 30 * M, 30 * M, False, S + 30 * M),
        # connect workers: ClassicGroup.offsetExpirationCondition is empty while it has members
        ("g-connect", "configs", 0, commit, S - 5 * H, "non_consumer_protocol_members",
         None, None, False, None),
        # subscribed by name / by a live regex; "old" was a regex's, tombstoned since
        ("g-cons", "clicks", 0, commit, S - 3 * H, subscribed, None, None, False, None),
        ("g-cons", "old", 0, commit, S - 30 * M, None, S + 30 * M, 30 * M, False, None),
        ("g-cons", "orders", 0, commit, S - 3 * H, subscribed, None, None, False, None),
        # Empty classic group: from currentStateTimestamp, not the older commit
        ("g-empty", "orders", 0, state, S - 20 * M, None, S + 40 * M, 40 * M, False, S + 40 * M),
        # Empty classic group without currentStateTimestamp (GroupMetadata v0/v1): the commit
        ("g-legacy", "orders", 0, commit, S - 10 * M, None, S + 50 * M, 50 * M, False, S + 50 * M),
        # no group holds the id: cleanupGroupMetadata never visits it
        ("g-orphan", "o", 0, commit, S - 30 * M, "no_group", None, None, False, None),
        ("g-share", "s", 0, commit, S - 30 * M, "share_group", None, None, False, None),
        # the group is deleted with its last offset; one offset already due
        ("g-simple", "orders", 0, commit, S - 30 * M, None, S + 30 * M, 30 * M, False, S + 30 * M),
        ("g-simple", "orders", 1, commit, S - 2 * H, None, S - H, -H, True, S + 30 * M),
        # classic consumer group with members: subscribed topics stay, the others go (no deletion)
        ("g-stable", "audit", 0, commit, S - 50 * M, None, S + 10 * M, 10 * M, False, None),
        ("g-stable", "orders", 0, commit, S - 2 * H, subscribed, None, None, False, None),
        # topology source and repartition source topics; st-old was in a superseded topology
        ("g-streams", "st-in", 0, commit, S - 3 * H, subscribed, None, None, False, None),
        ("g-streams", "st-old", 0, commit, S - 30 * M, None, S + 30 * M, 30 * M, False, None),
        ("g-streams", "st-rep", 0, commit, S - 3 * H, subscribed, None, None, False, None),
        # Empty streams group: its topology protects nothing
        ("g-streams-idle", "st-in", 0, commit, S - 30 * M, None, S + 30 * M, 30 * M, False,
         S + 30 * M),
        # an open transaction holds pay-0; the group cannot go while it does
        ("g-txn", "pay", 0, commit, S - 2 * H, "pending_transaction", None, None, False, None),
        ("g-txn", "pay", 1, commit, S - 30 * M, None, S + 30 * M, 30 * M, False, None),
        # open transaction on a-1 (no committed offset there): a-0 goes, the group stays
        ("g-txn2", "a", 0, commit, S - 30 * M, None, S + 30 * M, 30 * M, False, None),
        # explicit expireTimestamp (value version 1): neither commit nor retention counts
        ("g-v1", "orders", 0, expire, S + 15 * M, None, S + 15 * M, 15 * M, False, S + 15 * M),
    ]
    detail = spark.sql(
        "select group_type, group_state, member_count, committed_offset, unix_millis(commit_at), "
        "unix_millis(expire_timestamp_at), unix_millis(removed_by_at), unix_millis(snapshot_at), "
        "log_partition, log_offset from offset_expiry "
        "where snapshot_id = 's1' and group_id = 'g-v1'").collect()
    assert [tuple(r) for r in detail] == [
        ("classic", "Empty", 0, 105, S - 3 * H, S + 15 * M, S + 25 * M, S, 0, 5)]
    # s0: its own snapshot time, and no group of that id in s0
    older = spark.sql("select group_id, blocked_by, unix_millis(snapshot_at) from offset_expiry "
                      "where snapshot_id = 's0'").collect()
    assert [tuple(r) for r in older] == [("g-simple", "no_group", S + 50 * H)]


# ---- EX-01 ------------------------------------------------------------------------------------

def activity(offset_, group_id, timestamp, record_type=1, tombstone=False) -> dict:
    return dict(snapshot_id="s1", partition=0, offset=offset_, timestamp=timestamp,
                record_type=record_type, group_id=group_id, is_tombstone=tombstone)


def ex01_lake(spark, path: Path) -> Path:
    lake = write_lake(spark, path, {
        "groups": [
            group("g-idle", "classic", "Empty", is_simple=True),
            group("g-live", "consumer", "Stable", 1),
            group("g-edge", "classic", "Empty", is_simple=True),
            group("g-dormant", "classic", "Empty", is_simple=True),
            group("g-tomb", "classic", "Empty", is_simple=True),
        ],
        "members": [dict(snapshot_id="s1", group_id="g-live", member_id="m1",
                         subscribed_topic_names=["orders"])],
        "offsets": [
            offset("g-idle", "orders", 0, 1, S - 50 * M),
            offset("g-idle", "orders", 1, 2, S - 40 * M),
            offset("g-idle", "orders", 2, 3, S - 70 * M),        # already due
            offset("g-live", "orders", 0, 4, S - 90 * M),        # subscribed: never due
            offset("g-live", "audit", 0, 5, S - 30 * M),
            offset("g-live", "audit", 1, 6, S),
            offset("g-live", "later", 0, 7, S - 48 * H, expire_timestamp=S + 2 * H + 1),
            offset("g-edge", "edge", 0, 8, S - 10 * M, expire_timestamp=S + 2 * H),
            offset("g-edge", "late", 0, 9, S - 10 * M, expire_timestamp=S + 2 * H + 1),
            offset("g-dormant", "d", 0, 10, S - 48 * H, expire_timestamp=S + 30 * M),
            offset("g-tomb", "t", 0, 11, S - 48 * H, expire_timestamp=S + 30 * M),
        ],
        "raw_records": [raw(100, S, b"latest")],
    })
    write_records(spark, lake, [
        activity(1, "g-idle", S - 50 * M), activity(2, "g-idle", S - 40 * M),
        activity(3, "g-idle", S - 70 * M),
        activity(4, "g-live", S - 48 * H), activity(5, "g-live", S - 48 * H),
        activity(8, "g-edge", S - 10 * M), activity(9, "g-edge", S - 10 * M),
        # older than recent_activity_hours (24): the near misses
        activity(10, "g-dormant", S - 48 * H, record_type=2),
        activity(11, "g-tomb", S - 48 * H),
        activity(12, "g-tomb", S - H, tombstone=True),    # an offset tombstone is no activity
    ])
    return lake


def test_ex01_warns_of_offsets_expiring_soon_and_only_those(spark, tmp_path):
    register_lake(spark, ex01_lake(spark, tmp_path / "ex01"), settings=SETTINGS)
    df = spark.sql(EX_01.read_text())
    assert df.columns == ["snapshot_id", "rule_id", "severity", "verdict", "group_id",
                          "member_id", "topic", "topic_id", "partition", "log_partition",
                          "log_offset", "evidence_log_offsets", "message", "details"]
    got = [r.asDict() for r in df.orderBy("group_id", "topic").collect()]
    for row in got:
        row["details"] = json.loads(row["details"])
    assert got == [
        dict(snapshot_id="s1", rule_id="EX-01", severity="medium", verdict="violation",
             group_id="g-edge", member_id=None, topic="edge", topic_id=None, partition=0,
             log_partition=0, log_offset=8, evidence_log_offsets=[8],
             message="Group 'g-edge' (no members, last active 0.2 h before the snapshot) loses "
                     "its committed offsets of 1 partition of topic 'edge': the first expires at "
                     "2026-11-22 17:06:40 UTC, 2.0 h after the snapshot; the group is deleted with its "
                     "last offset at 2026-11-22 17:06:40 UTC.",  # late-0, 1 ms after edge-0
             details=dict(partition_count=1, partitions=[0],
                          earliest_expires_at="2026-11-22T17:06:40.000Z",
                          latest_expires_at="2026-11-22T17:06:40.000Z",
                          base_timestamp_kinds=["expire_timestamp"], group_state="Empty",
                          member_count=0, last_activity_at="2026-11-22T14:56:40.000Z",
                          group_expires_at="2026-11-22T17:06:40.001Z",
                          snapshot_at="2026-11-22T15:06:40.000Z", offsets_retention_ms=H)),
        dict(snapshot_id="s1", rule_id="EX-01", severity="medium", verdict="violation",
             group_id="g-idle", member_id=None, topic="orders", topic_id=None, partition=2,
             log_partition=0, log_offset=3, evidence_log_offsets=[1, 2, 3],
             message="Group 'g-idle' (no members, last active 0.7 h before the snapshot) loses "
                     "its committed offsets of 3 partitions of topic 'orders': the first expires "
                     "at 2026-11-22 14:56:40 UTC, 0.2 h before the snapshot; the group is deleted "
                     "with its last offset at 2026-11-22 15:26:40 UTC.",
             details=dict(partition_count=3, partitions=[0, 1, 2],
                          earliest_expires_at="2026-11-22T14:56:40.000Z",
                          latest_expires_at="2026-11-22T15:26:40.000Z",
                          base_timestamp_kinds=["commit_timestamp"], group_state="Empty",
                          member_count=0, last_activity_at="2026-11-22T14:26:40.000Z",
                          group_expires_at="2026-11-22T15:26:40.000Z",
                          snapshot_at="2026-11-22T15:06:40.000Z", offsets_retention_ms=H)),
        dict(snapshot_id="s1", rule_id="EX-01", severity="low", verdict="violation",
             group_id="g-live", member_id=None, topic="audit", topic_id=None, partition=0,
             log_partition=0, log_offset=5, evidence_log_offsets=[5, 6],
             message="Group 'g-live' (1 member) loses its committed offsets of 2 partitions of "
                     "topic 'audit': the first expires at 2026-11-22 15:36:40 UTC, 0.5 h after "
                     "the snapshot.",
             details=dict(partition_count=2, partitions=[0, 1],
                          earliest_expires_at="2026-11-22T15:36:40.000Z",
                          latest_expires_at="2026-11-22T16:06:40.000Z",
                          base_timestamp_kinds=["commit_timestamp"], group_state="Stable",
                          member_count=1, last_activity_at="2026-11-20T15:06:40.000Z",
                          snapshot_at="2026-11-22T15:06:40.000Z", offsets_retention_ms=H)),
    ]

"""sql/migration_readiness.sql: would Kafka 4.3.1 convert each live group online (classic groups
upgraded when a consumer-protocol member joins, consumer groups downgraded when their last
consumer-protocol member leaves), and what stops it. The broker settings come from the
``settings`` view (conf/, Kafka's defaults); the tests of other settings pass them to
``register_lake``.
"""

from __future__ import annotations

import json

import pytest

from jobs.lake.views import register_lake
from support.lake_fixture import write_lake

COLUMNS = ["group_id", "direction", "group_type", "member_count", "is_ready", "blockers",
           "is_empty", "protocol_type", "classic_protocol_member_count",
           "consumer_protocol_member_count", "group_max_size", "group_max_size_config",
           "migration_policy", "malformed_subscription_count", "malformed_assignment_count",
           "custom_assignor_member_count", "log_partition", "log_offset"]
MAX = 2147483647
SUBSCRIPTION = {"topics": ["t"], "userData": None, "ownedPartitions": [], "generationId": 1}


def assignment(user_data=""):
    return {"assignedPartitions": [{"topic": "t", "partitions": [0]}], "userData": user_data}


def member(member_id, subscription=SUBSCRIPTION, assignment_blob=None):
    return {"memberId": member_id, "groupInstanceId": None, "clientId": "c", "clientHost": "/h",
            "rebalanceTimeout": 1000, "sessionTimeout": 1000, "subscription": subscription,
            "assignment": assignment() if assignment_blob is None else assignment_blob}


def group_metadata(offset, group_id, protocol_type, members):
    from pyspark.sql.types import VariantVal

    value = {"version": 3, "data": {"protocolType": protocol_type, "generation": 1,
                                    "protocol": "range", "leader": None, "members": members}}
    return dict(snapshot_id="s1", partition=0, offset=offset, record_type=2, group_id=group_id,
                is_tombstone=False, value=VariantVal.parseJson(json.dumps(value)))


def group(group_id, group_type, member_count, offset, protocol_type=None):
    return dict(snapshot_id="s1", group_id=group_id, group_type=group_type,
                protocol_type=protocol_type, member_count=member_count, log_partition=0,
                log_offset=offset)


def consumer_members(group_id, *classic_flags):
    return [dict(snapshot_id="s1", group_id=group_id, member_id=f"{group_id}-{i}",
                 uses_classic_protocol=flag) for i, flag in enumerate(classic_flags)]


@pytest.fixture(scope="module")
def migration_lake(spark, tmp_path_factory):
    """u-ready: consumer protocol, decoded blobs, an empty assignment and a null userData (fine);
    u-connect: another protocol type (its undecoded subscription is not checked); u-malformed:
    an empty subscription, an undecoded assignment, an assignment with userData; u-empty: a
    simple group. d-*: consumer groups with classic and consumer-protocol members, all
    consumer-protocol, all classic, none. A share group is neither."""
    return write_lake(spark, tmp_path_factory.mktemp("migration") / "lake", {
        "groups": [group("u-ready", "classic", 2, 10, "consumer"),
                   group("u-connect", "classic", 1, 11, "connect"),
                   group("u-malformed", "classic", 3, 12, "consumer"),
                   group("u-empty", "classic", 0, 13),
                   group("d-mixed", "consumer", 3, 20),
                   group("d-consumer", "consumer", 2, 21),
                   group("d-classic", "consumer", 2, 22),
                   group("d-empty", "consumer", 0, 23),
                   group("s-share", "share", 1, 24)],
        "records": [
            group_metadata(10, "u-ready", "consumer", [
                member("a", assignment_blob=assignment(None)), member("b", assignment_blob="")]),
            group_metadata(11, "u-connect", "connect", [member("a", subscription="AAE=")]),
            group_metadata(12, "u-malformed", "consumer", [
                member("a", subscription=""), member("b", assignment_blob="AAAA"),
                member("c", assignment_blob=assignment("AQID"))]),
            dict(snapshot_id="s1", partition=0, offset=13, record_type=1, group_id="u-empty",
                 is_tombstone=False)],
        "members": (consumer_members("d-mixed", True, True, False)
                    + consumer_members("d-consumer", False, False)
                    + consumer_members("d-classic", True, True)
                    + consumer_members("s-share", False))})


SETTING_KEYS = {"consumer_group_max_size": "group_consumer_max_size",
                "classic_group_max_size": "group_max_size",
                "migration_policy": "group_consumer_migration_policy"}


def readiness(spark, lake, **config) -> list[dict]:
    """The view's rows with these broker settings (the ``settings`` view; the rest at conf/'s)."""
    from jobs.runtime.config import load_section

    settings = {**load_section("insights"), **{SETTING_KEYS[k]: v for k, v in config.items()}}
    register_lake(spark, lake, settings=settings)
    df = spark.sql(f"select {', '.join(COLUMNS)} from migration_readiness "
                   "where snapshot_id = 's1' order by group_id, direction")
    return [r.asDict() for r in df.collect()]


def upgrade(group_id, members, ready, blockers, protocol_type="consumer", empty=False,
            counts=(0, 0, 0), offset=0, max_size=MAX, policy="bidirectional"):
    return dict(zip(COLUMNS, (
        group_id, "upgrade", "classic", members, ready, blockers, empty, protocol_type, None, None,
        max_size, "group.consumer.max.size", policy, *counts, 0, offset)))


def downgrade(group_id, members, ready, blockers, classic, consumer, empty=False, offset=0,
              max_size=MAX, policy="bidirectional"):
    return dict(zip(COLUMNS, (
        group_id, "downgrade", "consumer", members, ready, blockers, empty, None, classic,
        consumer, max_size, "group.max.size", policy, None, None, None, 0, offset)))


def test_migration_readiness(spark, migration_lake):
    register_lake(spark, migration_lake)
    got = [r.asDict() for r in spark.sql(
        f"select {', '.join(COLUMNS)} from migration_readiness order by group_id, direction"
    ).collect()]
    assert got == [
        downgrade("d-classic", 2, True, [], 2, 0, offset=22),
        downgrade("d-consumer", 2, False, ["no_classic_protocol_members"], 0, 2, offset=21),
        downgrade("d-empty", 0, True, [], 0, 0, empty=True, offset=23),
        downgrade("d-mixed", 3, True, [], 2, 1, offset=20),
        upgrade("u-connect", 1, False, ["protocol_type"], protocol_type="connect", offset=11),
        upgrade("u-empty", 0, True, [], protocol_type=None, empty=True, offset=13),
        upgrade("u-malformed", 3, False,
                ["malformed_subscription", "malformed_assignment", "custom_assignor_user_data"],
                counts=(1, 1, 1), offset=12),
        upgrade("u-ready", 2, True, [], offset=10),
    ]


def test_migration_readiness_group_sizes(spark, migration_lake):
    """group.consumer.max.size 3: a group of 3 leaves no room for the joining member, one of 2
    does; group.max.size 1: two classic-protocol members are too many, and empty groups are
    replaced whatever their size limit."""
    register_lake(spark, migration_lake)
    got = readiness(spark, migration_lake, consumer_group_max_size=3, classic_group_max_size=1)
    assert [(r["group_id"], r["direction"], r["is_ready"], r["blockers"], r["group_max_size"])
            for r in got] == [
        ("d-classic", "downgrade", False, ["group_size"], 1),
        ("d-consumer", "downgrade", False, ["no_classic_protocol_members"], 1),
        ("d-empty", "downgrade", True, [], 1),
        ("d-mixed", "downgrade", False, ["group_size"], 1),
        ("u-connect", "upgrade", False, ["protocol_type"], 3),
        ("u-empty", "upgrade", True, [], 3),
        ("u-malformed", "upgrade", False,
         ["group_size", "malformed_subscription", "malformed_assignment",
          "custom_assignor_user_data"], 3),
        ("u-ready", "upgrade", True, [], 3),
    ]
    near = readiness(spark, migration_lake, consumer_group_max_size=2, classic_group_max_size=2)
    assert {(r["group_id"], tuple(r["blockers"])) for r in near
            if r["group_id"] in ("u-ready", "d-mixed", "d-classic")} == {
        ("u-ready", ("group_size",)), ("d-mixed", ()), ("d-classic", ())}


@pytest.mark.parametrize("policy, upgrade_blocked, downgrade_blocked", [
    ("upgrade", False, True), ("downgrade", True, False), ("DISABLED", True, True)])
def test_migration_readiness_policy(spark, migration_lake, policy, upgrade_blocked,
                                    downgrade_blocked):
    """group.consumer.migration.policy (read lower-cased, ConsumerGroupMigrationPolicy.parse);
    empty groups are replaced whatever the policy."""
    register_lake(spark, migration_lake)
    got = {(r["group_id"], r["direction"]): r for r in readiness(spark, migration_lake, migration_policy=policy)}
    blocked = {key for key, r in got.items() if "migration_policy" in r["blockers"]}
    expected = set()
    if upgrade_blocked:
        expected |= {("u-ready", "upgrade"), ("u-connect", "upgrade"), ("u-malformed", "upgrade")}
    if downgrade_blocked:
        expected |= {("d-mixed", "downgrade"), ("d-consumer", "downgrade"),
                     ("d-classic", "downgrade")}
    assert blocked == expected
    assert got[("u-ready", "upgrade")]["is_ready"] is not upgrade_blocked
    assert got[("d-mixed", "downgrade")]["is_ready"] is not downgrade_blocked
    assert got[("u-empty", "upgrade")]["is_ready"] and got[("d-empty", "downgrade")]["is_ready"]
    assert {r["migration_policy"] for r in got.values()} == {policy}

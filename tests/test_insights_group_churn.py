"""sql/group_churn.sql (churn per group and hour) and its rule sql/rules/CH-01.sql (rebalance
storm), on a hand-written lake: the epochs the replay would write and the records they come from.

c-storm (consumer, partition 0): hour 0 has three group epoch bumps (a storm at threshold 3), two
joins, a target assignment epoch that is no bump, and a bump whose members (the last one the
static member's replacement) arrive in the next hour; hour 1 has a static member's temporary
leave (-2) and its restart under a new member id (its -1 tombstone is the same departure), a
dynamic leave, a rewrite of the same static member (no restart) and a bump nobody reached.
k-classic (partition 1): generation bumps, joins, leaves and a static restart read from
GroupMetadata, a record without changes, then an upgrade to a consumer group in hour 2 (two
generation bumps + one epoch bump: a storm by the sum).
s-share: a bump, an epoch decrease (no bump), a join at another epoch. orphan: a bump whose
record is not in `records` (type from `groups`). quiet: a first GroupMetadata record (no event).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from jobs.lake.views import register_lake
from support.lake_fixture import write_lake

H0 = 1_767_225_600_000          # 2026-01-01T00:00:00Z
HOUR = 3_600_000
H1, H2 = H0 + HOUR, H0 + 2 * HOUR
STORM = {"storm_epoch_bumps_per_hour": 3}
CH_01 = Path(__file__).resolve().parents[1] / "sql" / "rules" / "CH-01.sql"
COLUMNS = ["snapshot_id", "group_id", "group_type", "hour_at", "epoch_bumps", "joins", "leaves",
           "static_restarts", "generation_bumps", "max_converge_ms", "is_storm", "log_partition",
           "bump_log_offsets"]


def variant(data):
    from pyspark.sql.types import VariantVal

    return VariantVal.parseJson(json.dumps({"version": 0, "data": data}))


def rec(partition, offset, ts, record_type, group_id, member_id=None, data=None, snapshot="s1"):
    return dict(snapshot_id=snapshot, partition=partition, offset=offset, timestamp=ts,
                record_type=record_type, group_id=group_id, member_id=member_id,
                is_tombstone=data is None, value=None if data is None else variant(data))


def step(partition, offset, ts, group_id, kind, epoch, previous, member_id=None, snapshot="s1"):
    return dict(snapshot_id=snapshot, group_id=group_id, member_id=member_id, epoch_kind=kind,
                epoch=epoch, previous_epoch=previous, log_partition=partition, log_offset=offset,
                log_timestamp=ts)


def members(*pairs):
    return {"members": [{"memberId": m, "groupInstanceId": i} for m, i in pairs]}


def storm_records():
    """c-storm, partition 0: (record, epoch step or None) in log order."""
    g = "c-storm"
    return [
        (rec(0, 1, H0 + 1000, 3, g, data={"epoch": 1}), step(0, 1, H0 + 1000, g, "group", 1, 0)),
        (rec(0, 2, H0 + 1200, 5, g, "m1", {"instanceId": "i1"}), None),
        (rec(0, 3, H0 + 1500, 8, g, "m1", {"memberEpoch": 1}),
         step(0, 3, H0 + 1500, g, "member", 1, 0, "m1")),
        (rec(0, 4, H0 + 1600, 6, g, data={"assignmentEpoch": 1}),
         step(0, 4, H0 + 1600, g, "target_assignment", 1, 0)),
        (rec(0, 5, H0 + 2000, 3, g, data={"epoch": 2}), step(0, 5, H0 + 2000, g, "group", 2, 1)),
        (rec(0, 6, H0 + 2100, 5, g, "m2", {"instanceId": None}), None),
        (rec(0, 7, H0 + 2600, 8, g, "m2", {"memberEpoch": 2}),
         step(0, 7, H0 + 2600, g, "member", 2, 0, "m2")),
        (rec(0, 8, H0 + 2700, 8, g, "m1", {"memberEpoch": 2}),
         step(0, 8, H0 + 2700, g, "member", 2, 1, "m1")),
        # the last millisecond of hour 0; its members arrive in hour 1, the last of them the
        # static member's replacement m3 (1301 ms later)
        (rec(0, 9, H1 - 1, 3, g, data={"epoch": 3}), step(0, 9, H1 - 1, g, "group", 3, 2)),
        (rec(0, 10, H1 + 100, 8, g, "m1", {"memberEpoch": 3}),
         step(0, 10, H1 + 100, g, "member", 3, 2, "m1")),
        (rec(0, 11, H1 + 900, 8, g, "m2", {"memberEpoch": 3}),
         step(0, 11, H1 + 900, g, "member", 3, 2, "m2")),
        (rec(0, 12, H1 + 1000, 8, g, "m1", {"memberEpoch": -2}),
         step(0, 12, H1 + 1000, g, "member", -2, 3, "m1")),
        (rec(0, 13, H1 + 1100, 5, g, "m3", {"instanceId": "i1"}), None),
        (rec(0, 14, H1 + 1200, 8, g, "m1"), step(0, 14, H1 + 1200, g, "member", -1, -2, "m1")),
        (rec(0, 15, H1 + 1300, 8, g, "m3", {"memberEpoch": 3}),
         step(0, 15, H1 + 1300, g, "member", 3, 0, "m3")),
        (rec(0, 16, H1 + 2000, 8, g, "m2"), step(0, 16, H1 + 2000, g, "member", -1, 3, "m2")),
        (rec(0, 17, H1 + 5000, 3, g, data={"epoch": 4}), step(0, 17, H1 + 5000, g, "group", 4, 3)),
        (rec(0, 18, H1 + 6000, 5, g, "m3", {"instanceId": "i1"}), None),
    ]


def classic_records():
    """k-classic, partition 1: classic in hours 0 and 2, then upgraded to a consumer group."""
    g = "k-classic"
    return [
        (rec(1, 0, H0 + 100, 2, g, data={"generation": 0, "members": []}),
         step(1, 0, H0 + 100, g, "generation", 0, None)),
        (rec(1, 1, H0 + 200, 2, g, data={"generation": 1, **members(("a", None), ("b", "s1"))}),
         step(1, 1, H0 + 200, g, "generation", 1, 0)),
        (rec(1, 2, H0 + 300, 2, g, data={"generation": 2, **members(("a", None), ("b2", "s1"))}),
         step(1, 2, H0 + 300, g, "generation", 2, 1)),
        (rec(1, 3, H0 + 400, 2, g, data={"generation": 2, **members(("a", None), ("b2", "s1"))}),
         None),
        (rec(1, 4, H2 + 100, 2, g,
             data={"generation": 3, **members(("a", None), ("b2", "s1"), ("c", None))}),
         step(1, 4, H2 + 100, g, "generation", 3, 2)),
        (rec(1, 5, H2 + 200, 2, g,
             data={"generation": 4, **members(("a", None), ("b2", "s1"), ("c", None))}),
         step(1, 5, H2 + 200, g, "generation", 4, 3)),
        (rec(1, 6, H2 + 300, 2, g), None),
        (rec(1, 7, H2 + 400, 3, g, data={"epoch": 4}), step(1, 7, H2 + 400, g, "group", 4, 0)),
        (rec(1, 8, H2 + 410, 5, g, "a", {"instanceId": None}), None),
        (rec(1, 9, H2 + 420, 8, g, "a", {"memberEpoch": 4}),
         step(1, 9, H2 + 420, g, "member", 4, 0, "a")),
        (rec(1, 10, H2 + 430, 5, g, "b2", {"instanceId": "s1"}), None),
        (rec(1, 11, H2 + 440, 8, g, "b2", {"memberEpoch": 4}),
         step(1, 11, H2 + 440, g, "member", 4, 0, "b2")),
        (rec(1, 12, H2 + 450, 5, g, "c", {"instanceId": None}), None),
        (rec(1, 13, H2 + 1400, 8, g, "c", {"memberEpoch": 4}),
         step(1, 13, H2 + 1400, g, "member", 4, 0, "c")),
    ]


def other_records():
    return [
        (rec(2, 0, H0 + 10, 11, "s-share", data={"epoch": 5}),
         step(2, 0, H0 + 10, "s-share", "group", 5, 0)),
        (rec(2, 1, H0 + 20, 11, "s-share", data={"epoch": 2}),
         step(2, 1, H0 + 20, "s-share", "group", 2, 5)),
        (rec(2, 2, H0 + 30, 14, "s-share", "x", {"memberEpoch": 2}),
         step(2, 2, H0 + 30, "s-share", "member", 2, 0, "x")),
        (None, step(2, 50, H0 + 40, "orphan", "group", 1, 0)),
        (rec(2, 60, H0 + 50, 2, "quiet", data={"generation": 0, "members": []}),
         step(2, 60, H0 + 50, "quiet", "generation", 0, None)),
        # another snapshot of c-storm: rows stay apart
        (rec(0, 1, H0 + 1000, 3, "c-storm", data={"epoch": 1}, snapshot="s0"),
         step(0, 1, H0 + 1000, "c-storm", "group", 1, 0, snapshot="s0")),
    ]


@pytest.fixture(scope="module")
def churn_lake(spark, tmp_path_factory):
    pairs = storm_records() + classic_records() + other_records()
    return write_lake(spark, tmp_path_factory.mktemp("churn") / "lake", {
        "records": [r for r, _ in pairs if r is not None],
        "epochs": [e for _, e in pairs if e is not None],
        "groups": [dict(snapshot_id="s1", group_id="c-storm", group_type="consumer"),
                   dict(snapshot_id="s1", group_id="k-classic", group_type="consumer"),
                   dict(snapshot_id="s1", group_id="orphan", group_type="streams")]})


def at(ms: int) -> str:
    """An hour as the test reads ``hour_at`` (text in UTC)."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M")


def churn(snapshot, group_id, group_type, hour_at, bumps, joins, leaves, restarts, generations,
          converge, storm, partition, offsets):
    return dict(zip(COLUMNS, (snapshot, group_id, group_type, at(hour_at), bumps, joins, leaves,
                              restarts, generations, converge, storm, partition, offsets)))


def test_group_churn(spark, churn_lake):
    register_lake(spark, churn_lake, settings=STORM)
    selected = ", ".join("date_format(hour_at, 'yyyy-MM-dd HH:mm') as hour_at"
                         if c == "hour_at" else c for c in COLUMNS)
    got = [r.asDict() for r in spark.sql(
        f"select {selected} from group_churn order by snapshot_id, group_id, hour_at").collect()]
    assert got == [
        churn("s0", "c-storm", "consumer", H0, 1, 0, 0, 0, 0, None, False, 0, [1]),
        churn("s1", "c-storm", "consumer", H0, 3, 2, 0, 0, 0, 1301, True, 0, [1, 5, 9]),
        churn("s1", "c-storm", "consumer", H1, 1, 1, 2, 1, 0, None, False, 0, [17]),
        churn("s1", "k-classic", "classic", H0, 0, 3, 1, 1, 2, None, False, 1, [1, 2]),
        churn("s1", "k-classic", "consumer", H2, 1, 4, 3, 0, 2, 1000, True, 1, [4, 5, 7]),
        churn("s1", "orphan", "streams", H0, 1, 0, 0, 0, 0, None, False, 2, [50]),
        churn("s1", "s-share", "share", H0, 1, 1, 0, 0, 0, None, False, 2, [0]),
    ]


def test_group_churn_storm_threshold_comes_from_settings(spark, churn_lake):
    """At the default threshold (20 bumps an hour) no hour of the lake is a storm."""
    register_lake(spark, churn_lake, settings={})
    assert spark.sql("select count_if(is_storm) as n, count(*) as hours from group_churn"
                     ).first().asDict() == dict(n=0, hours=7)


def test_ch01_finds_each_stormy_hour(spark, churn_lake):
    register_lake(spark, churn_lake, settings=STORM)
    got = [r.asDict() for r in spark.sql(CH_01.read_text()).orderBy("group_id").collect()]
    assert got == [
        dict(snapshot_id="s1", rule_id="CH-01", severity="medium", verdict="violation",
             group_id="c-storm", member_id=None, topic=None, topic_id=None, partition=None,
             log_partition=0, log_offset=9, evidence_log_offsets=[1, 5, 9],
             message="Group c-storm (consumer) rebalanced 3 times in the hour from 2026-01-01 "
                     "00:00 UTC (3 group epoch bumps, 0 generation bumps; threshold 3): 2 joins, "
                     "0 leaves, 0 static member restarts, slowest convergence 1301 ms.",
             details=json.dumps(dict(
                 hour_at="2026-01-01T00:00:00Z", group_type="consumer", epoch_bumps=3,
                 generation_bumps=0, joins=2, leaves=0, static_restarts=0, max_converge_ms=1301,
                 storm_epoch_bumps_per_hour=3, bump_count=3), separators=(",", ":"))),
        dict(snapshot_id="s1", rule_id="CH-01", severity="medium", verdict="violation",
             group_id="k-classic", member_id=None, topic=None, topic_id=None, partition=None,
             log_partition=1, log_offset=7, evidence_log_offsets=[4, 5, 7],
             message="Group k-classic (consumer) rebalanced 3 times in the hour from 2026-01-01 "
                     "02:00 UTC (1 group epoch bumps, 2 generation bumps; threshold 3): 4 joins, "
                     "3 leaves, 0 static member restarts, slowest convergence 1000 ms.",
             details=json.dumps(dict(
                 hour_at="2026-01-01T02:00:00Z", group_type="consumer", epoch_bumps=1,
                 generation_bumps=2, joins=4, leaves=3, static_restarts=0, max_converge_ms=1000,
                 storm_epoch_bumps_per_hour=3, bump_count=3), separators=(",", ":"))),
    ]


def test_ch01_near_miss_one_bump_below_the_threshold(spark, churn_lake):
    """At threshold 4 the two hours of three bumps are no storm: no finding."""
    register_lake(spark, churn_lake, settings={"storm_epoch_bumps_per_hour": 4})
    assert spark.sql(CH_01.read_text()).collect() == []


def test_ch01_without_convergence_says_so(spark, churn_lake):
    """At threshold 1 every hour with a bump is a storm; c-storm's hour 1 bump was never reached:
    no convergence in the message, a null in the details."""
    register_lake(spark, churn_lake, settings={"storm_epoch_bumps_per_hour": 1})
    findings = spark.sql(CH_01.read_text())
    assert sorted((r.snapshot_id, r.group_id, r.log_offset) for r in findings.collect()) == [
        ("s0", "c-storm", 1), ("s1", "c-storm", 1), ("s1", "c-storm", 17), ("s1", "k-classic", 1),
        ("s1", "k-classic", 4), ("s1", "orphan", 50), ("s1", "s-share", 0)]
    row = findings.where("snapshot_id = 's1' and group_id = 'c-storm' and log_offset = 17").first()
    assert row.message == (
        "Group c-storm (consumer) rebalanced 1 times in the hour from 2026-01-01 01:00 UTC "
        "(1 group epoch bumps, 0 generation bumps; threshold 1): 1 joins, 2 leaves, 1 static "
        "member restarts.")
    assert json.loads(row.details)["max_converge_ms"] is None
    assert row.evidence_log_offsets == [17]

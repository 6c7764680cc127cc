"""sql/stale_offsets.sql on a hand-written lake: committed offsets of groups with members for
topics no member subscribes to, by name, through a resolved regular expression (the latest
ConsumerGroupRegularExpression record, its key read from the raw bytes) or, for a regex without
a live resolution, by a full match with rlike.

Groups of ``s1``:

* ``g-cons`` (consumer): m1 names ``orders``; m2 subscribes to ``pay-.*``, resolved first to
  [pay-eu, pay-us] and then to [pay-eu] only: the latest resolution counts, so pay-us is stale
  although the regex matches its name; ``legacy`` is stale.
* ``g-regex`` (consumer): m3 subscribes to ``evt\\.[a-z]+`` with no resolution record: evt.click
  matches; evt.2 does not, nor xevt.click (a full match, not a find).
* ``g-tomb`` (consumer): the resolution of ``log-.*`` was tombstoned: the regex is matched
  directly, log-a is subscribed.
* ``g-classic`` (classic, protocol type consumer): its member's ConsumerProtocolSubscription
  names ``orders``: refunds is stale.
* Left out: ``g-re2`` (an unresolved regex with RE2-only syntax), ``g-nosub`` (a member with no
  subscription), ``g-connect`` (classic protocol type connect), ``g-streams``, ``g-empty`` (no
  members).

Snapshot ``s0`` holds the same g-cons without its regex member: its pay offsets are stale there,
and s1's resolution records must not reach it.
"""

from __future__ import annotations

import json
import struct

from pyspark.sql.types import VariantVal

from jobs.lake.views import register_lake
from support.lake_fixture import write_lake

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def regex_key(group_id: str, regex: str) -> bytes:
    """ConsumerGroupRegularExpressionKey as the coordinator writes it: int16 type 16, then two
    non-flexible strings (int16 length, UTF-8)."""
    out = struct.pack(">h", 16)
    for text in (group_id, regex):
        raw = text.encode()
        out += struct.pack(">h", len(raw)) + raw
    return out


def regex_record(snapshot_id, partition, offset, group_id, regex, topics):
    """The raw row and the decoded row of one type-16 record (``topics`` None: a tombstone)."""
    value = None if topics is None else VariantVal.parseJson(json.dumps(
        {"version": 0, "data": {"topics": topics, "version": 7, "timestamp": T0}}))
    raw = dict(snapshot_id=snapshot_id, partition=partition, offset=offset, timestamp=T0,
               key=regex_key(group_id, regex), is_control=False)
    decoded = dict(snapshot_id=snapshot_id, partition=partition, offset=offset, timestamp=T0,
                   record_type=16, group_id=group_id, is_tombstone=topics is None, value=value)
    return raw, decoded


RESOLUTIONS = [
    regex_record("s1", 0, 20, "g-cons", "pay-.*", ["pay-eu", "pay-us"]),
    regex_record("s1", 0, 25, "g-cons", "pay-.*", ["pay-eu"]),
    # Same regex text in another group: must not resolve g-regex's or g-cons's members.
    regex_record("s1", 1, 26, "g-other", "evt\\.[a-z]+", []),
    regex_record("s1", 2, 30, "g-tomb", "log-.*", ["log-b"]),
    regex_record("s1", 2, 31, "g-tomb", "log-.*", None),
]


def group(snapshot_id, group_id, group_type, members, protocol_type=None):
    return dict(snapshot_id=snapshot_id, group_id=group_id, group_type=group_type,
                group_state="Stable" if members else "Empty", protocol_type=protocol_type,
                member_count=members)


def member(snapshot_id, group_id, member_id, names=(), regex=None):
    return dict(snapshot_id=snapshot_id, group_id=group_id, member_id=member_id,
                subscribed_topic_names=list(names), subscribed_topic_regex=regex)


def offset(snapshot_id, group_id, topic, log_offset, partition=0):
    return dict(snapshot_id=snapshot_id, group_id=group_id, topic=topic, partition=partition,
                committed_offset=100 + log_offset, commit_timestamp=T0 + log_offset * 1000,
                log_partition=0, log_offset=log_offset)


TABLES = {
    "raw_records": [raw for raw, _ in RESOLUTIONS],
    "records": [decoded for _, decoded in RESOLUTIONS],
    "groups": [
        group("s1", "g-cons", "consumer", 2), group("s1", "g-regex", "consumer", 1),
        group("s1", "g-tomb", "consumer", 1),
        group("s1", "g-classic", "classic", 1, protocol_type="consumer"),
        group("s1", "g-re2", "consumer", 1), group("s1", "g-nosub", "consumer", 1),
        group("s1", "g-connect", "classic", 1, protocol_type="connect"),
        group("s1", "g-streams", "streams", 1), group("s1", "g-empty", "consumer", 0),
        group("s0", "g-cons", "consumer", 1),
    ],
    "members": [
        member("s1", "g-cons", "m1", ["orders"]), member("s1", "g-cons", "m2", regex="pay-.*"),
        member("s1", "g-regex", "m3", regex="evt\\.[a-z]+"),
        member("s1", "g-tomb", "m4", regex="log-.*"),
        member("s1", "g-classic", "c1", ["orders"]),
        member("s1", "g-re2", "m5", regex="(?P<region>eu|us)-.*"),
        member("s1", "g-nosub", "m6"),
        member("s1", "g-connect", "k1"),
        member("s1", "g-streams", "s1"),
        member("s0", "g-cons", "m1", ["orders"]),
    ],
    "offsets": [
        offset("s1", "g-cons", "orders", 1), offset("s1", "g-cons", "pay-eu", 2),
        offset("s1", "g-cons", "pay-us", 3), offset("s1", "g-cons", "legacy", 4),
        offset("s1", "g-cons", "legacy", 5, partition=1),
        offset("s1", "g-regex", "evt.click", 6), offset("s1", "g-regex", "evt.2", 7),
        offset("s1", "g-regex", "xevt.click", 8),
        offset("s1", "g-tomb", "log-a", 9),
        offset("s1", "g-classic", "orders", 10), offset("s1", "g-classic", "refunds", 11),
        offset("s1", "g-re2", "zzz", 12), offset("s1", "g-nosub", "zzz", 13),
        offset("s1", "g-connect", "zzz", 14), offset("s1", "g-streams", "zzz", 15),
        offset("s1", "g-empty", "zzz", 16),
        offset("s0", "g-cons", "orders", 1), offset("s0", "g-cons", "pay-eu", 2),
    ],
}


def stale(group_id, group_type, topic, log_offset, reason, partition=0):
    return dict(group_id=group_id, group_type=group_type, topic=topic, partition=partition,
                committed_offset=100 + log_offset,
                commit_at=f"2026-01-01T00:00:{log_offset:02d}.000Z", subscribed_by=None,
                reason=reason, log_partition=0, log_offset=log_offset)


def rows(spark, snapshot_id):
    df = spark.sql(
        "select group_id, group_type, topic, partition, committed_offset, commit_at, "
        "subscribed_by, reason, log_partition, log_offset from stale_offsets "
        f"where snapshot_id = '{snapshot_id}' order by group_id, topic, partition")
    payload = df.selectExpr("to_json(struct(*), map('ignoreNullFields', 'false')) as j")
    return [json.loads(r.j) for r in payload.collect()]


def test_stale_offsets(spark, tmp_path):
    lake = write_lake(spark, tmp_path / "lake", TABLES)
    register_lake(spark, lake)
    cons = "no member names it (2 members); not in the resolved topics of pay-.*"
    regex = "no member names it (1 member); no full match with evt\\.[a-z]+"
    assert rows(spark, "s1") == [
        stale("g-classic", "classic", "refunds", 11, "no member names it (1 member)"),
        stale("g-cons", "consumer", "legacy", 4, cons),
        stale("g-cons", "consumer", "legacy", 5, cons, partition=1),
        stale("g-cons", "consumer", "pay-us", 3, cons),
        stale("g-regex", "consumer", "evt.2", 7, regex),
        stale("g-regex", "consumer", "xevt.click", 8, regex),
    ]
    assert rows(spark, "s0") == [
        stale("g-cons", "consumer", "pay-eu", 2, "no member names it (1 member)")]

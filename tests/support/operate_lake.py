"""One hand-written lake for the SQL views, the quality suites and the report.

Snapshot ``s1``: a consumer group ``g-cons`` mid-reconciliation (target epoch 5, member m2 still at
4 with partition orders-1 pending revocation to m1, static member m3 left at -2), a classic group
``g-classic`` with an open transaction, a consumer group ``g-assigning`` whose target lags its
group epoch, audit findings and downgrade findings. Snapshot ``s0`` holds one older row of
``g-cons`` (target epoch 9) that must never leak into ``s1``'s answers.
"""

from __future__ import annotations

T0 = 1_795_000_000_000  # 2026-11-18T11:06:40Z, ms


def _ms(seconds: float) -> int:
    return T0 + int(seconds * 1000)


def _rows(snapshot_id, rows):
    return [{"snapshot_id": snapshot_id, **row} for row in rows]


GROUPS = _rows("s1", [
    dict(group_id="g-cons", group_type="consumer", group_state="Reconciling", is_simple=False,
         group_epoch=5, target_assignment_epoch=5, member_count=3, log_partition=0, log_offset=23),
    dict(group_id="g-classic", group_type="classic", group_state="Stable", is_simple=False,
         generation=3, protocol_type="consumer", protocol="range", member_count=1,
         log_partition=1, log_offset=30),
    dict(group_id="g-assigning", group_type="consumer", group_state="Assigning", is_simple=False,
         group_epoch=4, target_assignment_epoch=3, member_count=1, log_partition=2, log_offset=5),
]) + _rows("s0", [
    dict(group_id="g-cons", group_type="consumer", group_state="Stable", is_simple=False,
         group_epoch=9, target_assignment_epoch=9, member_count=0, log_partition=0, log_offset=99),
])

MEMBERS = _rows("s1", [
    dict(group_id="g-cons", member_id="m1", client_id="c1", member_epoch=5, previous_member_epoch=4,
         member_state="STABLE", uses_classic_protocol=False, log_partition=0, log_offset=22),
    dict(group_id="g-cons", member_id="m2", client_id="c2", instance_id="i2", member_epoch=4,
         previous_member_epoch=3, member_state="UNREVOKED_PARTITIONS", uses_classic_protocol=False,
         log_partition=0, log_offset=13),
    dict(group_id="g-cons", member_id="m3", client_id="c3", instance_id="i3", member_epoch=-2,
         previous_member_epoch=4, member_state="STABLE", uses_classic_protocol=False,
         log_partition=0, log_offset=23),
    dict(group_id="g-classic", member_id="c1", client_id="cc", uses_classic_protocol=True,
         session_timeout_ms=45000, log_partition=1, log_offset=30),
    dict(group_id="g-assigning", member_id="a1", member_epoch=3, previous_member_epoch=2,
         member_state="STABLE", uses_classic_protocol=False, log_partition=2, log_offset=4),
])

ORDERS = dict(topic_id="id-orders", topic_name="orders")
MEMBER_ASSIGNMENTS = _rows("s1", [
    dict(group_id="g-cons", member_id="m1", **ORDERS, partition=0, assignment_epoch=5,
         assignment_epoch_source="explicit", is_pending_revocation=False, log_partition=0, log_offset=22),
    dict(group_id="g-cons", member_id="m2", **ORDERS, partition=1, assignment_epoch=3,
         assignment_epoch_source="explicit", is_pending_revocation=True, log_partition=0, log_offset=13),
    dict(group_id="g-cons", member_id="m2", **ORDERS, partition=2, assignment_epoch=4,
         assignment_epoch_source="explicit", is_pending_revocation=False, log_partition=0, log_offset=13),
    dict(group_id="g-classic", member_id="c1", topic_name="pay", partition=0, assignment_epoch=3,
         assignment_epoch_source="classic", is_pending_revocation=False, log_partition=1, log_offset=30),
])

TARGET_ASSIGNMENTS = _rows("s1", [
    dict(group_id="g-cons", member_id="m1", **ORDERS, partition=0, target_assignment_epoch=5,
         log_partition=0, log_offset=20),
    dict(group_id="g-cons", member_id="m1", **ORDERS, partition=1, target_assignment_epoch=5,
         log_partition=0, log_offset=20),
    dict(group_id="g-cons", member_id="m2", **ORDERS, partition=2, target_assignment_epoch=5,
         log_partition=0, log_offset=20),
])

OFFSETS = _rows("s1", [
    dict(group_id="g-cons", topic="orders", partition=0, committed_offset=100, commit_timestamp=_ms(12),
         producer_id=-1, is_transactional=False, log_partition=0, log_offset=24),
    dict(group_id="g-cons", topic="orders", partition=1, committed_offset=50, commit_timestamp=_ms(13),
         producer_id=-1, is_transactional=False, log_partition=0, log_offset=25),
    dict(group_id="g-classic", topic="pay", partition=0, committed_offset=7, topic_id="id-pay",
         commit_timestamp=_ms(20), expire_timestamp=_ms(3600), producer_id=-1,
         is_transactional=False, log_partition=1, log_offset=31),
    dict(group_id="g-classic", topic="pay", partition=1, committed_offset=None, producer_id=-1,
         is_transactional=False, log_partition=1, log_offset=32),
])


def _epoch(kind, epoch, previous, offset, seconds, member=None, group="g-cons", partition=0):
    return dict(group_id=group, member_id=member, epoch_kind=kind, epoch=epoch,
                previous_epoch=previous, log_partition=partition, log_offset=offset,
                log_timestamp=_ms(seconds))


EPOCHS = _rows("s1", [
    _epoch("group", 4, 3, 10, 1),
    _epoch("target_assignment", 4, 3, 11, 1),
    _epoch("member", 4, 3, 12, 1.5, "m1"),
    _epoch("member", 4, 3, 13, 3, "m2"),
    _epoch("member", 4, 3, 14, 2.5, "m3"),
    _epoch("group", 5, 4, 20, 10),
    _epoch("target_assignment", 5, 4, 21, 10),
    _epoch("member", 5, 4, 22, 12, "m1"),
    _epoch("member", -2, 4, 23, 13, "m3"),
    _epoch("generation", 3, 2, 30, 20, group="g-classic", partition=1),
])

TRANSACTIONS = _rows("s1", [
    dict(group_id="g-classic", producer_id=7, first_log_offset=40, last_log_offset=41,
         outcome="open", offset_count=2, log_partition=1, log_offset=41),
    dict(group_id="g-classic", producer_id=8, first_log_offset=33, last_log_offset=33,
         marker_log_offset=34, outcome="COMMIT", offset_count=1, log_partition=1, log_offset=34),
])

OFFSET_COMMITS = _rows("s1", [
    dict(group_id="g-classic", topic="pay", partition=0, committed_offset=9, producer_id=7,
         is_transactional=True, outcome="open", is_installed=False, log_partition=1, log_offset=40,
         log_timestamp=_ms(40)),
    dict(group_id="g-classic", topic="refunds", partition=0, committed_offset=3, producer_id=7,
         is_transactional=True, outcome="open", is_installed=False, log_partition=1, log_offset=41,
         log_timestamp=_ms(41)),
    dict(group_id="g-classic", topic="pay", partition=0, committed_offset=7, producer_id=8,
         is_transactional=True, outcome="committed", is_installed=True, log_partition=1,
         log_offset=33, log_timestamp=_ms(33)),
])


def _raw(partition, offset, seconds, source, is_control=False):
    return dict(partition=partition, offset=offset, timestamp=_ms(seconds), is_control=is_control,
                source_file=source, magic=2, crc_valid=True)


RAW_RECORDS = _rows("s1", [
    _raw(0, 10, 1, "p0.log"), _raw(0, 11, 1, "p0.log"), _raw(1, 30, 20, "p1.log"),
    _raw(1, 31, 41, "p1.log"), _raw(1, 34, 42, "p1.log", is_control=True),
])
RECORDS = _rows("s1", [
    dict(partition=0, offset=10, timestamp=_ms(1), record_type=3, group_id="g-cons"),
    dict(partition=0, offset=11, timestamp=_ms(1), record_type=6, group_id="g-cons"),
    dict(partition=1, offset=30, timestamp=_ms(20), record_type=2, group_id="g-classic"),
])
QUARANTINE = _rows("s1", [
    dict(stage="decode", reason="unknown_version", partition=1, offset=31, source_file="p1.log"),
    dict(stage="batch", reason="bad_crc", partition=1, offset=50, source_file="p1.log"),
])

FINDINGS = _rows("s1", [
    dict(rule_id="CG-03", severity="high", verdict="violation", group_id="g-cons", member_id="m1",
         log_partition=0, log_offset=21, message="target above group"),
    dict(rule_id="CG-03", severity="high", verdict="violation", group_id="g-assigning",
         log_partition=2, log_offset=5, message="target above group"),
    dict(rule_id="CG-10", severity="info", verdict="notice", group_id="g-cons", member_id="m2",
         log_partition=0, log_offset=12, message="null assignment epochs"),
])
DOWNGRADE_FINDINGS = _rows("s1", [
    dict(target_version="3.9", partition=0, group_id="g-cons", rule_id="DU-2",
         **{"class": "READ-AS-LATEST"}, severity="medium", record_count=4),
    dict(target_version="3.9", partition=1, group_id="g-classic", rule_id="DU-3",
         **{"class": "DROP"}, severity="high", record_count=2),
    dict(target_version="4.0", partition=0, group_id="g-cons", rule_id="DU-2",
         **{"class": "BREAK"}, severity="critical", record_count=4),
    dict(target_version="4.3", partition=0, group_id="g-cons", rule_id="DU-9",
         **{"class": "INFO"}, severity="info", record_count=1),
])

# Lag as two captures read it: s0 an hour earlier (g-cons behind by 30), s1 (behind by 15).
LAG = _rows("s0", [
    dict(group_id="g-cons", topic="orders", partition=0, committed_offset=90, log_start_offset=0,
         log_end_offset=120, lag=30, read_at=_ms(-3600), is_committed_below_log_start=False),
]) + _rows("s1", [
    dict(group_id="g-cons", topic="orders", partition=0, committed_offset=100, log_start_offset=0,
         log_end_offset=110, lag=10, read_at=_ms(43), is_committed_below_log_start=False),
    dict(group_id="g-cons", topic="orders", partition=1, committed_offset=50, log_start_offset=60,
         log_end_offset=55, lag=5, read_at=_ms(43), is_committed_below_log_start=True),
])

TABLES = {
    "groups": GROUPS, "members": MEMBERS, "member_assignments": MEMBER_ASSIGNMENTS,
    "target_assignments": TARGET_ASSIGNMENTS, "offsets": OFFSETS, "epochs": EPOCHS,
    "transactions": TRANSACTIONS, "offset_commits": OFFSET_COMMITS, "raw_records": RAW_RECORDS,
    "records": RECORDS, "quarantine": QUARANTINE, "findings": FINDINGS,
    "downgrade_findings": DOWNGRADE_FINDINGS, "lag": LAG,
}

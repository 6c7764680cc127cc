"""Every view in sql/ runs on a hand-written lake (tests/support/operate_lake.py) and answers
exactly what that lake says; `offsetlake sql` queries them by name and at its prompt."""

from __future__ import annotations

import json
import re
from pathlib import Path
import sys
import subprocess
import os
from datetime import datetime, UTC

import pytest

from jobs.lake.views import MATERIALIZED, read_by, register_lake, view_files
from support.lake_fixture import operate_lake, write_lake
from support.operate_lake import T0, TABLES


def at(seconds: float) -> str:
    """A timestamp T0 + seconds as Spark's to_json writes it (session time zone UTC)."""
    ms = T0 + int(seconds * 1000)
    moment = datetime.fromtimestamp(ms // 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory):
    path = operate_lake(spark, tmp_path_factory)
    register_lake(spark, path)
    return path


def rows(spark, view, columns, snapshot_id="s1", order=None):
    """``columns`` of ``view`` for one snapshot, as dicts (nulls kept, timestamps as text)."""
    order = order or columns[:2]
    df = spark.sql(f"select {', '.join(columns)} from {view} where snapshot_id = '{snapshot_id}' "
                   f"order by {', '.join(order)}")
    payload = df.selectExpr("to_json(struct(*), map('ignoreNullFields', 'false')) as j")
    return [json.loads(r.j) for r in payload.collect()]


def test_group_overview(spark, lake):
    got = rows(spark, "group_overview",
               ["group_id", "group_state", "static_member_count", "classic_protocol_member_count",
                "unconverged_member_count", "owned_partition_count", "pending_revocation_count",
                "committed_partition_count", "last_committed_at", "last_epoch_change_at",
                "is_assigning", "is_converged"], order=["group_id"])
    assert got == [
        dict(group_id="g-assigning", group_state="Assigning", static_member_count=0,
             classic_protocol_member_count=0, unconverged_member_count=0, owned_partition_count=0,
             pending_revocation_count=0, committed_partition_count=0, last_committed_at=None,
             last_epoch_change_at=None, is_assigning=True, is_converged=True),
        dict(group_id="g-classic", group_state="Stable", static_member_count=0,
             classic_protocol_member_count=1, unconverged_member_count=0, owned_partition_count=1,
             pending_revocation_count=0, committed_partition_count=1, last_committed_at=at(20),
             last_epoch_change_at=at(20), is_assigning=False, is_converged=True),
        dict(group_id="g-cons", group_state="Reconciling", static_member_count=2,
             classic_protocol_member_count=0, unconverged_member_count=1, owned_partition_count=3,
             pending_revocation_count=1, committed_partition_count=2, last_committed_at=at(13),
             last_epoch_change_at=at(13), is_assigning=False, is_converged=False),
    ]
    # s1's members never count against s0's g-cons (target 9).
    assert rows(spark, "group_overview", ["group_id", "unconverged_member_count", "is_converged"],
                snapshot_id="s0") == [dict(group_id="g-cons", unconverged_member_count=0,
                                           is_converged=True)]


def test_members_not_converged(spark, lake):
    got = rows(spark, "members_not_converged",
               ["group_id", "member_id", "member_epoch", "target_assignment_epoch", "epochs_behind",
                "pending_revocation_count", "has_pending_revocation", "log_offset"])
    # m3 (-2, a static member that left) is out of the epoch order; a1 is at its target.
    assert got == [dict(group_id="g-cons", member_id="m2", member_epoch=4, target_assignment_epoch=5,
                        epochs_behind=1, pending_revocation_count=1, has_pending_revocation=True,
                        log_offset=13)]
    assert rows(spark, "members_not_converged", ["group_id"], snapshot_id="s0") == []


def test_long_reconciliations(spark, lake):
    got = rows(spark, "long_reconciliations",
               ["group_id", "target_assignment_epoch", "target_set_at", "last_member_arrived_at",
                "arrived_member_count", "pending_member_count", "reconciliation_ms",
                "is_superseded", "is_in_progress", "set_log_offset"])
    assert got == [
        dict(group_id="g-cons", target_assignment_epoch=4, target_set_at=at(1),
             last_member_arrived_at=at(3), arrived_member_count=3, pending_member_count=0,
             reconciliation_ms=2000, is_superseded=True, is_in_progress=False, set_log_offset=11),
        dict(group_id="g-cons", target_assignment_epoch=5, target_set_at=at(10),
             last_member_arrived_at=at(12), arrived_member_count=1, pending_member_count=1,
             reconciliation_ms=2000, is_superseded=False, is_in_progress=True, set_log_offset=21),
    ]


def test_partitions_pending_revocation(spark, lake):
    got = rows(spark, "partitions_pending_revocation",
               ["group_id", "owner_member_id", "owner_member_epoch", "owner_member_state",
                "topic_name", "partition", "assignment_epoch", "target_member_id",
                "is_unassigned_in_target"])
    assert got == [dict(group_id="g-cons", owner_member_id="m2", owner_member_epoch=4,
                        owner_member_state="UNREVOKED_PARTITIONS", topic_name="orders", partition=1,
                        assignment_epoch=3, target_member_id="m1", is_unassigned_in_target=False)]


def test_committed_offsets(spark, lake):
    got = rows(spark, "committed_offsets",
               ["group_id", "group_type", "topic_name", "topic_id", "partition", "committed_offset",
                "committed_at", "expires_at"], order=["group_id", "topic_name", "partition"])
    # The tombstoned pay-1 is gone; orders' id comes from the assignments naming it.
    assert got == [
        dict(group_id="g-classic", group_type="classic", topic_name="pay", topic_id="id-pay",
             partition=0, committed_offset=7, committed_at=at(20), expires_at=at(3600)),
        dict(group_id="g-cons", group_type="consumer", topic_name="orders", topic_id="id-orders",
             partition=0, committed_offset=100, committed_at=at(12), expires_at=None),
        dict(group_id="g-cons", group_type="consumer", topic_name="orders", topic_id="id-orders",
             partition=1, committed_offset=50, committed_at=at(13), expires_at=None),
    ]


def test_epoch_timelines(spark, lake):
    got = rows(spark, "epoch_timelines",
               ["group_id", "epoch_kind", "member_id", "step", "epoch", "changed_at",
                "ms_since_previous_step", "is_decrease", "log_offset"],
               order=["group_id", "epoch_kind", "member_id", "step"])
    cons = [(r["epoch_kind"], r["member_id"], r["step"], r["epoch"], r["changed_at"],
             r["ms_since_previous_step"], r["is_decrease"]) for r in got if r["group_id"] == "g-cons"]
    assert cons == [
        ("group", None, 1, 4, at(1), None, False), ("group", None, 2, 5, at(10), 9000, False),
        ("member", "m1", 1, 4, at(1.5), None, False), ("member", "m1", 2, 5, at(12), 10500, False),
        ("member", "m2", 1, 4, at(3), None, False),
        ("member", "m3", 1, 4, at(2.5), None, False), ("member", "m3", 2, -2, at(13), 10500, True),
        ("target_assignment", None, 1, 4, at(1), None, False),
        ("target_assignment", None, 2, 5, at(10), 9000, False),
    ]
    assert [r["log_offset"] for r in got if r["group_id"] == "g-classic"] == [30]


def test_findings_summary(spark, lake):
    got = rows(spark, "findings_summary",
               ["rule_id", "severity", "severity_rank", "verdict", "finding_count", "group_count",
                "first_log_partition", "first_log_offset"], order=["severity_rank", "rule_id"])
    assert got == [
        dict(rule_id="CG-03", severity="high", severity_rank=2, verdict="violation", finding_count=2,
             group_count=2, first_log_partition=0, first_log_offset=21),
        dict(rule_id="CG-10", severity="info", severity_rank=5, verdict="notice", finding_count=1,
             group_count=1, first_log_partition=0, first_log_offset=12),
    ]


def test_downgrade_readiness(spark, lake):
    got = rows(spark, "downgrade_readiness",
               ["target_version", "break_count", "drop_count", "read_as_latest_count", "info_count",
                "affected_record_count", "affected_group_count", "is_ready", "has_warnings",
                "worst_class"], order=["target_version"])
    assert got == [
        dict(target_version="3.9", break_count=0, drop_count=1, read_as_latest_count=1, info_count=0,
             affected_record_count=6, affected_group_count=2, is_ready=False, has_warnings=True,
             worst_class="DROP"),
        dict(target_version="4.0", break_count=1, drop_count=0, read_as_latest_count=0, info_count=0,
             affected_record_count=4, affected_group_count=1, is_ready=False, has_warnings=False,
             worst_class="BREAK"),
        dict(target_version="4.3", break_count=0, drop_count=0, read_as_latest_count=0, info_count=1,
             affected_record_count=1, affected_group_count=1, is_ready=True, has_warnings=True,
             worst_class="OK"),
    ]


def test_open_transactions(spark, lake):
    got = rows(spark, "open_transactions",
               ["group_id", "producer_id", "offset_count", "pending_offset_count", "topic_names",
                "opened_at", "last_write_at", "first_log_offset", "last_log_offset"])
    assert got == [dict(group_id="g-classic", producer_id=7, offset_count=2, pending_offset_count=2,
                        topic_names=["pay", "refunds"], opened_at=at(40), last_write_at=at(41),
                        first_log_offset=40, last_log_offset=41)]


def test_snapshot_facts(spark, lake):
    got = rows(spark, "snapshot_facts",
               ["raw_record_count", "data_record_count", "control_record_count",
                "decoded_record_count", "decode_quarantine_count", "unreadable_unit_count",
                "group_id_count", "partition_count", "first_record_at", "last_record_at",
                "is_reconciled"], order=["snapshot_id"])
    assert got == [dict(raw_record_count=5, data_record_count=4, control_record_count=1,
                        decoded_record_count=3, decode_quarantine_count=1, unreadable_unit_count=1,
                        group_id_count=2, partition_count=2, first_record_at=at(1),
                        last_record_at=at(42), is_reconciled=True)]


def test_snapshot_time(spark, lake):
    # The newest record of the log, a control record included (p1's marker at 42 s).
    assert rows(spark, "snapshot_time", ["snapshot_ms"], order=["snapshot_id"]) == \
        [dict(snapshot_ms=T0 + 42_000)]


def test_membership_records(spark, lake, tmp_path):
    """Types 2-24 only, each with its own key bytes: not the offset commits, not the control
    records, not another snapshot's record at the same position; a record without its raw row
    keeps a null key."""
    def key(record_type, text):
        return record_type.to_bytes(2, "big") + text.encode()

    raw = [dict(snapshot_id=s, partition=0, offset=o, timestamp=T0 + o, is_control=c, key=k)
           for s, o, c, k in [("s1", 1, False, key(1, "commit")), ("s1", 2, False, key(3, "cg")),
                              ("s1", 3, True, bytes(4)), ("s1", 4, False, key(16, "regex")),
                              ("s2", 2, False, key(5, "member"))]]
    raw_less = [dict(snapshot_id="s2", partition=1, offset=7, timestamp=T0, record_type=8,
                     group_id="g")]
    records = [dict(snapshot_id=s, partition=0, offset=o, timestamp=T0 + o, record_type=t,
                    group_id="g") for s, o, t in [("s1", 1, 1), ("s1", 2, 3), ("s1", 4, 16),
                                                  ("s2", 2, 5)]] + raw_less
    small = write_lake(spark, tmp_path / "lake", {"raw_records": raw, "records": records})
    try:
        register_lake(spark, small)
        got = [(r.snapshot_id, r.offset, r.record_type, r.key and bytes(r.key)) for r in spark.sql(
            "select * from membership_records order by snapshot_id, offset").collect()]
        assert got == [("s1", 2, 3, key(3, "cg")), ("s1", 4, 16, key(16, "regex")),
                       ("s2", 2, 5, key(5, "member")), ("s2", 7, 8, None)]
    finally:
        register_lake(spark, lake)  # the other tests' catalog back


def test_materialized_views_answer_as_the_views_do(spark, lake):
    """``materialize=True`` holds the base views once; every view answers exactly as before."""
    def answers():
        return {name: sorted(map(str, spark.sql(f"select * from `{name}`").collect()))
                for name in view_files()}

    plain = answers()
    catalog = register_lake(spark, lake, materialize=True)
    try:
        held = {name: spark.table(name)._jdf.queryExecution().analyzed().toString()
                for name in MATERIALIZED}
        assert all("LogicalRDD" in plan for plan in held.values()), held   # a checkpoint
        assert set(MATERIALIZED) <= set(catalog.views)
        assert answers() == plain
        assert any(plain[name] for name in MATERIALIZED)
    finally:
        register_lake(spark, lake)


def test_coordinator_load(spark, lake, tmp_path):
    """Partition 0: key a written three times (the last a tombstone), b once, c once and large,
    one marker; partition 1: one record. Superseded: a's first two records."""
    def raw(partition, offset, key, value, control=False):
        return dict(snapshot_id="s1", partition=partition, offset=offset, key=key, value=value,
                    is_control=control)

    def rec(partition, offset, group_id):
        return dict(snapshot_id="s1", partition=partition, offset=offset, group_id=group_id)

    small = write_lake(spark, tmp_path / "load", {
        "raw_records": [raw(0, 0, b"a", b"12345"), raw(0, 1, b"bb", b"1"),
                        raw(0, 2, b"a", b"123"), raw(0, 3, b"a", None),
                        raw(0, 4, b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\x00\x00", True),
                        raw(0, 5, b"c", b"x" * 40), raw(1, 7, b"d", b"12")],
        "records": [rec(0, 0, "g1"), rec(0, 1, "g1"), rec(0, 2, "g1"), rec(0, 3, "g1"),
                    rec(0, 5, "g2"), rec(1, 7, "g3")]})
    register_lake(spark, small)
    try:
        got = rows(spark, "coordinator_load",
                   ["partition", "records", "control_records", "bytes", "groups", "tombstones",
                    "superseded_records", "superseded_share", "largest_record_bytes",
                    "largest_record_offset", "load_factor", "top_group", "top_group_records"],
                   order=["partition"])
    finally:
        register_lake(spark, lake)  # the other tests' catalog back
    assert got == [
        dict(partition=0, records=5, control_records=1, bytes=6 + 3 + 4 + 1 + 41, groups=2,
             tombstones=1, superseded_records=2, superseded_share=0.4, largest_record_bytes=41,
             largest_record_offset=5, load_factor=1.6667, top_group="g1", top_group_records=4),
        dict(partition=1, records=1, control_records=0, bytes=3, groups=1, tombstones=0,
             superseded_records=0, superseded_share=0.0, largest_record_bytes=3,
             largest_record_offset=7, load_factor=0.3333, top_group="g3", top_group_records=1)]


def test_every_sql_file_has_a_content_test():
    """Each view's content test is ``test_<view>`` here or in a ``tests/test_insights_*.py``
    module (the operator questions of docs/operate.md, one module per answer)."""
    tests_dir = Path(__file__).parent
    defined = set(globals()) | {
        match for module in tests_dir.glob("test_insights_*.py")
        for match in re.findall(r"^def (test_\w+)\(", module.read_text(), re.M)}
    untested = [name for name in view_files() if f"test_{name}" not in defined]
    assert view_files() and not untested, untested


def test_a_query_reads_the_views_it_names_and_what_they_read(tmp_path):
    """read_by: a view read through another view counts, one no query reaches does not; a name in
    a comment or as a column only adds what is not needed."""
    views = {"outer": "select * from inner_view -- not spare_view\n",
             "inner_view": "select g.group_id from groups as g join offsets using (group_id)",
             "spare_view": "select * from records",
             "other": "select 1 as x"}
    for name, text in views.items():
        (tmp_path / f"{name}.sql").write_text(text)
    files = view_files(tmp_path)
    tables = ["groups", "offsets", "records", "members"]

    chosen, read = read_by(["select * from OUTER where members > 0"], files, tables)

    assert sorted(chosen) == ["inner_view", "outer", "spare_view"]
    assert read == {"groups", "offsets", "records", "members"}
    chosen, read = read_by(["select x from other"], files, tables)
    assert (sorted(chosen), read) == (["other"], set())


def test_views_answer_empty_on_a_lake_without_audit_tables(spark, lake, tmp_path):
    small = write_lake(spark, tmp_path / "lake", {"groups": TABLES["groups"]})
    catalog = register_lake(spark, small)
    assert catalog.tables == ["groups"] and "findings" in catalog.placeholders
    assert spark.sql("select * from findings_summary").collect() == []
    assert spark.sql("select * from downgrade_readiness").collect() == []
    assert [r.group_id for r in spark.sql("select group_id from group_overview "
                                          "where snapshot_id = 's1' order by 1").collect()] == \
        ["g-assigning", "g-classic", "g-cons"]
    register_lake(spark, lake)  # the other tests' catalog back


@pytest.mark.submit
def test_sql_command_queries_views_by_name_and_at_the_prompt(lake):
    """The real command in its own process (its own Spark session), by name and at the prompt."""
    offsetlake = [sys.executable, "-m", "jobs.cli"]
    env = {**os.environ, "OFFSETLAKE_SPARK__MASTER": "local[1]"}
    by_name = subprocess.run(offsetlake + ["sql", "--lake", str(lake), "--format", "json",
                                           "select group_id, epochs_behind from members_not_converged"],
                             capture_output=True, text=True, env=env, timeout=600)
    assert by_name.returncode == 0, by_name.stderr[-3000:]
    assert [json.loads(line) for line in by_name.stdout.splitlines()] == \
        [{"group_id": "g-cons", "epochs_behind": 1}]
    typed = ("select target_version\n  from downgrade_readiness where is_ready;\n\\d\n"
             "select nope from nowhere;\n\\q\nselect 1;\n")
    prompt = subprocess.run(offsetlake + ["sql", "--lake", str(lake), "--format", "csv"], input=typed,
                            capture_output=True, text=True, env=env, timeout=600)
    assert prompt.returncode == 1, prompt.stderr[-3000:]  # one statement failed
    lines = prompt.stdout.splitlines()
    assert lines[:2] == ["target_version", "4.3"]
    assert {"group_overview", "findings", "raw_records", "open_transactions"} <= set(lines[2:])
    assert "1" not in lines  # nothing after \\q ran
    assert "nowhere" in prompt.stderr

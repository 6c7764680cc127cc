"""Streams groups (KIP-1071, record types 17-23) from a real Kafka Streams application.

For the suite's broker release and each newer writer release, a broker of that release runs the
Streams application of :mod:`tests.integration.streams_app` (``kafka-streams`` of the same
release, ``group.protocol=streams``; a topology with a repartition topic and a state store; the
broker's group configuration asks for one standby replica per task):

1. one instance processes the first records; two more join (three members, active and standby
   tasks spread over them);
2. the third is killed (SIGKILL: no leave; the coordinator fences it when its 6 s session ends);
3. the second is stopped and started again: on 4.4.0 as the same static member
   (``group.instance.id``, it comes back under a new member id with the same instance id); on
   4.3.1 as a new dynamic member, because that release's Streams client refuses static
   membership with the streams protocol (``StreamsConfig.verifyStreamsProtocolCompatibility``);
4. once the group is Stable with two members and every record is processed, the
   ``__consumer_offsets`` log is snapshotted and, at the same moment (log end offsets unchanged),
   Kafka's ``kafka-streams-groups --describe`` (``StreamsGroupCommand``, the Java Admin client)
   is asked for the group's state, members, tasks and committed offsets.

The pure replay's tables (and the Spark pipeline's) must say what the Admin API says; ``dump``
must equal ``DumpLogSegments`` record for record.
"""

from __future__ import annotations

import io

import pytest

from .conftest import running_broker
from .kafka_broker import kafka_version, writer_versions
from .make_sample import replay_tables
from .streams_app import (APPLICATION_ID, INPUT, PARTITIONS, STREAMS_BROKER, StreamsApp, StreamsRun,
                          run_scenario)

pytestmark = pytest.mark.integration

RELEASES = (kafka_version(), *writer_versions())


@pytest.fixture(scope="module", params=RELEASES)
def streams_run(request, tmp_path_factory) -> StreamsRun:
    release = request.param
    gen = running_broker(tmp_path_factory, f"kafka-streams-{release}",
                         None if release == kafka_version() else release, STREAMS_BROKER)
    broker = next(gen)
    app = StreamsApp.compile(tmp_path_factory.mktemp(f"streams-app-{release}"), release)
    try:
        yield run_scenario(broker, app, release, tmp_path_factory)
    finally:
        app.close()
        gen.close()


@pytest.fixture(scope="module")
def tables(streams_run) -> dict[str, list[dict]]:
    return replay_tables(streams_run.segments)


def _group_rows(tables, name: str) -> list[dict]:
    return [r for r in tables[name] if r["group_id"] == APPLICATION_ID]


def test_the_group_is_a_stable_streams_group_as_the_admin_api_says(streams_run, tables):
    (group,) = _group_rows(tables, "groups")
    state = streams_run.described.state
    assert (group["group_type"], group["group_state"], group["group_epoch"],
            group["target_assignment_epoch"], group["member_count"]) == \
        ("streams", state["state"], state["group_epoch"], state["target_assignment_epoch"],
         state["members"])
    assert not tables["violations"]


def test_members_and_their_epochs_match(streams_run, tables):
    ours = {m["member_id"]: (m["member_epoch"], m["client_id"], m["member_state"])
            for m in _group_rows(tables, "members")}
    theirs = {mid: (m["member_epoch"], m["client_id"], "STABLE")
              for mid, m in streams_run.described.members.items()}
    assert ours == theirs


def _ours_tasks(rows) -> dict[str, set]:
    out: dict[str, set] = {}
    for r in rows:
        if not r.get("is_pending_revocation"):
            out.setdefault(r["member_id"], set()).add((r["subtopology_id"], r["partition"]))
    return out


def test_active_tasks_match(streams_run, tables):
    theirs = {mid: m["tasks"].get("ACTIVE", set())
              for mid, m in streams_run.described.members.items()}
    assert _ours_tasks(_group_rows(tables, "member_assignments")) == theirs
    assert set().union(*theirs.values()) == {(s, p) for s in "01" for p in range(PARTITIONS)}


def test_target_active_tasks_match(streams_run, tables):
    theirs = {mid: m["tasks"].get("TARGET-ACTIVE", set())
              for mid, m in streams_run.described.members.items()}
    assert _ours_tasks(_group_rows(tables, "target_assignments")) == theirs


def test_standby_and_warmup_tasks_of_each_members_last_assignment_record_match(streams_run):
    """The tables keep active tasks only (standbys are not exclusively owned); the standby and
    warm-up tasks are read from each member's last current-assignment record (type 22)."""
    from tests.support.partition_dirs import events_from_partition_dir

    last: dict[str, dict] = {}
    for directory in sorted(streams_run.segments.glob("__consumer_offsets-*")):
        for e in events_from_partition_dir(directory):
            record = e.record
            if getattr(record, "record_type", None) == 22 and record.key["groupId"] == APPLICATION_ID:
                if record.value is None:
                    last.pop(record.key["memberId"], None)
                else:
                    last[record.key["memberId"]] = record.value

    def tasks(value: dict, name: str) -> set:
        return {(t["subtopologyId"], p) for t in value.get(name) or () for p in t["partitions"]}

    for mid, m in streams_run.described.members.items():
        assert tasks(last[mid], "standbyTasks") == m["tasks"].get("STANDBY", set()), mid
        assert tasks(last[mid], "warmupTasks") == m["tasks"].get("WARMUP", set()), mid
    assert set(last) == set(streams_run.described.members)


def test_committed_offsets_match(streams_run, tables):
    ours = {(r["topic"], r["partition"]): r["committed_offset"]
            for r in _group_rows(tables, "offsets")}
    assert ours == streams_run.described.offsets
    assert {t for t, _ in ours} == {INPUT, f"{APPLICATION_ID}-by-value-repartition"}


def test_the_restarted_static_member_keeps_its_instance_id(streams_run, tables):
    if streams_run.restarted is None:
        pytest.skip(f"{streams_run.release}'s Streams client has no static membership with the "
                    "streams protocol")
    instance, old_id, new_id = streams_run.restarted
    members = {m["member_id"]: m for m in _group_rows(tables, "members")}
    assert old_id not in members and members[new_id]["instance_id"].startswith(f"{instance}-")


def test_the_spark_pipeline_agrees_with_the_pure_replay(streams_run, tables, spark, tmp_path):
    from jobs.lake import read_table
    from jobs.stages.pipeline import run_pipeline

    report = run_pipeline(spark, tmp_path / "lake", [str(streams_run.segments)], "streams",
                          progress=io.StringIO())
    assert report.reconciled
    for name in ("groups", "members", "member_assignments", "target_assignments", "offsets"):
        rows = [{k: v for k, v in r.asDict(recursive=True).items() if k != "snapshot_id"}
                for r in read_table(spark, tmp_path / "lake", name).collect()]
        assert sorted(rows, key=_row_key) == sorted(tables[name], key=_row_key), name


def _row_key(row: dict) -> list:
    return sorted((k, str(v)) for k, v in row.items())


def test_dump_equals_dump_log_segments(streams_run, tables):
    from .test_dump_vs_kafka import assert_dump_equals_dump_log_segments

    kinds = assert_dump_equals_dump_log_segments(streams_run.broker, streams_run.segments)
    print(f"\n{streams_run.release} streams app wrote:", dict(sorted(kinds.items())))
    assert {f"type {t}" for t in (1, 17, 19, 20, 21, 22, 23)} <= set(kinds)
    assert {"type 19 tombstone", "type 21 tombstone", "type 22 tombstone"} <= set(kinds)

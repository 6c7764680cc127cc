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
import re
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic

from .conftest import running_broker
from .kafka_broker import KafkaBroker, kafka_version, release_of, snapshot_log_dirs, writer_versions
from .make_sample import replay_tables
from .streams_app import APPLICATION_ID, INPUT, OUTPUT, StreamsApp
from .workloads import offsets_end_offsets

pytestmark = pytest.mark.integration

STREAMS_GROUP_COMMAND = "org.apache.kafka.tools.streams.StreamsGroupCommand"
RELEASES = (kafka_version(), *writer_versions())
# Group settings of the streams group (broker defaults, so no group config call is needed).
STREAMS_BROKER = {"group.streams.num.standby.replicas": "1",
                  "group.streams.session.timeout.ms": "6000",
                  "group.streams.min.session.timeout.ms": "1000",
                  "group.streams.heartbeat.interval.ms": "500",
                  "group.streams.min.heartbeat.interval.ms": "100",
                  "group.streams.initial.rebalance.delay.ms": "0"}
PARTITIONS = 4


def static_membership(release: str) -> bool:
    """4.3's Streams client refuses ``group.instance.id`` with the streams protocol."""
    return release_of(release) >= (4, 4)


@dataclass
class Described:
    """What ``kafka-streams-groups --describe`` printed (Kafka's Admin client)."""

    state: dict
    members: dict[str, dict]        # member id -> epoch, client id, tasks
    offsets: dict[tuple[str, int], int]


@dataclass
class StreamsRun:
    release: str
    broker: KafkaBroker
    segments: Path
    described: Described
    restarted: tuple[str, str, str] | None   # (instance id, old member id, new member id)
    attempts: int


def _tasks(text: str) -> dict[str, set[tuple[str, int]]]:
    """``ACTIVE: 0:[2,3]; 1:[2]; STANDBY: 1:[1,3]; ...`` -> {"ACTIVE": {("0", 2), ...}, ...}."""
    out: dict[str, set] = {}
    kind = None
    for token in re.findall(r"[A-Z-]+:|\d+:\[[\d,]*\]", text):
        if token.endswith(":") and not token[0].isdigit():
            kind = token[:-1]
            out.setdefault(kind, set())
            continue
        sub, parts = token.split(":", 1)
        out[kind] |= {(sub, int(p)) for p in parts.strip("[]").split(",") if p}
    return out


def describe(broker: KafkaBroker) -> Described:
    def run(*args: str) -> list[dict]:
        """The tool's rows as dicts by its header (the last column takes the rest of a line:
        ``ASSIGNMENTS`` holds spaces); the columns differ between releases."""
        lines = broker.run_tool(STREAMS_GROUP_COMMAND, "--bootstrap-server",
                                broker.bootstrap_server, "--describe", "--group",
                                APPLICATION_ID, *args).stdout.splitlines()
        header = next(line.split() for line in lines if line.startswith("GROUP "))
        return [dict(zip(header, line.split(None, len(header) - 1)))
                for line in lines if line.startswith(APPLICATION_ID + " ")]

    (state,) = run("--state", "--verbose")
    members = {row["MEMBER"]: {"member_epoch": int(row["MEMBER-EPOCH"]),
                               "process": row["PROCESS"], "client_id": row["CLIENT-ID"],
                               "tasks": _tasks(row["ASSIGNMENTS"])}
               for row in run("--members", "--verbose")}
    offsets = {(row["TOPIC"], int(row["PARTITION"])): int(row["CURRENT-OFFSET"])
               for row in run("--offsets", "--verbose")}
    return Described({"state": state["STATE"], "group_epoch": int(state["GROUP-EPOCH"]),
                      "target_assignment_epoch": int(state["TARGET-ASSIGNMENT-EPOCH"]),
                      "members": int(state["#MEMBERS"])}, members, offsets)


def _settled(broker: KafkaBroker, members: int, processed: int) -> Described:
    """Wait until the group is Stable with ``members`` members at the target epoch and has
    committed every input record."""
    deadline = time.monotonic() + 90
    while True:
        d = describe(broker)
        inputs = sum(o for (topic, _), o in d.offsets.items() if topic == INPUT)
        if (d.state["state"] == "Stable" and d.state["members"] == members == len(d.members)
                and all(m["member_epoch"] == d.state["target_assignment_epoch"]
                        for m in d.members.values()) and inputs == processed):
            return d
        if time.monotonic() > deadline:
            raise AssertionError(f"the streams group did not settle: {d}")
        time.sleep(1)


@pytest.fixture(scope="module", params=RELEASES)
def streams_run(request, tmp_path_factory) -> StreamsRun:
    release = request.param
    gen = running_broker(tmp_path_factory, f"kafka-streams-{release}",
                         None if release == kafka_version() else release, STREAMS_BROKER)
    broker = next(gen)
    app = StreamsApp.compile(tmp_path_factory.mktemp(f"streams-app-{release}"), release)
    try:
        yield _scenario(broker, app, release, tmp_path_factory)
    finally:
        app.close()
        gen.close()


def _scenario(broker: KafkaBroker, app: StreamsApp, release: str, tmp_path_factory) -> StreamsRun:
    bootstrap = broker.bootstrap_server
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(INPUT, PARTITIONS, 1), NewTopic(OUTPUT, PARTITIONS, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    sent = 0

    def produce(n: int) -> None:
        nonlocal sent
        for i in range(sent, sent + n):
            producer.send(INPUT, key=b"k%d" % i, value=b"v%d" % (i % 7), partition=i % PARTITIONS)
        producer.flush()
        sent += n

    static = static_membership(release)
    produce(40)
    one = app.start(bootstrap, "one", instance_id="one" if static else None)
    one.wait_for("RUNNING")
    produce(40)
    two = app.start(bootstrap, "two", instance_id="two" if static else None)
    three = app.start(bootstrap, "three", instance_id="three" if static else None)
    two.wait_for("RUNNING")
    three.wait_for("RUNNING")
    before = _settled(broker, 3, sent)
    assert any(m["tasks"].get("STANDBY") for m in before.members.values()), before
    three.kill()
    old = {m["process"]: mid for mid, m in before.members.items()}
    two.stop()
    again = app.start(bootstrap, "two", instance_id="two" if static else None)
    again.wait_for("RUNNING")
    produce(40)
    _settled(broker, 2, sent)
    producer.close()
    for attempt in range(1, 4):
        segments = tmp_path_factory.mktemp(f"streams-{release}-{attempt}")
        end = offsets_end_offsets(bootstrap)
        snapshot_log_dirs(broker, segments)
        described = _settled(broker, 2, sent)
        if offsets_end_offsets(bootstrap) == end:
            break
    else:
        pytest.fail("__consumer_offsets kept changing while the snapshot was taken")
    restarted = None
    if static:
        # The restarted instance keeps its state directory, so its process id: find it.
        (new_id,) = [mid for mid, m in described.members.items()
                     if m["process"] in old and old[m["process"]] != mid]
        restarted = ("two", old[described.members[new_id]["process"]], new_id)
    return StreamsRun(release, broker, segments, described, restarted, attempt)


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
    from collections import Counter

    from .test_dump_vs_kafka import _kind, assert_same, offsetlake_dump, our_entry, run_kafka_dump_log

    files = sorted(log for d in streams_run.segments.iterdir() for log in sorted(d.glob("*.log")))
    kafka = run_kafka_dump_log(streams_run.broker, files)
    assert_same(kafka, {str(f): [our_entry(o) for o in offsetlake_dump(f)] for f in files})
    kinds = Counter(_kind(e) for entries in kafka.values() for e in entries)
    print(f"\n{streams_run.release} streams app wrote:", dict(sorted(kinds.items())))
    assert {f"type {t}" for t in (1, 17, 19, 20, 21, 22, 23)} <= set(kinds)
    assert {"type 19 tombstone", "type 21 tombstone", "type 22 tombstone"} <= set(kinds)

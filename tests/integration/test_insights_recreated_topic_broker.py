"""TP-01 on a real Kafka 4.3.1 cluster: a topic deleted and recreated under a group's offsets.

Kafka 4.3.1 cleans up after a topic deletion by itself: every *loaded* group coordinator
tombstones the offsets of the deleted topic id (GroupCoordinatorService.onMetadataUpdate ->
handleTopicsDeletion -> OffsetMetadataManager.onTopicsDeleted). So on a single broker the old
offsets never survive, and TP-01 must say nothing: the near miss. An offset of the old
incarnation stays current only when the coordinator of its ``__consumer_offsets`` partition was
not loaded while the deletion went through. Hence two nodes:

* node 1: broker + controller (the suite's broker, :mod:`.kafka_broker`); node 2: broker only.
  ``__consumer_offsets`` (3 partitions, one replica) is spread over both.
* topic T (2 partitions, on node 1) gets records; two KIP-848 consumer-protocol groups
  (confluent-kafka, ``group.protocol=consumer``) read it and commit: ``stale`` (its coordinator on
  node 2) and ``cleaned`` (on node 1), then close (Empty groups with offsets). Every 4.3.1 commit
  of an existing topic carries its id (KafkaApis.handleOffsetCommitRequest resolves the id by
  name below v10; OffsetAndMetadata.fromRequest), so the records hold topicId.
* node 2 stops; T is deleted and recreated through node 1 (a new id); node 2 starts again and
  loads its partitions from the log: nothing told its coordinator about the deletion.
* a third group, ``reader`` (on node 1), reads the new T and commits under the new id.

The snapshot (both nodes' ``__consumer_offsets`` directories) goes through the pipeline; TP-01
must name ``stale``, T and its partitions, with the old and new ids the Admin API reported before
and after the recreation, and nothing of ``cleaned``, whose old commits recreated_topics lists as
no longer current. The broker's own answers are checked too (kafka-python): OffsetFetch by name
(v8) returns ``stale``'s old offsets, by the new topic id (v10) -1 (OffsetMetadataManager
.fetchOffsets: isOffsetInvalid -> isMismatchedTopicId). Finally ``offsetlake audit --format json
--fail-on never`` (in process), which runs the rule files after the fencing audit, must write
exactly TP-01's rows to the lake's ``findings`` table and print them.

Phase timings are printed (run with ``-s`` to see them).
"""

from __future__ import annotations

import io
import json
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicCollection
from confluent_kafka import TopicPartition as CkTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient
from kafka.protocol.consumer.group import OffsetFetchRequest

from jobs.lake.views import register_lake

from .kafka_broker import (OFFSETS_PARTITIONS, OFFSETS_TOPIC, KafkaBroker, KafkaHarnessError,
                           KafkaJarsMissing, java_executable, kafka_libs_dir, snapshot_log_dirs)
from .workloads import wait_until

pytestmark = pytest.mark.integration

TOPIC = "tp01-orders"
PARTITIONS = 2
RECORDS_PER_PARTITION = 10
COMMITTED = {0: 4, 1: 7}          # what stale and cleaned commit for the first T
READ_AGAIN = {0: 2, 1: 3}         # what reader commits for the second T
SNAPSHOT_ID = "tp01-broker"
RULE = Path(__file__).resolve().parents[2] / "sql" / "rules" / "TP-01.sql"


def java_string_hash(text: str) -> int:
    """java.lang.String.hashCode of an ASCII string (a signed 32-bit int)."""
    h = 0
    for char in text:
        h = (31 * h + ord(char)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def offsets_partition(group_id: str) -> int:
    """GroupCoordinatorService.partitionFor: Utils.abs(groupId.hashCode()) % partitions, where
    Utils.abs(Integer.MIN_VALUE) is 0."""
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % OFFSETS_PARTITIONS


def uuid_text(kafka_uuid) -> str:
    """A confluent-kafka Uuid as the tables write topic ids."""
    msb = kafka_uuid.get_most_significant_bits() & (2 ** 64 - 1)
    lsb = kafka_uuid.get_least_significant_bits() & (2 ** 64 - 1)
    return str(uuid.UUID(int=(msb << 64) | lsb))


@dataclass
class Cluster:
    node1: KafkaBroker   # broker + controller
    node2: KafkaBroker   # broker only
    startup_s: float     # both JVMs up

    @property
    def bootstrap(self) -> str:
        return self.node1.bootstrap_server


@dataclass
class Recreation:
    groups: dict[str, str]                     # role (stale/cleaned/reader) -> group id
    old_topic_id: str
    new_topic_id: str
    fetched_by_name: dict[int, int]            # stale's offsets, OffsetFetch v8 (by name)
    fetched_by_new_id: dict[int, int]          # stale's offsets, OffsetFetch v10 (new topic id)
    snapshot: Path
    timings: dict[str, float] = field(default_factory=dict)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if java_executable() is None:
        pytest.skip("Kafka integration tests SKIPPED: `java` is not installed")
    try:
        libs = kafka_libs_dir()
    except KafkaJarsMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    node1 = KafkaBroker(tmp_path_factory.mktemp("tp01-node1"), libs=libs)
    node2 = KafkaBroker(tmp_path_factory.mktemp("tp01-node2"), libs=libs)
    node2.cluster_id = node1.cluster_id
    node2.properties.update({
        "process.roles": "broker", "node.id": "2",
        "controller.quorum.voters": node1.properties["controller.quorum.voters"],
        "listeners": f"PLAINTEXT://127.0.0.1:{node2.port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{node2.port}"})
    began = time.monotonic()
    try:
        node1.start()
        node2.start()
    except KafkaHarnessError as exc:
        node2.stop()
        node1.stop()
        pytest.fail(f"could not start the two-node cluster: {exc}", pytrace=False)
    try:
        yield Cluster(node1, node2, round(time.monotonic() - began, 1))
    finally:
        node2.stop()
        node1.stop()


def describe(admin: AdminClient, topic: str):
    return admin.describe_topics(TopicCollection([topic]), request_timeout=15)[topic].result()


def offsets_leaders(admin: AdminClient) -> dict[int, int]:
    """``__consumer_offsets`` partition -> leader node id, once every partition has one."""
    partitions = describe(admin, OFFSETS_TOPIC).partitions
    leaders = {p.id: (p.leader.id if p.leader is not None else -1) for p in partitions}
    return leaders if len(leaders) == OFFSETS_PARTITIONS and min(leaders.values()) >= 0 else {}


def group_on(leaders: dict[int, int], node: int, role: str) -> str:
    """A group id whose coordinator is on ``node``."""
    return next(f"tp01-{role}-{i}" for i in range(1000)
                if leaders[offsets_partition(f"tp01-{role}-{i}")] == node)


def delete_topic(bootstrap: str) -> None:
    """Delete T right after node 2 stopped. An admin client that still takes node 2 for the
    controller waits its whole request timeout on it (seen under load), so each try is a fresh
    client with a short timeout, until node 1 accepts the deletion or says T is gone."""
    from confluent_kafka import KafkaError, KafkaException

    def deleted() -> bool:
        admin = AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 10000})
        try:
            admin.delete_topics([TOPIC], request_timeout=10)[TOPIC].result(15)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.UNKNOWN_TOPIC_OR_PART:
                raise
        return True

    wait_until(f"{TOPIC}'s deletion accepted", deleted, timeout_s=120, interval_s=1.0)


def create_topic(admin: AdminClient, bootstrap: str) -> str:
    """T on node 1 (so deleting it never waits for node 2), filled; its topic id."""
    def created() -> bool:
        topic = NewTopic(TOPIC, num_partitions=PARTITIONS, replica_assignment=[[1]] * PARTITIONS)
        admin.create_topics([topic])[TOPIC].result(30)
        return True

    wait_until(f"{TOPIC} created", created)
    topic_id = wait_until(f"{TOPIC} described", lambda: uuid_text(describe(admin, TOPIC).topic_id))
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(RECORDS_PER_PARTITION * PARTITIONS):
        producer.produce(TOPIC, value=b"record-%d" % i, partition=i % PARTITIONS)
    assert producer.flush(30) == 0
    return topic_id


def consume_and_commit(bootstrap: str, group_id: str, offsets: dict[int, int]) -> None:
    """A KIP-848 consumer (ConsumerGroupHeartbeat) joins, gets both partitions, commits
    ``offsets`` and leaves: the group is Empty, its offsets stay."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group_id,
                         "group.protocol": "consumer", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([TOPIC])

        def assigned():
            consumer.poll(0.1)
            return len(consumer.assignment()) == PARTITIONS

        wait_until(f"{group_id} assigned {TOPIC}", assigned, timeout_s=60)
        consumer.commit(offsets=[CkTopicPartition(TOPIC, p, o) for p, o in offsets.items()],
                        asynchronous=False)
    finally:
        consumer.close()


def fetch_by_name(bootstrap: str, group_id: str) -> dict[int, int]:
    """OffsetFetch as kafka-python sends it (v8, topics by name)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        fetched = admin.list_group_offsets({group_id: None})[group_id]
    finally:
        admin.close()
    return {tp.partition: o.offset for tp, o in fetched.items() if tp.topic == TOPIC}


def fetch_by_topic_id(bootstrap: str, group_id: str, topic_id: str) -> dict[int, int]:
    """OffsetFetch v10 naming the topic by id, as a KIP-848 consumer resuming on it does.
    kafka-python's public list_group_offsets stops at v8, so the request goes through its
    admin client's coordinator lookup and connection manager directly."""
    group = OffsetFetchRequest.OffsetFetchRequestGroup
    request = OffsetFetchRequest(
        groups=[group(group_id=group_id, topics=[group.OffsetFetchRequestTopics(
            topic_id=uuid.UUID(topic_id), partition_indexes=list(range(PARTITIONS)))])],
        min_version=10, max_version=10)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)

    async def send():
        coordinator = (await admin._find_coordinator_ids([group_id]))[group_id]
        return await admin._manager.send(request, node_id=coordinator)

    try:
        response = admin._manager.run(send)
    finally:
        admin.close()
    (answered,) = response.groups
    assert answered.error_code == 0, answered
    return {p.partition_index: p.committed_offset for t in answered.topics for p in t.partitions
            if p.error_code == 0}


@pytest.fixture(scope="module")
def recreation(cluster: Cluster, tmp_path_factory) -> Recreation:
    timings: dict[str, float] = {"cluster start": cluster.startup_s}
    began = last = time.monotonic()

    def phase(name: str) -> None:
        nonlocal last
        now = time.monotonic()
        timings[name] = round(now - last, 1)
        last = now

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    try:
        wait_until("both brokers registered",
                   lambda: len(admin.describe_cluster(request_timeout=10).result().nodes) == 2)
        phase("brokers registered")
        # The first FindCoordinator creates __consumer_offsets, spread over both brokers.
        wait_until("__consumer_offsets created", lambda: (
            admin.describe_consumer_groups(["tp01-probe"])["tp01-probe"].exception(15),
            offsets_leaders(admin))[1], timeout_s=60)
        leaders = offsets_leaders(admin)
        assert {1, 2} == set(leaders.values()), leaders
        groups = {"stale": group_on(leaders, 2, "stale"), "cleaned": group_on(leaders, 1, "cleaned"),
                  "reader": group_on(leaders, 1, "reader")}
        old_id = create_topic(admin, cluster.bootstrap)
        for role in ("stale", "cleaned"):
            consume_and_commit(cluster.bootstrap, groups[role], COMMITTED)
        assert fetch_by_name(cluster.bootstrap, groups["stale"]) == COMMITTED
        phase("first topic read")

        cluster.node2.stop()
        delete_topic(cluster.bootstrap)
        wait_until(f"{TOPIC} deleted", lambda: TOPIC not in admin.list_topics(timeout=10).topics)
        # The loaded coordinator (node 1) tombstones cleaned's offsets of the deleted id.
        wait_until("cleaned's offsets removed",
                   lambda: fetch_by_name(cluster.bootstrap, groups["cleaned"]) == {})
        new_id = create_topic(admin, cluster.bootstrap)
        assert new_id != old_id
        phase("deleted and recreated while node 2 was down")

        cluster.node2.start(format_storage=False)
        wait_until("node 2's __consumer_offsets partitions led again",
                   lambda: offsets_leaders(admin) == leaders, timeout_s=60)
        by_name = wait_until("stale's offsets fetched by name",
                             lambda: fetch_by_name(cluster.bootstrap, groups["stale"]))
        by_id = fetch_by_topic_id(cluster.bootstrap, groups["stale"], new_id)
        consume_and_commit(cluster.bootstrap, groups["reader"], READ_AGAIN)
        phase("node 2 back, new topic read")

        snapshot = tmp_path_factory.mktemp("tp01-snapshot")
        copied = (snapshot_log_dirs(cluster.node1, snapshot)
                  + snapshot_log_dirs(cluster.node2, snapshot))
        assert sorted(d.name for d in copied) == [f"{OFFSETS_TOPIC}-{p}"
                                                  for p in range(OFFSETS_PARTITIONS)]
        phase("snapshot")
    except BaseException:
        print(f"node 1 log tail:\n{cluster.node1.log_tail()}\n"
              f"node 2 log tail:\n{cluster.node2.log_tail()}")
        raise
    timings["total"] = round(time.monotonic() - began, 1)
    return Recreation(groups, old_id, new_id, by_name, by_id, snapshot, timings)


@pytest.fixture(scope="module")
def lake(spark, recreation, tmp_path_factory):
    from jobs.stages.pipeline import run_pipeline

    began = time.monotonic()
    path = tmp_path_factory.mktemp("tp01-lake") / "lake"
    report = run_pipeline(spark, path, [str(recreation.snapshot)], SNAPSHOT_ID,
                          progress=io.StringIO())
    assert report.reconciled, report.summary()
    recreation.timings["pipeline"] = round(time.monotonic() - began, 1)
    print(f"\nTP-01 broker scenario timings (s): {recreation.timings}")
    return path


def rows(spark, sql: str) -> list[dict]:
    payload = spark.sql(sql).selectExpr(
        "to_json(struct(*), map('ignoreNullFields', 'false')) as j")
    return [json.loads(r.j) for r in payload.collect()]


@pytest.fixture(scope="module")
def views(spark, lake) -> None:
    """The lake's tables and sql/ views, registered once for the tests that query them."""
    register_lake(spark, lake)


@pytest.fixture(scope="module")
def tp01(spark, views) -> list[dict]:
    """sql/rules/TP-01.sql's rows over the lake, every column, by partition (run once: the audit
    test compares what it writes with them)."""
    return rows(spark, f"select * from ({RULE.read_text()}) order by partition")


def test_the_broker_still_answers_the_old_offsets_by_name_and_none_by_topic_id(recreation):
    """What a consumer of ``stale`` resuming on the new T gets: its old offsets when it asks by
    name, -1 (no offset: auto.offset.reset) when it asks by the new topic id."""
    assert recreation.fetched_by_name == COMMITTED
    assert recreation.fetched_by_new_id == {p: -1 for p in range(PARTITIONS)}


def test_tp01_names_the_group_whose_coordinator_missed_the_deletion(recreation, tp01):
    findings = []
    for row in tp01:
        details = json.loads(row["details"])
        findings.append({k: row[k] for k in ("group_id", "topic", "topic_id", "partition",
                                             "severity", "verdict")}
                        | dict(new_topic_id=details["new_topic_id"],
                               committed_offset=details["committed_offset"]))
    assert findings == [
        dict(group_id=recreation.groups["stale"], topic=TOPIC, topic_id=recreation.old_topic_id,
             partition=p, severity="high", verdict="violation",
             new_topic_id=recreation.new_topic_id, committed_offset=COMMITTED[p])
        for p in range(PARTITIONS)]


def test_recreated_topics_lists_the_tombstoned_offsets_as_history(spark, recreation, views):
    """The near miss: ``cleaned``'s coordinator saw the deletion, so its old commits are in the
    view but not current; ``reader``'s commits name the new id and are not in it."""
    listed = rows(spark, "select group_id, partition, old_topic_id, new_topic_id, "
                         "committed_offset, is_current from recreated_topics "
                         "order by group_id, partition")
    expected = {role: [dict(group_id=recreation.groups[role], partition=p,
                            old_topic_id=recreation.old_topic_id,
                            new_topic_id=recreation.new_topic_id, committed_offset=COMMITTED[p],
                            is_current=role == "stale") for p in range(PARTITIONS)]
                for role in ("cleaned", "stale")}
    assert listed == sorted(expected["cleaned"] + expected["stale"],
                            key=lambda r: (r["group_id"], r["partition"]))
    current = rows(spark, f"select group_id, partition, committed_offset, topic_id from offsets "
                          f"where topic = '{TOPIC}' order by group_id, partition")
    assert sorted(current, key=lambda r: (r["group_id"], r["partition"])) == sorted(
        [dict(group_id=recreation.groups["stale"], partition=p, committed_offset=COMMITTED[p],
              topic_id=recreation.old_topic_id) for p in range(PARTITIONS)]
        + [dict(group_id=recreation.groups["reader"], partition=p,
                committed_offset=READ_AGAIN[p], topic_id=recreation.new_topic_id)
           for p in range(PARTITIONS)], key=lambda r: (r["group_id"], r["partition"]))


def test_the_audit_writes_and_prints_what_tp01_finds(spark, recreation, lake, tp01, capsys):
    """``offsetlake audit --format json --fail-on never`` (in this process, on the test's Spark
    session) runs sql/rules/TP-01.sql through jobs.stages.insights: the lake's ``findings`` table
    then holds exactly the rule's rows for the snapshot, and the JSON lines show them (``details``
    parsed, no snapshot id)."""
    from jobs.cli import main as offsetlake
    from jobs.lake import read_snapshot

    expected = tp01   # the rule's own rows, every column
    assert [(f["group_id"], f["partition"]) for f in expected] == [
        (recreation.groups["stale"], p) for p in range(PARTITIONS)]

    began = time.monotonic()
    code = offsetlake(["audit", "--lake", str(lake), "--format", "json", "--fail-on", "never"])
    audit_s = time.monotonic() - began
    out = capsys.readouterr()
    assert code == 0, out.err
    printed = [json.loads(line) for line in out.out.splitlines()]
    assert [{k: v for k, v in line.items() if k != "kind"} for line in printed
            if line["rule_id"] == "TP-01"] == [
        {**{k: v for k, v in f.items() if k != "snapshot_id"}, "details": json.loads(f["details"])}
        for f in expected]
    assert {line["kind"] for line in printed} == {"finding"}

    findings = read_snapshot(spark, lake, "findings", SNAPSHOT_ID)
    findings.where("rule_id = 'TP-01'").createOrReplaceTempView("tp01_written")
    assert rows(spark, "select * from tp01_written order by partition") == expected
    others = sorted((line["rule_id"], line["group_id"]) for line in printed
                    if line["rule_id"] != "TP-01")
    with capsys.disabled():
        print(f"\nTP-01 audit (offsetlake audit, in process): {audit_s:.1f} s; other findings: "
              f"{others}")

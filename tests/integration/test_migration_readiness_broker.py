"""The online upgrade verdicts of sql/migration_readiness.sql against a real Kafka broker.

A broker with ``group.consumer.max.size=2`` gets two classic groups whose kafka-python members
(range assignor, protocol type "consumer") stay joined:

* ``mr-ready``: one member. The view says a consumer-protocol member may join (``is_ready``, no
  blockers);
* ``mr-full``: two members, as many as a consumer group may hold. The view says the upgrade is
  blocked by ``group_size``.

The ``__consumer_offsets`` log is snapshotted while both groups are Stable and quiet, the pipeline
(``run_pipeline``) runs on it and the view is read with the broker's settings (a segment
snapshot carries no broker configs, so they are passed to ``register_lake``). Then the broker
is asked: a confluent-kafka consumer with ``group.protocol=consumer`` joins each group.

* ``mr-full`` first: the heartbeat is refused with GROUP_MAX_SIZE_REACHED (librdkafka makes it
  a fatal error of the consumer: poll returns _FATAL with that error's text), the group stays a
  classic group with its two members and nothing is appended to its ``__consumer_offsets``
  partition. (The broker does log "Converted the classic group to a consumer group" for
  ``mr-full``: convertToConsumerGroup runs before throwIfConsumerGroupIsFull throws. It only
  builds the conversion's records, ClassicGroup.createGroupTombstoneRecords and
  ConsumerGroup.createConsumerGroupRecords, and a write that throws appends none of them.)
* ``mr-ready``: the broker converts the group; it is a consumer group afterwards, Stable, with
  the classic member and the new consumer-protocol member.

Kafka facts (4.3.1, kafka-group-coordinator-4.3.1.jar unless named):

* GroupMetadataManager.consumerGroupHeartbeat calls getOrMaybeCreateConsumerGroup (which, for a
  non-empty classic group, runs validateOnlineUpgrade and then convertToConsumerGroup) and right
  after it throwIfConsumerGroupIsFull, which throws GroupMaxSizeReachedException when the
  group's numMembers >= GroupCoordinatorConfig.consumerGroupMaxSize and the member id is new;
* validateOnlineUpgrade itself refuses only numMembers > consumerGroupMaxSize (with
  GroupIdNotFoundException), so two members under a maximum of two pass it and are refused by
  throwIfConsumerGroupIsFull;
* GroupMaxSizeReachedException is Errors.GROUP_MAX_SIZE_REACHED, error code 81
  (kafka-clients-4.3.1.jar, org.apache.kafka.common.protocol.Errors).
"""

from __future__ import annotations

import io
import threading
import time

import pytest
from confluent_kafka import Consumer, ConsumerGroupState, ConsumerGroupType, KafkaError
from kafka import KafkaAdminClient, KafkaConsumer
from kafka.coordinator.assignors.range import RangePartitionAssignor

from .conftest import running_broker
from .kafka_broker import snapshot_log_dirs
from .workloads import LiveMember, Workloads, offsets_end_offsets

pytestmark = pytest.mark.integration

MAX_SIZE = 2
TOPIC = "mr-orders"
READY, FULL = "mr-ready", "mr-full"
CLASSIC_MEMBERS = {READY: [f"{READY}-classic-1"],
                   FULL: [f"{FULL}-classic-1", f"{FULL}-classic-2"]}
# The broker's settings as the view reads them (conf keys of the ``insights`` section):
# group.consumer.max.size as set below, the migration policy at Kafka's default
# (GroupCoordinatorConfig.CONSUMER_GROUP_MIGRATION_POLICY_DEFAULT, 4.3.1).
VIEW_SETTINGS = {"group_consumer_max_size": MAX_SIZE,
                 "group_consumer_migration_policy": "bidirectional"}
# Errors.GROUP_MAX_SIZE_REACHED (kafka-clients 4.3.1): code 81, the same in librdkafka.
GROUP_MAX_SIZE_REACHED = 81
assert KafkaError.GROUP_MAX_SIZE_REACHED == GROUP_MAX_SIZE_REACHED
MAX_SIZE_TEXT = KafkaError(GROUP_MAX_SIZE_REACHED).str()   # "Broker: Consumer group has reached ..."
REFUSAL_WAIT_S = 30


@pytest.fixture(scope="module")
def migration_broker(tmp_path_factory):
    yield from running_broker(tmp_path_factory, "kafka-migration", overrides={
        "group.consumer.max.size": str(MAX_SIZE)})


def classic_member(bootstrap: str, group_id: str, client_id: str) -> LiveMember:
    """A kafka-python classic member (protocol type "consumer", the range assignor alone) that
    keeps polling in its own thread."""
    def factory():
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group_id,
                                 client_id=client_id, enable_auto_commit=False,
                                 partition_assignment_strategy=(RangePartitionAssignor,),
                                 session_timeout_ms=6000, heartbeat_interval_ms=300)
        consumer.subscribe([TOPIC])
        return consumer
    return LiveMember(client_id, "kafka-python", factory)


def consumer_protocol_member(bootstrap: str, group_id: str, client_id: str, errors: list):
    """A confluent-kafka KIP-848 member (ConsumerGroupHeartbeat); what librdkafka reports
    (error callback, errors from poll) is appended to ``errors``."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group_id,
                         "group.protocol": "consumer", "client.id": client_id,
                         "enable.auto.commit": False, "error_cb": errors.append})
    consumer.subscribe([TOPIC])
    return consumer


def is_max_size_error(error: KafkaError) -> bool:
    """GROUP_MAX_SIZE_REACHED as librdkafka 2.x hands it to the application: a ConsumerGroupHeartbeat
    answered with it is fatal to the consumer, so poll returns _FATAL whose text is the broker
    error's description (librdkafka's own, for error code 81); the plain code is accepted too."""
    return error.code() == GROUP_MAX_SIZE_REACHED or (
        error.code() == KafkaError._FATAL and MAX_SIZE_TEXT in error.str())


def read_view(spark, lake) -> dict[str, dict]:
    from jobs.lake.views import register_lake

    register_lake(spark, lake, snapshot_id="migration", settings=VIEW_SETTINGS)
    rows = spark.sql("select * from migration_readiness where group_id like 'mr-%'").collect()
    return {r.group_id: r.asDict() for r in rows}


def test_upgrade_verdicts_are_the_brokers(migration_broker, request, tmp_path_factory):
    began = time.monotonic()
    bootstrap = migration_broker.bootstrap_server
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics({TOPIC: {"num_partitions": 2, "replication_factor": 1}},
                            wait_for_metadata=True)
    finally:
        admin.close()
    timings: dict[str, float] = {}
    with Workloads(bootstrap, prefix="mr") as wl:
        for group_id, names in CLASSIC_MEMBERS.items():
            for name in names:
                wl.members[name] = classic_member(bootstrap, group_id, name)
        for group_id, names in CLASSIC_MEMBERS.items():
            wl.wait_group(group_id, ConsumerGroupState.STABLE, set(names),
                          {(TOPIC, 0), (TOPIC, 1)}, group_type=ConsumerGroupType.CLASSIC)
        wl.wait_settled()
        root = tmp_path_factory.mktemp("migration-snapshot")
        snapshot_log_dirs(migration_broker, root)
        timings["workload + snapshot"] = time.monotonic() - began

        mark = time.monotonic()
        from jobs.stages.pipeline import run_pipeline

        spark = request.getfixturevalue("spark")
        lake = tmp_path_factory.mktemp("migration-lake")
        report = run_pipeline(spark, lake, [str(root)], snapshot_id="migration",
                              progress=io.StringIO())
        assert report.reconciled, report.summary()
        view = read_view(spark, lake)
        timings["Spark, pipeline and view"] = time.monotonic() - mark

        keep = ("group_type", "direction", "member_count", "is_ready", "blockers", "is_empty",
                "protocol_type", "group_max_size", "group_max_size_config", "migration_policy",
                "malformed_subscription_count", "malformed_assignment_count",
                "custom_assignor_member_count")
        common = {"group_type": "classic", "direction": "upgrade", "is_empty": False,
                  "protocol_type": "consumer", "group_max_size": MAX_SIZE,
                  "group_max_size_config": "group.consumer.max.size",
                  "migration_policy": "bidirectional", "malformed_subscription_count": 0,
                  "malformed_assignment_count": 0, "custom_assignor_member_count": 0}
        assert {g: {k: row[k] for k in keep} for g, row in view.items()} == {
            READY: {**common, "member_count": 1, "is_ready": True, "blockers": []},
            FULL: {**common, "member_count": 2, "is_ready": False, "blockers": ["group_size"]}}

        # The broker's verdicts. mr-full first: its refused join must append nothing to its
        # partition (mr-ready's conversion might share it).
        mark = time.monotonic()
        full_partition = view[FULL]["log_partition"]
        ends_before = offsets_end_offsets(bootstrap)
        errors: list[KafkaError] = []
        refused = consumer_protocol_member(bootstrap, FULL, f"{FULL}-consumer", errors)
        try:
            deadline = time.monotonic() + REFUSAL_WAIT_S
            while not any(is_max_size_error(e) for e in errors):
                assert time.monotonic() < deadline, \
                    f"no GROUP_MAX_SIZE_REACHED for {FULL} in {REFUSAL_WAIT_S} s: {errors}"
                message = refused.poll(0.2)
                if message is not None and message.error() is not None:
                    errors.append(message.error())
            assert not refused.assignment()
        finally:
            closer = threading.Thread(target=refused.close, daemon=True)
            closer.start()
            closer.join(timeout=15)
        described = wl.describe(FULL)
        assert (described.type, described.state,
                sorted(m.client_id for m in described.members)) == (
            ConsumerGroupType.CLASSIC, ConsumerGroupState.STABLE, CLASSIC_MEMBERS[FULL])
        assert offsets_end_offsets(bootstrap)[full_partition] == ends_before[full_partition]
        timings["mr-full refused"] = time.monotonic() - mark
        refusal = [f"{e.name()} ({e.code()}, fatal={e.fatal()}): {e.str()}" for e in errors]

        # mr-ready: the consumer-protocol member joins and the group is converted.
        mark = time.monotonic()
        ready_partition = view[READY]["log_partition"]
        ends_before = offsets_end_offsets(bootstrap)
        joiner = f"{READY}-consumer"
        wl._confluent(joiner, READY, "consumer", topics=(TOPIC,))
        described = wl.wait_group(READY, ConsumerGroupState.STABLE,
                                  {*CLASSIC_MEMBERS[READY], joiner}, {(TOPIC, 0), (TOPIC, 1)},
                                  group_type=ConsumerGroupType.CONSUMER)
        assert described.type == ConsumerGroupType.CONSUMER
        # The conversion was written: the group's tombstone and its consumer-group records
        # (convertToConsumerGroup), then the new member's.
        assert offsets_end_offsets(bootstrap)[ready_partition] > ends_before[ready_partition]
        timings["mr-ready converted"] = time.monotonic() - mark
    print(f"\n{', '.join(f'{k} {v:.1f} s' for k, v in timings.items())}; "
          f"total {time.monotonic() - began:.1f} s")
    print(f"mr-full refusal as librdkafka reported it: {refusal}")

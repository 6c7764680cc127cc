"""Fixtures that run a real Kafka broker (see kafka_broker.py) and write real coordinator records.

``coordinator_activity`` makes the broker's group coordinator write, to ``__consumer_offsets``:

* a classic group (kafka-python, ``subscribe``): GroupMetadata records and three offset commits;
* a transactional producer's ``send_offsets_to_transaction`` for ``txn-group``: one committed
  transaction (partition 0) and one aborted (partition 1), so the log holds transactional batches,
  COMMIT/ABORT markers and an offset commit that must never take effect;
* when confluent-kafka is installed, a KIP-848 ``consumer``-protocol group (record types 3-8).

Without ``java`` the Kafka tests are skipped, loudly (reason in the summary). With java but without
the jars they fail: run ``bash build/kafka/fetch.sh`` (``make`` does it before the tests).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from .kafka_broker import (KafkaBroker, KafkaHarnessError, KafkaJarsMissing, java_executable,
                           kafka_libs_dir)
from .kafka_python_rejoin import guard_rejoin

guard_rejoin()  # kafka-python 3.0.12 classic members: see kafka_python_rejoin.py

_SKIPPED_NO_JAVA = "Kafka integration tests SKIPPED: `java` is not installed (need Java 17+ on PATH or JAVA_HOME)"
_skip_reasons: set[str] = set()


def pytest_terminal_summary(terminalreporter) -> None:
    for reason in sorted(_skip_reasons):
        terminalreporter.write_sep("!", reason, yellow=True, bold=True)


def _kafka_libs(version: str | None = None):
    """The jars of Kafka ``version``: the test is skipped without java, failed without the jars."""
    if java_executable() is None:
        _skip_reasons.add(_SKIPPED_NO_JAVA)
        pytest.skip(_SKIPPED_NO_JAVA)
    try:
        return kafka_libs_dir(version)
    except KafkaJarsMissing as exc:
        pytest.fail(str(exc), pytrace=False)


def running_broker(tmp_path_factory: pytest.TempPathFactory, name: str = "kafka",
                   version: str | None = None, overrides: dict[str, str] | None = None):
    """Start a broker for a fixture (skip without java, fail without the jars) and stop it when
    the generator is closed: ``yield from running_broker(tmp_path_factory)``. ``version``:
    another fetched release than the suite's (``build/kafka/fetch.sh``); ``overrides``: broker
    settings on top of the suite's."""
    libs = _kafka_libs(version)
    for attempt in (1, 2):
        # New ports each attempt: free_port() cannot reserve them, so another process on the
        # machine may take one before the broker binds it.
        broker = KafkaBroker(tmp_path_factory.mktemp(name), libs=libs, version=version,
                             overrides=overrides)
        try:
            broker.start()
            break
        except KafkaHarnessError as exc:
            if attempt == 2:
                pytest.fail(f"could not start Kafka: {exc}", pytrace=False)
            print(f"Kafka did not start, trying again on other ports: {exc}")
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory):
    """A running single-node KRaft broker on 127.0.0.1, stopped at the end of the session."""
    yield from running_broker(tmp_path_factory)


@pytest.fixture(scope="session")
def coordinator_activity(kafka_broker: KafkaBroker) -> CoordinatorActivity:
    """Groups that committed offsets (plainly and in committed and aborted transactions)."""
    try:
        return make_activity(kafka_broker.bootstrap_server)
    except Exception:
        print(f"broker log tail:\n{kafka_broker.log_tail()}")
        raise


TOPIC = "orders"
TOPIC_PARTITIONS = 3
CLASSIC_GROUP = "classic-group"                     # partition 0
TXN_GROUP = "txn-group"                             # partition 1
CONSUMER_PROTOCOL_GROUP = "consumer-protocol-group"  # hashes to partition 2 of 3


@dataclass(frozen=True)
class CoordinatorActivity:
    """What was written: committed offsets that must be visible, keys that must not be."""
    committed: dict[tuple[str, str, int], int]        # (group, topic, partition) -> offset
    aborted: dict[tuple[str, str, int], int]          # written in an aborted transaction only
    consumer_protocol_group: str | None = None        # set when confluent-kafka made a KIP-848 group
    groups: tuple[str, ...] = field(default=())


def make_activity(bootstrap: str) -> CoordinatorActivity:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics({TOPIC: {"num_partitions": TOPIC_PARTITIONS, "replication_factor": 1}},
                            wait_for_metadata=True)
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(30):
        producer.send(TOPIC, value=b"order-%d" % i, partition=i % TOPIC_PARTITIONS)
    producer.flush()
    producer.close()

    committed = _classic_group(bootstrap)
    txn_committed, txn_aborted = _transactions(bootstrap)
    committed.update(txn_committed)
    kip848 = _consumer_protocol_group(bootstrap)
    if kip848:
        committed.update({(kip848, TOPIC, p): 10 + p for p in range(TOPIC_PARTITIONS)})
    groups = (CLASSIC_GROUP, TXN_GROUP) + ((kip848,) if kip848 else ())
    return CoordinatorActivity(committed, txn_aborted, kip848, groups)


def _classic_group(bootstrap: str) -> dict[tuple[str, str, int], int]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=CLASSIC_GROUP,
                             enable_auto_commit=False, auto_offset_reset="earliest",
                             session_timeout_ms=6000, heartbeat_interval_ms=1000)
    try:
        consumer.subscribe([TOPIC])
        deadline = time.monotonic() + 30
        while not consumer.assignment():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{CLASSIC_GROUP} got no assignment in 30 s")
            consumer.poll(timeout_ms=200)
        offsets = {TopicPartition(TOPIC, p): OffsetAndMetadata(3 + p, "classic", -1)
                   for p in range(TOPIC_PARTITIONS)}
        consumer.commit(offsets)
    finally:
        consumer.close(autocommit=False)
    return {(CLASSIC_GROUP, TOPIC, p): 3 + p for p in range(TOPIC_PARTITIONS)}


def _transactions(bootstrap: str):
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id="offsetlake-test-txn")
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(TOPIC, value=b"in-committed-txn", partition=0)
        producer.send_offsets_to_transaction(
            {TopicPartition(TOPIC, 0): OffsetAndMetadata(7, "txn", -1)}, TXN_GROUP)
        producer.commit_transaction()
        producer.begin_transaction()
        producer.send(TOPIC, value=b"in-aborted-txn", partition=1)
        producer.send_offsets_to_transaction(
            {TopicPartition(TOPIC, 1): OffsetAndMetadata(99, "aborted", -1)}, TXN_GROUP)
        producer.flush()
        producer.abort_transaction()
    finally:
        producer.close()
    return {(TXN_GROUP, TOPIC, 0): 7}, {(TXN_GROUP, TOPIC, 1): 99}


def _consumer_protocol_group(bootstrap: str) -> str | None:
    """A KIP-848 group (ConsumerGroupHeartbeat); kafka-python speaks only the classic protocol."""
    try:
        from confluent_kafka import Consumer, TopicPartition as CkTopicPartition
    except ImportError:
        return None
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": CONSUMER_PROTOCOL_GROUP,
                         "group.protocol": "consumer", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([TOPIC])
        deadline = time.monotonic() + 30
        while not consumer.assignment():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{CONSUMER_PROTOCOL_GROUP} got no assignment in 30 s")
            consumer.poll(0.2)
        consumer.commit(offsets=[CkTopicPartition(TOPIC, p, 10 + p) for p in range(TOPIC_PARTITIONS)],
                        asynchronous=False)
    finally:
        consumer.close()
    return CONSUMER_PROTOCOL_GROUP


@pytest.fixture(scope="session")
def compaction_series(tmp_path_factory):
    """Six snapshots of one broker's ``__consumer_offsets`` taken while its log cleaner compacts
    it (:mod:`.compaction_series`), once per session, by a child process with a broker of its
    own (:func:`.compaction_series.take_in_child`: a client that hangs there costs minutes, not
    the session); the tests read the copies."""
    from .compaction_series import take_in_child

    _kafka_libs()
    return take_in_child(tmp_path_factory.mktemp("compaction-series"), 6)

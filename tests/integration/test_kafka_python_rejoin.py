"""The guard for kafka-python's rejoin race (kafka_python_rejoin.py), against a real broker.

Short poll timeouts make the race likely: the leader's second JoinGroup (sent when the topic's
metadata arrives after its first join) is still in flight when ``poll`` returns. Unguarded,
kafka-python 3.0.12 then lost the join in 4 of 5 groups here and the member never took its
partitions; guarded, every member owns all of them and stays in the group past its session
timeout (so it heartbeats).
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import ConsumerGroupState
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient, KafkaConsumer
from kafka.admin import NewTopic

from .conftest import running_broker

pytestmark = pytest.mark.integration

TOPIC = "rejoin-guard"
PARTITIONS = 3
SESSION_TIMEOUT_MS = 6000


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    """A broker of this module's own: the groups it makes stay out of the shared broker's log."""
    yield from running_broker(tmp_path_factory, "kafka-rejoin")


def _poll_until(consumer: KafkaConsumer, done, seconds: float, poll_ms: int) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        consumer.poll(timeout_ms=poll_ms)
        if done():
            return True
    return False


@pytest.mark.parametrize("group", ["rejoin-1", "rejoin-2", "rejoin-3"])
def test_a_leader_polling_with_short_timeouts_takes_its_partitions_and_stays(broker, group):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_server)
    try:
        if TOPIC not in admin.list_topics():
            admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])
    finally:
        admin.close()
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_server, group_id=group,
                             client_id=group, enable_auto_commit=False,
                             session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=300)
    try:
        consumer.subscribe([TOPIC])
        owned = lambda: {tp.partition for tp in consumer.assignment()}  # noqa: E731
        assert _poll_until(consumer, lambda: owned() == set(range(PARTITIONS)), 20, poll_ms=5), \
            f"{group}: owns {sorted(owned())} after 20 s"
        # Past a session timeout: a member whose heartbeats stayed disabled is removed by then.
        _poll_until(consumer, lambda: False, SESSION_TIMEOUT_MS / 1000 + 2, poll_ms=50)
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_server})
        described = admin.describe_consumer_groups([group], request_timeout=10)[group].result()
        assert owned() == set(range(PARTITIONS))
        assert described.state == ConsumerGroupState.STABLE
        assert [m.client_id for m in described.members] == [group]
    finally:
        consumer.close(autocommit=False)

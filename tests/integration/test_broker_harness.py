"""The test broker itself: it runs, writes real coordinator records, and Kafka's tools read them."""

from __future__ import annotations

import re

import pytest
from kafka import KafkaAdminClient, KafkaConsumer

from .conftest import CLASSIC_GROUP, TOPIC, TXN_GROUP
from .kafka_broker import (DUMP_LOG_SEGMENTS, OFFSETS_PARTITIONS, OFFSETS_TOPIC, SNAPSHOT_NAMES,
                           SNAPSHOT_SUFFIXES, KafkaBroker, KafkaHarnessError, snapshot_log_dirs)

pytestmark = pytest.mark.integration


def dump_segment(broker: KafkaBroker, segment) -> list[str]:
    result = broker.run_tool(DUMP_LOG_SEGMENTS, "--offsets-decoder", "--files", str(segment))
    return result.stdout.splitlines()


def test_broker_answers_with_its_cluster_id_and_offsets_topic(kafka_broker, coordinator_activity):
    admin = KafkaAdminClient(bootstrap_servers=kafka_broker.bootstrap_server)
    try:
        cluster = admin.describe_cluster()
    finally:
        admin.close()
    consumer = KafkaConsumer(bootstrap_servers=kafka_broker.bootstrap_server)
    try:
        partitions = consumer.partitions_for_topic(OFFSETS_TOPIC)
    finally:
        consumer.close()

    assert cluster["cluster_id"] == kafka_broker.cluster_id
    assert [b["port"] for b in cluster["brokers"]] == [kafka_broker.port]
    assert partitions == set(range(OFFSETS_PARTITIONS))


def test_snapshot_copies_segments_and_side_files_only(kafka_broker, coordinator_activity, tmp_path):
    copied = snapshot_log_dirs(kafka_broker, tmp_path)

    assert [d.name for d in copied] == [f"{OFFSETS_TOPIC}-{p}" for p in range(OFFSETS_PARTITIONS)]
    for target, source in zip(copied, kafka_broker.partition_dirs()):
        names = {f.name for f in target.iterdir()}
        assert names, f"{target} is empty"
        assert all(n.endswith(SNAPSHOT_SUFFIXES) or n in SNAPSHOT_NAMES for n in names)
        for segment in source.glob("*.log"):
            # The broker may have appended since: the copy is a prefix of the live segment.
            assert segment.read_bytes().startswith((target / segment.name).read_bytes())
    assert any((d / f.name).stat().st_size > 0 for d in copied for f in d.glob("*.log"))


def test_dump_log_segments_decodes_a_copied_segment(kafka_broker, coordinator_activity, tmp_path):
    copied = snapshot_log_dirs(kafka_broker, tmp_path)
    lines = [line for d in copied for segment in sorted(d.glob("*.log"))
             for line in dump_segment(kafka_broker, segment)]

    assert any(line.startswith("Dumping ") for line in lines)
    assert any(line.startswith("baseOffset: ") and "isvalid: true" in line for line in lines)
    keys = set(re.findall(r' key: (\{"type":"[0-9]+","data":\{.*?\}\})', "\n".join(lines)))
    for group, topic, partition in coordinator_activity.committed:
        assert (f'{{"type":"1","data":{{"group":"{group}","topic":"{topic}",'
                f'"partition":{partition}}}}}') in keys
    assert f'{{"type":"2","data":{{"group":"{CLASSIC_GROUP}"}}}}' in keys


def test_the_aborted_offset_commit_is_in_the_log_with_an_abort_marker(kafka_broker,
                                                                       coordinator_activity,
                                                                       tmp_path):
    """The raw log keeps the aborted commit: what read_committed must hide really exists."""
    (group, topic, partition), _ = next(iter(coordinator_activity.aborted.items()))
    key = f'"group":"{group}","topic":"{topic}","partition":{partition}'
    lines = [line for d in snapshot_log_dirs(kafka_broker, tmp_path)
             for segment in sorted(d.glob("*.log")) for line in dump_segment(kafka_broker, segment)]

    record_at = next(i for i, line in enumerate(lines) if key in line)
    batch = next(line for line in reversed(lines[:record_at]) if line.startswith("baseOffset:"))
    producer_id = re.search(r"producerId: (\d+)", batch).group(1)
    assert "isTransactional: true" in batch
    assert any("endTxnMarker: ABORT" in marker for marker in lines[record_at:])
    assert group == TXN_GROUP and topic == TOPIC and int(producer_id) >= 0


def test_a_broker_that_cannot_start_raises_and_leaves_nothing_running(kafka_broker, tmp_path):
    broker = KafkaBroker(tmp_path, libs=kafka_broker.libs, overrides={"offsets.topic.num.partitions": "zero"})

    with pytest.raises(KafkaHarnessError, match="offsets.topic.num.partitions"):
        broker.start()
    assert not broker.running

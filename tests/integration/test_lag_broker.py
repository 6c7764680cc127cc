"""The ``lag`` table against Kafka's own ``kafka-consumer-groups --describe`` on a real broker.

Records are produced to a topic, two groups commit part of it (one of them below a log start that
DeleteRecords then moves past its commit), producing stops, and then: describe, ``offsetlake
capture``, describe again (the two must agree: nothing moved), ``offsetlake run``'s pipeline. The
lag rows of the two groups must be exactly what describe printed (CURRENT-OFFSET, LOG-END-OFFSET,
LAG). describe reads its end offsets read_uncommitted (4.3.1 OffsetsUtils.getLogEndOffsets with a
default ListOffsetsOptions), the capture read_committed; no transaction is open on the topic, so
both are the high watermark.
"""

from __future__ import annotations

import io
import json
from datetime import datetime

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from jobs.cli import main as offsetlake
from jobs.lake import read_snapshot
from jobs.lake.tables import LAG
from jobs.stages.pipeline import run_pipeline

CONSUMER_GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
TOPIC = "lag-orders"
PRODUCED = {0: 10, 1: 6, 2: 4}                      # records per partition
COMMITTED = {"lag-group-a": {0: 4, 1: 6, 2: 1},     # behind, caught up, behind
             "lag-group-b": {0: 2, 1: 1}}           # p1: below the log start after DeleteRecords
DELETED_BEFORE = {1: 3}                              # DeleteRecords: log start of p1 becomes 3
SNAPSHOT_ID = "lag-it"


def _prepare(bootstrap: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics({TOPIC: {"num_partitions": len(PRODUCED), "replication_factor": 1}},
                            wait_for_metadata=True)
        producer = KafkaProducer(bootstrap_servers=bootstrap)
        for partition, count in PRODUCED.items():
            for i in range(count):
                producer.send(TOPIC, value=b"record-%d" % i, partition=partition)
        producer.flush()
        producer.close()   # producing stops here: nothing changes after this
        for group, offsets in COMMITTED.items():
            # Assigned, not subscribed: the commit of a consumer outside any generation.
            consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group,
                                     enable_auto_commit=False)
            try:
                consumer.assign([TopicPartition(TOPIC, p) for p in offsets])
                consumer.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(o, "", -1)
                                 for p, o in offsets.items()})
            finally:
                consumer.close(autocommit=False)
        admin.delete_records({TopicPartition(TOPIC, p): o for p, o in DELETED_BEFORE.items()})
    finally:
        admin.close()


def describe(broker) -> set[tuple[str, str, int, int, int, int]]:
    """(group, topic, partition, CURRENT-OFFSET, LOG-END-OFFSET, LAG) as Kafka's tool prints them."""
    args = ["--bootstrap-server", broker.bootstrap_server, "--describe"]
    for group in COMMITTED:
        args += ["--group", group]
    out = broker.run_tool(CONSUMER_GROUP_COMMAND, *args).stdout
    rows, header = set(), None
    for line in out.splitlines():
        cells = line.split()
        if "CURRENT-OFFSET" in cells:
            header = cells
        elif header and len(cells) == len(header):
            row = dict(zip(header, cells))
            rows.add((row["GROUP"], row["TOPIC"], int(row["PARTITION"]),
                      int(row["CURRENT-OFFSET"]), int(row["LOG-END-OFFSET"]), int(row["LAG"])))
    return rows


def _ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


@pytest.mark.integration
def test_lag_rows_equal_kafka_consumer_groups_describe(spark, kafka_broker, tmp_path):
    _prepare(kafka_broker.bootstrap_server)
    out = tmp_path / "capture"

    before = describe(kafka_broker)
    assert offsetlake(["capture", "--bootstrap-server", kafka_broker.bootstrap_server,
                       "--out", str(out), "--snapshot-id", SNAPSHOT_ID]) == 0
    assert describe(kafka_broker) == before   # nothing moved while the capture read
    run_pipeline(spark, tmp_path / "lake", [str(out)], progress=io.StringIO())
    lag = [r for r in read_snapshot(spark, tmp_path / "lake", LAG, SNAPSHOT_ID).collect()
           if r.group_id in COMMITTED]

    # What describe printed, known beforehand (so a parse that finds nothing cannot pass).
    assert before == {(g, TOPIC, p, o, PRODUCED[p], PRODUCED[p] - o)
                      for g, offsets in COMMITTED.items() for p, o in offsets.items()}
    assert {(r.group_id, r.topic, r.partition, r.committed_offset, r.log_end_offset, r.lag)
            for r in lag} == before
    assert len(lag) == len(before)
    assert {(r.group_id, r.partition): (r.log_start_offset, r.is_committed_below_log_start)
            for r in lag} == {(g, p): (DELETED_BEFORE.get(p, 0), o < DELETED_BEFORE.get(p, 0))
                              for g, offsets in COMMITTED.items() for p, o in offsets.items()}
    manifest = json.loads((out / "manifest.json").read_text())
    assert {r.read_at for r in lag} <= set(range(_ms(manifest["capture_started_at"]),
                                                 _ms(manifest["capture_finished_at"]) + 1))

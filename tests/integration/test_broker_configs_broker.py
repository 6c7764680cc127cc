"""The captured cluster's own broker settings, end to end on a real broker.

A broker started with ``offsets.retention.minutes=3`` in its server.properties gets one offset
commit (so ``__consumer_offsets`` exists), is captured and the capture run. The manifest's
``broker_configs`` must be what Kafka's own ``kafka-configs --describe --all`` prints for the
broker (value, and the source of the first synonym, which is the one in effect), the
``broker_configs`` rows the same, and the snapshot's ``settings`` row must carry the 3 minutes,
not conf/'s 10080.
"""

from __future__ import annotations

import io
import re

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

from jobs.lake import read_snapshot
from jobs.lake.tables import BROKER_CONFIGS
from jobs.lake.views import BROKER_SETTINGS, register_lake
from jobs.runtime.config import load_section
from jobs.snapshots.capture import Manifest, capture
from jobs.stages.pipeline import run_pipeline

from .conftest import running_broker

pytestmark = pytest.mark.integration

CONFIG_COMMAND = "kafka.admin.ConfigCommand"   # kafka-configs.sh (4.3.1)
RETENTION_MINUTES = "3"
TOPIC = "bc-orders"
SNAPSHOT_ID = "bc-it"
# "  name=value sensitive=false synonyms={SOURCE:name=value, ...}" (ConfigCommand
# .describeResourceConfig, 4.3.1)
DESCRIBED = re.compile(r"^  ([^=\s]+)=(.*) sensitive=(?:true|false) synonyms=\{(.*)\}$")


@pytest.fixture(scope="module")
def retention_broker(tmp_path_factory):
    yield from running_broker(tmp_path_factory, "kafka-broker-configs", overrides={
        "offsets.retention.minutes": RETENTION_MINUTES})


def _commit(bootstrap: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics({TOPIC: {"num_partitions": 1, "replication_factor": 1}},
                            wait_for_metadata=True)
    finally:
        admin.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id="bc-group",
                             enable_auto_commit=False)
    try:
        consumer.assign([TopicPartition(TOPIC, 0)])
        consumer.commit({TopicPartition(TOPIC, 0): OffsetAndMetadata(0, "", -1)})
    finally:
        consumer.close(autocommit=False)


def kafka_configs(broker) -> dict[str, dict[str, str]]:
    """{name: {"value", "source"}} of BROKER_SETTINGS as kafka-configs --describe --all prints
    them for broker 1 (source: the first synonym's, the one in effect)."""
    out = broker.run_tool(CONFIG_COMMAND, "--bootstrap-server", broker.bootstrap_server,
                          "--entity-type", "brokers", "--entity-name", "1", "--describe",
                          "--all").stdout
    described = {}
    for line in out.splitlines():
        if (match := DESCRIBED.match(line)) and match.group(1) in BROKER_SETTINGS:
            described[match.group(1)] = {"value": match.group(2),
                                         "source": match.group(3).split(":", 1)[0]}
    return described


def test_the_capture_records_the_brokers_settings_and_the_snapshots_settings_use_them(
        spark, retention_broker, tmp_path):
    _commit(retention_broker.bootstrap_server)
    out, progress = tmp_path / "capture", io.StringIO()

    manifest = capture(retention_broker.bootstrap_server, out, snapshot_id=SNAPSHOT_ID,
                       progress=progress)

    assert "WARNING" not in progress.getvalue()
    assert Manifest.read(out / "manifest.json") == manifest
    assert manifest.broker_configs_broker_id == 1
    # Known beforehand: the override is static, the rest Kafka's defaults (GroupCoordinatorConfig).
    assert manifest.broker_configs == {
        "offsets.retention.minutes": {"value": "3", "source": "STATIC_BROKER_CONFIG"},
        "offsets.retention.check.interval.ms": {"value": "600000", "source": "DEFAULT_CONFIG"},
        "group.consumer.max.size": {"value": "2147483647", "source": "DEFAULT_CONFIG"},
        "group.max.size": {"value": "2147483647", "source": "DEFAULT_CONFIG"},
        "group.consumer.migration.policy": {"value": "bidirectional",
                                            "source": "DEFAULT_CONFIG"}}
    assert manifest.broker_configs == kafka_configs(retention_broker)   # Kafka's own tool agrees

    lake = tmp_path / "lake"
    run_pipeline(spark, lake, [str(out)], progress=io.StringIO())
    rows = read_snapshot(spark, lake, BROKER_CONFIGS, SNAPSHOT_ID).collect()
    assert {r.name: {"value": r.value, "source": r.source} for r in rows} == manifest.broker_configs
    assert len(rows) == len(BROKER_SETTINGS)

    assert int(load_section("insights")["offsets_retention_minutes"]) != 3   # conf/ says otherwise
    register_lake(spark, lake, SNAPSHOT_ID)
    assert spark.sql("select offsets_retention_ms from settings").collect()[0][0] == 180_000

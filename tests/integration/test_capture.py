"""``offsetlake capture`` against a real broker, checked against Kafka's own DumpLogSegments.

Keys are parsed minimally here (OffsetCommitKey: int16 type 1, int16-length group, int16-length
topic, int32 partition; value: int16 version then int64 offset in every version), so these tests do
not depend on the project's codec.
"""

from __future__ import annotations

import io
import re
import struct
import time

import pyarrow.parquet as pq
import pytest
from kafka import KafkaConsumer, TopicPartition

from jobs.lake.bronze import CAPTURE_RECORDS_DIR, RAW_RECORDS_SCHEMA
from jobs.commands.capture import main
from jobs.snapshots.capture import CaptureError, Manifest, capture
from jobs.runtime.kafka_client import KafkaConfigError, client_settings, redact

from .kafka_broker import (DUMP_LOG_SEGMENTS, OFFSETS_PARTITIONS, OFFSETS_TOPIC, free_port,
                           snapshot_log_dirs)


def offset_commit_key(key: bytes) -> tuple[str, str, int] | None:
    """(group, topic, partition) of an OffsetCommitKey (type 0 or 1); None for other types."""
    (record_type,) = struct.unpack_from(">h", key)
    if record_type not in (0, 1):
        return None
    (group_len,) = struct.unpack_from(">h", key, 2)
    group = key[4:4 + group_len].decode()
    (topic_len,) = struct.unpack_from(">h", key, 4 + group_len)
    topic_at = 6 + group_len
    topic = key[topic_at:topic_at + topic_len].decode()
    (partition,) = struct.unpack_from(">i", key, topic_at + topic_len)
    return group, topic, partition


def committed_offset(value: bytes) -> int:
    return struct.unpack_from(">q", value, 2)[0]


def offsets_partition(group: str, partitions: int = OFFSETS_PARTITIONS) -> int:
    """Kafka's partitionFor: Utils.abs(groupId.hashCode()) % partitions (Java String hash)."""
    h = 0
    for unit in struct.unpack(f">{len(group.encode('utf-16-be')) // 2}H", group.encode("utf-16-be")):
        h = (31 * h + unit) & 0xFFFFFFFF
    h = h - (1 << 32) if h >= 1 << 31 else h
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def visible_offsets(dump_lines: list[str], partition: int) -> set[tuple[int, int]]:
    """(partition, offset) of data records a read_committed consumer may return, per the dump."""
    visible, pending, producer, transactional, control = set(), {}, -1, False, False
    for line in dump_lines:
        if line.startswith("baseOffset:"):
            producer = int(re.search(r"producerId: (-?\d+)", line).group(1))
            transactional = "isTransactional: true" in line
            control = "isControl: true" in line
        elif line.startswith("| offset:"):
            offset = int(re.match(r"\| offset: (\d+)", line).group(1))
            if control:
                committed = pending.pop(producer, set())
                if "endTxnMarker: COMMIT" in line:
                    visible |= committed
            elif transactional:
                pending.setdefault(producer, set()).add((partition, offset))
            else:
                visible.add((partition, offset))
    return visible


@pytest.fixture(scope="module")
def captured(kafka_broker, coordinator_activity, tmp_path_factory):
    out = tmp_path_factory.mktemp("capture") / "snapshot"
    progress = io.StringIO()
    manifest = capture(kafka_broker.bootstrap_server, out, snapshot_id="it-1", progress=progress)
    return manifest, out, progress.getvalue()


@pytest.mark.integration
def test_manifest_records_the_cut_and_the_cluster(kafka_broker, captured):
    manifest, out, _ = captured
    consumer = KafkaConsumer(bootstrap_servers=kafka_broker.bootstrap_server,
                             isolation_level="read_committed")
    try:
        tps = [TopicPartition(OFFSETS_TOPIC, p) for p in range(OFFSETS_PARTITIONS)]
        starts, ends = consumer.beginning_offsets(tps), consumer.end_offsets(tps)
    finally:
        consumer.close()

    assert Manifest.read(out / "manifest.json") == manifest
    assert manifest.snapshot_id == "it-1"
    assert manifest.cluster_id == kafka_broker.cluster_id
    assert manifest.isolation_level == "read_committed"
    assert [(p.partition, p.start_offset, p.end_offset) for p in manifest.partitions] == \
        [(tp.partition, starts[tp], ends[tp]) for tp in tps]
    assert all(p.high_watermark == p.end_offset for p in manifest.partitions)  # no open txn
    assert manifest.capture_started_at <= manifest.capture_finished_at


@pytest.mark.integration
def test_files_have_the_bronze_schema_and_the_manifest_row_counts(captured):
    manifest, out, _ = captured
    for part in manifest.partitions:
        table = pq.read_table(out / part.file)
        assert table.schema == RAW_RECORDS_SCHEMA
        assert table.num_rows == part.rows
        assert set(table.column("partition").to_pylist()) <= {part.partition}
        assert set(table.column("source_file").to_pylist()) <= {
            f"kafka://{manifest.bootstrap_servers}/{OFFSETS_TOPIC}-{part.partition}"}
    assert sum(p.rows for p in manifest.partitions) > 0


@pytest.mark.integration
def test_committed_offsets_are_captured_and_the_aborted_one_is_not(captured, coordinator_activity):
    manifest, out, _ = captured
    rows = pq.read_table(out / CAPTURE_RECORDS_DIR).to_pylist()
    latest = {}
    for row in sorted(rows, key=lambda r: (r["partition"], r["offset"])):
        key = offset_commit_key(row["key"])
        if key is not None:
            assert row["partition"] == offsets_partition(key[0])
            latest[key] = committed_offset(row["value"])

    assert {k: latest.get(k) for k in coordinator_activity.committed} == coordinator_activity.committed
    assert not set(coordinator_activity.aborted) & set(latest)
    assert {r["is_control"] for r in rows} == {False}
    assert {r["crc_valid"] for r in rows} == {True}
    assert {r["timestamp_type"] for r in rows} == {"CreateTime"}
    assert {r["producer_id"] for r in rows} == {r["batch_base_offset"] for r in rows} == {None}


@pytest.mark.integration
def test_capture_holds_exactly_the_records_dump_log_segments_shows_as_committed(
        kafka_broker, captured, tmp_path):
    manifest, out, _ = captured
    snapshot_log_dirs(kafka_broker, tmp_path)
    expected = set()
    for part in manifest.partitions:
        directory = tmp_path / f"{OFFSETS_TOPIC}-{part.partition}"
        lines = [line for segment in sorted(directory.glob("*.log")) for line in
                 kafka_broker.run_tool(DUMP_LOG_SEGMENTS, "--offsets-decoder", "--files",
                                       str(segment)).stdout.splitlines()]
        expected |= {(p, o) for p, o in visible_offsets(lines, part.partition)
                     if part.start_offset <= o < part.end_offset}
    table = pq.read_table(out / CAPTURE_RECORDS_DIR, columns=["partition", "offset"])

    assert set(zip(table.column("partition").to_pylist(), table.column("offset").to_pylist())) \
        == expected


@pytest.mark.integration
def test_progress_names_every_partition(captured):
    _, _, progress = captured
    for p in range(OFFSETS_PARTITIONS):
        assert re.search(rf"{OFFSETS_TOPIC}-{p}: \d+ records", progress)


def test_unreachable_bootstrap_fails_fast_with_a_typed_error(tmp_path, monkeypatch):
    monkeypatch.setenv("OFFSETLAKE_KAFKA_SASL_PASSWORD", "s3cr3t-value")
    progress = io.StringIO()
    began = time.monotonic()

    with pytest.raises(CaptureError, match="cannot reach Kafka at 127.0.0.1") as error:
        capture(f"127.0.0.1:{free_port()}", tmp_path / "out", progress=progress, timeout_s=2)

    assert time.monotonic() - began < 15
    assert "s3cr3t-value" not in progress.getvalue() + str(error.value)
    assert "sasl_plain_password" in progress.getvalue()
    assert not (tmp_path / "out" / "manifest.json").exists()


def test_main_exits_2_on_an_unreachable_cluster(tmp_path, capsys):
    code = main(["--bootstrap-server", f"127.0.0.1:{free_port()}", "--out", str(tmp_path / "o"),
                 "--timeout-s", "2"])

    assert code == 2
    assert "offsetlake capture: cannot reach Kafka" in capsys.readouterr().err


def test_capture_refuses_a_non_empty_directory(tmp_path):
    (tmp_path / "old.parquet").write_bytes(b"")

    with pytest.raises(CaptureError, match="not empty"):
        capture("127.0.0.1:9", tmp_path, progress=None)


def test_settings_come_from_conf_and_environment_and_redact_secrets():
    env = {"OFFSETLAKE_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
           "OFFSETLAKE_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
           "OFFSETLAKE_KAFKA_SASL_USERNAME": "svc-offsetlake",
           "OFFSETLAKE_KAFKA_SASL_PASSWORD": "pw",
           "OFFSETLAKE_KAFKA_SSL_CHECK_HOSTNAME": "false",
           "OFFSETLAKE_KAFKA_REQUEST_TIMEOUT_MS": "5000"}

    settings = client_settings({"security_protocol": "PLAINTEXT", "request_timeout_ms": 30000}, env)

    assert settings == {"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512",
                        "sasl_plain_username": "svc-offsetlake", "sasl_plain_password": "pw",
                        "ssl_check_hostname": False, "request_timeout_ms": 5000}
    assert redact(settings) == {**settings, "sasl_plain_username": "***",
                                "sasl_plain_password": "***"}


@pytest.mark.parametrize("conf, message", [
    ({"group_id": "x"}, "set by capture itself"),
    ({"isolation_level": "read_uncommitted"}, "set by capture itself"),
    ({"no_such_setting": 1}, "not a kafka-python consumer setting"),
])
def test_settings_reject_reserved_and_unknown_keys(conf, message):
    with pytest.raises(KafkaConfigError, match=message):
        client_settings(conf, env={})


def test_settings_reject_a_malformed_environment_value():
    with pytest.raises(KafkaConfigError, match="request_timeout_ms: expected an integer"):
        client_settings({}, env={"OFFSETLAKE_KAFKA_REQUEST_TIMEOUT_MS": "soon"})

"""``offsetlake capture``: snapshot ``__consumer_offsets`` from a live cluster into bronze Parquet.

A capture is a consistent cut: the end offset of every partition is recorded first, then each
partition is read from its log start offset up to that end, and nothing after it. The consumer has
no group (it commits nothing and joins nothing), reads ``read_committed`` and writes rows of exactly
:data:`jobs.lake.bronze.RAW_RECORDS_SCHEMA` into ``<out>/raw_records/`` (one Parquet file per partition,
in row groups of :data:`ROW_GROUP_ROWS`, so memory stays bounded whatever the topic's size).
``<out>/manifest.json`` is written last: a directory without it is an incomplete capture.

Just after the cut the capture also reads, ``read_committed`` like the records, the log start and
end offset of every partition of every topic the cluster lists, and keeps in
``<out>/log_offsets.parquet`` (:data:`LOG_OFFSETS_SCHEMA`) those of the topics the captured offset
commits name: what ``offsetlake run`` needs for the ``lag`` table (:mod:`jobs.stages.lag`).

It also asks the group coordinators for the broker settings the insight views assume
(:data:`jobs.lake.views.BROKER_SETTINGS`: offsets.retention.minutes, ...) and records them, with
their source, in the manifest's ``broker_configs``; ``offsetlake run`` writes them to the
``broker_configs`` table (:mod:`jobs.stages.broker_configs`), which the ``settings`` view prefers
to conf/ for that snapshot.

    offsetlake capture --bootstrap-server 127.0.0.1:9092 --out snapshots/2026-11-22

What a capture cannot see
-------------------------
The consumer API returns records, not the log, so these columns are null (or fixed) in a capture
and a few things are simply absent. Read segment files (``offsetlake ingest``) when they matter.

* **Control records / transaction markers** (COMMIT, ABORT): never returned; ``is_control`` is
  False and ``control_type``/``coordinator_epoch`` are null.
* **Producer ids and epochs**, ``is_transactional``: not exposed (null). Offsets committed in a
  transaction look like plain commits.
* **Aborted transactional data**: ``read_committed`` hides it (replaying it would install offsets
  that never took effect). **Open transactions** are invisible too: in ``read_committed`` the end
  offset is the last stable offset, which stops before the first open transaction's records;
  the manifest keeps each partition's high watermark beside it.
* **Batch framing**: ``batch_base_offset``, ``magic``, ``compression`` and ``file_position`` are null.
* **CRCs**: the consumer verifies every batch CRC (``check_crcs``) and fails on a mismatch, so every
  captured row has ``crc_valid = True``; a capture cannot report *which* batch was corrupt the way
  a segment read does.
* **Compacted records**: records the log cleaner has already removed are gone for a capture exactly
  as for segment files (offsets have gaps there); so is **anything before the log start offset**
  (deleted or truncated segments).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, UTC
from pathlib import Path
from typing import Any, TextIO
from collections.abc import Mapping

import kafka
import pyarrow as pa
import pyarrow.parquet as pq
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType
from kafka.errors import KafkaError

from decoders.catalog_offsets_groups import LEGACY_OFFSET_COMMIT, OFFSET_COMMIT
from decoders.codec import decode_key
from decoders.errors import DecodeError
from jobs.lake.bronze import CAPTURE_RECORDS_DIR, RAW_RECORDS_SCHEMA
from jobs.lake.views import BROKER_SETTINGS
from jobs.runtime.kafka_client import KafkaConfigError, client_settings, redact

OFFSETS_TOPIC = "__consumer_offsets"
ROW_GROUP_ROWS = 50_000
ISOLATION_LEVEL = "read_committed"
TIMESTAMP_TYPES = {0: "CreateTime", 1: "LogAppendTime"}
PROGRESS_INTERVAL_S = 2.0
OFFSET_COMMIT_TYPES = (LEGACY_OFFSET_COMMIT.record_type, OFFSET_COMMIT.record_type)
CONFIGS_WARNING = "capture: WARNING: broker settings not read (conf/ applies): "

# One row per partition of each topic named in a captured offset commit (tombstones included).
LOG_OFFSETS_FILE = "log_offsets.parquet"
LOG_OFFSETS_SCHEMA = pa.schema([
    pa.field("topic", pa.string()),
    pa.field("partition", pa.int32()),
    pa.field("log_start_offset", pa.int64()),   # ListOffsets EARLIEST: the log start offset
    pa.field("log_end_offset", pa.int64()),     # ListOffsets LATEST, read_committed
    pa.field("read_at", pa.int64()),            # ms since the epoch, client clock, once answered
])


class CaptureError(RuntimeError):
    """The capture could not be made (unreachable cluster, bad settings, stalled read, ...)."""


@dataclass(frozen=True)
class PartitionCapture:
    partition: int
    start_offset: int       # log start offset when the capture began
    end_offset: int         # last stable offset at the cut (read_committed end); read up to here
    high_watermark: int     # > end_offset when a transaction was open at the cut
    rows: int
    file: str


@dataclass(frozen=True)
class Manifest:
    snapshot_id: str
    cluster_id: str | None
    bootstrap_servers: str
    topic: str
    capture_started_at: str
    capture_finished_at: str
    isolation_level: str
    kafka_python_version: str
    schema: list[str]
    partitions: list[PartitionCapture] = field(default_factory=list)
    log_offsets: str | None = None   # LOG_OFFSETS_FILE; None: not read (no lag for this capture)
    # {config name: {"value", "source"}} as broker_configs_broker_id reported them (DescribeConfigs);
    # None: not read (an older capture, or the cluster did not answer: conf/ applies).
    broker_configs: dict[str, dict[str, str | None]] | None = None
    broker_configs_broker_id: int | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2) + "\n"

    @classmethod
    def read(cls, path: str | Path) -> Manifest:
        raw = json.loads(Path(path).read_text())
        raw["partitions"] = [PartitionCapture(**p) for p in raw["partitions"]]
        return cls(**raw)


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def capture(bootstrap_server: str, out_dir: str | Path, *, snapshot_id: str | None = None,
            config: Mapping[str, Any] | None = None, progress: TextIO | None = sys.stderr,
            timeout_s: float = 30.0) -> Manifest:
    """Capture every partition of ``__consumer_offsets`` into ``out_dir``; return the manifest.

    ``config`` is the ``kafka:`` section of the configuration (kafka-python setting names); the
    ``OFFSETLAKE_KAFKA_*`` environment variables add secrets. ``timeout_s`` bounds connecting and
    any stretch of reading without progress.
    """
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise CaptureError(f"{out} exists and is not empty; capture into a new directory")
    try:
        settings = client_settings(config)
    except KafkaConfigError as exc:
        raise CaptureError(str(exc)) from exc
    started_at = utc_now()
    snapshot_id = snapshot_id or "capture-" + started_at.replace("-", "").replace(":", "")[:15] + "Z"
    _say(progress, f"capture {snapshot_id}: {bootstrap_server} {redact(settings)}")
    cluster_id = _cluster_id(bootstrap_server, settings, timeout_s)
    broker_id, broker_configs = _broker_configs(bootstrap_server, settings, timeout_s, progress)
    consumer = _consumer(bootstrap_server, settings, timeout_s, ISOLATION_LEVEL)
    try:
        partitions = _partitions(consumer, timeout_s)
        starts = consumer.beginning_offsets(partitions, timeout_ms=int(timeout_s * 1000))
        ends = consumer.end_offsets(partitions, timeout_ms=int(timeout_s * 1000))
        watermarks = _high_watermarks(bootstrap_server, settings, timeout_s, partitions)
        log_offsets = _log_offsets(consumer, timeout_s, progress)
        (out / CAPTURE_RECORDS_DIR).mkdir(parents=True, exist_ok=True)
        captured, committed_topics = [], set()
        for tp in partitions:
            # Not "__consumer_offsets-N": Spark and Arrow skip files whose names start with "_".
            file = out / CAPTURE_RECORDS_DIR / f"partition-{tp.partition:04d}.parquet"
            rows = _read_partition(consumer, tp, starts[tp], ends[tp], file, snapshot_id,
                                   f"kafka://{bootstrap_server}/{OFFSETS_TOPIC}-{tp.partition}",
                                   progress, timeout_s, committed_topics)
            captured.append(PartitionCapture(tp.partition, starts[tp], ends[tp], watermarks[tp],
                                             rows, f"{CAPTURE_RECORDS_DIR}/{file.name}"))
    except KafkaError as exc:
        raise CaptureError(f"reading {OFFSETS_TOPIC} from {bootstrap_server} failed: {exc!r}") from exc
    finally:
        consumer.close(autocommit=False)
    if log_offsets is not None:
        log_offsets.write(out / LOG_OFFSETS_FILE, committed_topics)
    manifest = Manifest(snapshot_id, cluster_id, bootstrap_server, OFFSETS_TOPIC, started_at,
                        utc_now(), ISOLATION_LEVEL, kafka.__version__, RAW_RECORDS_SCHEMA.names,
                        captured, None if log_offsets is None else LOG_OFFSETS_FILE,
                        broker_configs, broker_id)
    (out / "manifest.json").write_text(manifest.to_json())
    _say(progress, f"capture {snapshot_id}: {sum(p.rows for p in captured)} records from "
                   f"{len(captured)} partitions into {out}")
    return manifest


def _connect_error(bootstrap_server: str, exc: Exception, timeout_s: float) -> CaptureError:
    return CaptureError(
        f"cannot reach Kafka at {bootstrap_server} within {timeout_s:g} s ({exc}). Check the host "
        f"and port, that the listener's security protocol matches kafka.security_protocol "
        f"(OFFSETLAKE_KAFKA_SECURITY_PROTOCOL), and the SASL/SSL settings.")


def _cluster_id(bootstrap_server: str, settings: Mapping[str, Any], timeout_s: float) -> str | None:
    """The cluster id from a MetadataResponse (v2+), through the admin client."""
    try:
        admin = _admin(bootstrap_server, settings, timeout_s)
    except (KafkaError, OSError) as exc:
        raise _connect_error(bootstrap_server, exc, timeout_s) from exc
    try:
        return admin.describe_cluster().get("cluster_id")
    except KafkaError as exc:
        raise CaptureError(f"cannot describe the cluster at {bootstrap_server}: {exc!r}") from exc
    finally:
        admin.close()


def _admin(bootstrap_server: str, settings: Mapping[str, Any], timeout_s: float) -> KafkaAdminClient:
    admin_settings = {k: v for k, v in settings.items() if k in KafkaAdminClient.DEFAULT_CONFIG}
    return KafkaAdminClient(bootstrap_servers=bootstrap_server,
                            bootstrap_timeout_ms=int(timeout_s * 1000), **admin_settings)


def _broker_configs(bootstrap_server: str, settings: Mapping[str, Any], timeout_s: float,
                    progress: TextIO | None) -> tuple[int | None, dict | None]:
    """(broker id, {name: {"value", "source"}}) of the :data:`BROKER_SETTINGS` configs.

    Asked of every group coordinator: the leaders of ``__consumer_offsets``' partitions (a
    group's coordinator leads partition GroupCoordinatorService.partitionFor(groupId), Kafka
    4.3.1), since each expires its own partitions' offsets with its own
    GroupCoordinatorConfig.offsetsRetentionMs. One DescribeConfigs per broker: Kafka's
    ConfigHelper.describeConfigs (4.3.1) answers a BROKER resource only for the broker it runs on,
    and kafka-python's describe_configs sends each resource to its broker. ``source`` is Kafka's
    DescribeConfigsResponse.ConfigSource name (ConfigHelper.createBrokerConfigEntry: the first of
    DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG (server.properties),
    DEFAULT_CONFIG that sets it). Settings only: a cluster that does not answer costs them, not
    the capture (None, and a warning)."""
    try:
        admin = _admin(bootstrap_server, settings, timeout_s)
    except (KafkaError, OSError) as exc:
        _say(progress, f"{CONFIGS_WARNING}{exc!r}")
        return None, None
    try:
        (topic,) = admin.describe_topics([OFFSETS_TOPIC])
        leaders = sorted({p["leader_id"] for p in topic["partitions"] if p["leader_id"] >= 0})
        # config_filter "all": kafka-python's default ("modified") drops static and default values.
        described = admin.describe_configs(
            [ConfigResource(ConfigResourceType.BROKER, str(b), list(BROKER_SETTINGS))
             for b in leaders], config_filter="all").get("broker", {}) if leaders else {}
    except (KafkaError, OSError, ValueError) as exc:
        _say(progress, f"{CONFIGS_WARNING}{exc!r}")
        return None, None
    finally:
        admin.close()
    return chosen_broker_configs(leaders, described, progress)


def chosen_broker_configs(leaders: list[int], described: Mapping[str, Mapping[str, Any]],
                          progress: TextIO | None) -> tuple[int | None, dict | None]:
    """The answers of the lowest coordinator id that answered (``described``: kafka-python's
    describe_configs()["broker"]), warning when another coordinator answered otherwise (the
    settings view has one row). kafka-python drops a resource's error code (Kafka answers
    CLUSTER_AUTHORIZATION_FAILED without DESCRIBE_CONFIGS on the cluster): its configs are
    empty, so a coordinator with none counts as not answering."""
    answers = {b: {name: {"value": entry["value"], "source": entry["config_source"]}
                   for name, entry in described.get(str(b), {}).items() if name in BROKER_SETTINGS}
               for b in leaders}
    answered = [b for b in leaders if answers[b]]
    if not answered:
        _say(progress, f"{CONFIGS_WARNING}no coordinator ({leaders or 'none'}) described "
                       f"{', '.join(BROKER_SETTINGS)}")
        return None, None
    chosen = answered[0]
    for b in answered[1:]:
        if answers[b] != answers[chosen]:
            names = sorted(n for n in BROKER_SETTINGS if answers[b].get(n) != answers[chosen].get(n))
            _say(progress, f"capture: WARNING: coordinators {chosen} and {b} differ on "
                           f"{', '.join(names)}; recording broker {chosen}'s")
    return chosen, answers[chosen]


def _consumer(bootstrap_server: str, settings: Mapping[str, Any], timeout_s: float,
              isolation_level: str) -> KafkaConsumer:
    try:
        return KafkaConsumer(
            bootstrap_servers=bootstrap_server, group_id=None, enable_auto_commit=False,
            exclude_internal_topics=False, isolation_level=isolation_level,
            auto_offset_reset="earliest", allow_auto_create_topics=False, check_crcs=True,
            bootstrap_timeout_ms=int(timeout_s * 1000), **settings)
    except (KafkaError, OSError) as exc:
        raise _connect_error(bootstrap_server, exc, timeout_s) from exc


def _partitions(consumer: KafkaConsumer, timeout_s: float) -> list[TopicPartition]:
    deadline = time.monotonic() + timeout_s
    while (numbers := consumer.partitions_for_topic(OFFSETS_TOPIC)) is None:
        if time.monotonic() > deadline:
            raise CaptureError(f"{OFFSETS_TOPIC} does not exist on this cluster (the broker creates "
                               f"it when a group first uses it): nothing to capture")
        time.sleep(0.5)
    return [TopicPartition(OFFSETS_TOPIC, p) for p in sorted(numbers)]


def _high_watermarks(bootstrap_server: str, settings: Mapping[str, Any], timeout_s: float,
                     partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
    """End offsets as read_uncommitted sees them: beyond the cut when a transaction was open."""
    consumer = _consumer(bootstrap_server, settings, timeout_s, "read_uncommitted")
    try:
        return consumer.end_offsets(partitions, timeout_ms=int(timeout_s * 1000))
    finally:
        consumer.close(autocommit=False)


@dataclass(frozen=True)
class LogOffsets:
    """Log start and end offsets of data partitions, and when the end offsets came back."""
    starts: dict[TopicPartition, int]
    ends: dict[TopicPartition, int]
    read_at: int    # ms since the epoch

    def write(self, file: Path, topics: set[str]) -> None:
        """The rows of ``topics`` (the ones offset commits name) as :data:`LOG_OFFSETS_FILE`."""
        kept = sorted((tp for tp in self.ends if tp.topic in topics),
                      key=lambda tp: (tp.topic, tp.partition))
        columns = {"topic": [tp.topic for tp in kept], "partition": [tp.partition for tp in kept],
                   "log_start_offset": [self.starts[tp] for tp in kept],
                   "log_end_offset": [self.ends[tp] for tp in kept],
                   "read_at": [self.read_at] * len(kept)}
        pq.write_table(pa.Table.from_pydict(columns, schema=LOG_OFFSETS_SCHEMA), file)


def _log_offsets(consumer: KafkaConsumer, timeout_s: float,
                 progress: TextIO | None) -> LogOffsets | None:
    """Start and end offsets of every partition of every (non-internal) topic, just after the
    cut, so a commit captured is never newer than the end it is compared with (Kafka 4.3.1's
    ConsumerGroupCommand.ConsumerGroupService.describePartitions also reads committed offsets
    first, then log end offsets). The consumer is ``read_committed``: Kafka's
    Partition.fetchOffsetForTimestamp (4.3.1) answers LATEST with the last stable offset then,
    EARLIEST with the log start offset. The offsets serve lag only, so a cluster that does not
    answer costs the lag, not the capture (None, and a warning)."""
    timeout_ms = int(timeout_s * 1000)
    try:
        partitions = [TopicPartition(topic, p) for topic in sorted(consumer.topics())
                      for p in sorted(consumer.partitions_for_topic(topic) or ())]
        starts = consumer.beginning_offsets(partitions, timeout_ms=timeout_ms)
        ends = consumer.end_offsets(partitions, timeout_ms=timeout_ms)
    except KafkaError as exc:
        _say(progress, f"capture: WARNING: no lag for this capture, log offsets not read: {exc!r}")
        return None
    return LogOffsets(starts, ends, time.time_ns() // 1_000_000)


def _offset_commit_topic(key: bytes | None) -> str | None:
    """The topic an offset commit key (types 0 and 1) names; None for any other record, or for a
    key that does not decode (the pipeline quarantines it)."""
    if key is None:
        return None
    try:
        _, record_type, fields, _ = decode_key(key)
    except DecodeError:
        return None
    return fields["topic"] if record_type in OFFSET_COMMIT_TYPES else None


class _RowBuffer:
    """Columns of up to ROW_GROUP_ROWS rows, flushed as one row group of the partition's file."""

    def __init__(self, writer: pq.ParquetWriter, constants: Mapping[str, Any],
                 committed_topics: set[str]):
        self.writer = writer
        self.constants = constants
        self.committed_topics = committed_topics   # topics named by offset commits, collected
        self.columns: dict[str, list] = {n: [] for n in ("partition", "offset", "timestamp",
                                                         "timestamp_type", "key", "value")}
        self.rows = 0

    def append(self, record) -> None:
        self.columns["partition"].append(record.partition)
        self.columns["offset"].append(record.offset)
        self.columns["timestamp"].append(record.timestamp)
        self.columns["timestamp_type"].append(
            TIMESTAMP_TYPES.get(record.timestamp_type, "NoTimestampType"))
        self.columns["key"].append(record.key)
        self.columns["value"].append(record.value)
        if (topic := _offset_commit_topic(record.key)) is not None:
            self.committed_topics.add(topic)
        if len(self.columns["offset"]) >= ROW_GROUP_ROWS:
            self.flush()

    def flush(self) -> None:
        count = len(self.columns["offset"])
        if count == 0:
            return
        arrays = []
        for schema_field in RAW_RECORDS_SCHEMA:
            if schema_field.name in self.columns:
                arrays.append(pa.array(self.columns[schema_field.name], schema_field.type))
            else:
                arrays.append(pa.array([self.constants.get(schema_field.name)] * count,
                                       schema_field.type))
        self.writer.write_table(pa.Table.from_arrays(arrays, schema=RAW_RECORDS_SCHEMA))
        self.rows += count
        for column in self.columns.values():
            column.clear()


def _read_partition(consumer: KafkaConsumer, tp: TopicPartition, start: int, end: int, file: Path,
                    snapshot_id: str, source_file: str, progress: TextIO | None,
                    timeout_s: float, committed_topics: set[str]) -> int:
    """Read ``tp`` from ``start`` up to (not including) ``end`` into ``file``; return the row count.
    Adds the topics its offset commits name to ``committed_topics``."""
    # What the consumer cannot observe is null; what it guarantees is constant (module docstring).
    constants = {"snapshot_id": snapshot_id, "source_file": source_file, "is_control": False,
                 "crc_valid": True}
    began = last_report = last_progress = time.monotonic()
    with pq.ParquetWriter(file, RAW_RECORDS_SCHEMA) as writer:
        buffer = _RowBuffer(writer, constants, committed_topics)
        consumer.assign([tp])
        consumer.seek(tp, start)
        position = start
        while position < end:
            for record in consumer.poll(timeout_ms=500, max_records=10_000).get(tp, []):
                if record.offset >= end:
                    break
                buffer.append(record)
            new_position = consumer.position(tp)
            now = time.monotonic()
            if new_position > position:
                position, last_progress = new_position, now
            elif now - last_progress > timeout_s:
                raise CaptureError(f"{tp.topic}-{tp.partition}: no progress for {timeout_s:g} s at "
                                   f"offset {position} (target {end})")
            if now - last_report >= PROGRESS_INTERVAL_S:
                _report(progress, tp, buffer.rows + len(buffer.columns["offset"]), start, end,
                        position, now - began)
                last_report = now
        buffer.flush()
    _report(progress, tp, buffer.rows, start, end, min(position, end), time.monotonic() - began)
    return buffer.rows


def _report(progress: TextIO | None, tp: TopicPartition, rows: int, start: int, end: int,
            position: int, elapsed_s: float) -> None:
    rate = rows / elapsed_s if elapsed_s > 0 else 0.0
    _say(progress, f"  {tp.topic}-{tp.partition}: {rows} records, offset {position - start}/"
                   f"{end - start} ({rate:,.0f} records/s)")


def _say(progress: TextIO | None, line: str) -> None:
    if progress is not None:
        print(line, file=progress, flush=True)

"""The offset expiry forecast (sql/offset_expiry.sql) against a real Kafka broker's coordinator.

A broker with ``offsets.retention.minutes=1`` and ``offsets.retention.check.interval.ms=2000``
gets three groups' offsets:

* ``ex-classic``: a kafka-python member of a classic group commits, waits a few seconds and
  leaves: the group is Empty and its offsets expire a minute after it became Empty
  (currentStateTimestamp), not after the commit;
* ``ex-simple``: a commit without joining (the Admin client's, generation -1): a simple group,
  expiring a minute after the commit;
* ``ex-retained``: the same, sent as OffsetCommit v4 with ``retention_time_ms`` 31 s: a value
  version 1 record with an explicit expireTimestamp, which expires before the minute is up (31,
  not 30: its expiry then falls in another phase of the 2 s check than the others').

The ``__consumer_offsets`` log is snapshotted, the pipeline (``run_pipeline``) runs on it and
``offset_expiry`` forecasts each offset's ``expires_at`` and each group's ``group_expires_at``.
Meanwhile a thread polls the broker (OffsetFetch for the groups, ListGroups) from the snapshot on;
each offset and group must vanish no earlier than its forecast (less a few ms of clock) and no
later than the forecast plus one check interval and a little slack (a cleanup run's own time,
the poll's round trip).
"""

from __future__ import annotations

import io
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.errors import NoError
from kafka.structs import OffsetAndMetadata

from .conftest import running_broker
from .kafka_broker import snapshot_log_dirs

pytestmark = pytest.mark.integration

RETENTION_MINUTES = 1
CHECK_INTERVAL_MS = 2000
EXPLICIT_RETENTION_MS = 31_000
TOPIC = "ex-orders"
CLASSIC, SIMPLE, RETAINED = "ex-classic", "ex-simple", "ex-retained"
GROUPS = (CLASSIC, SIMPLE, RETAINED)
EMPTY_AFTER_COMMIT_S = 4      # how long the classic member stays after its commit
CLOCK_MS = 5                  # broker and test read the same machine's clock, in ms
SLACK_MS = 1500               # a cleanup run's own time + the poll's round trip and gap
POLL_S = 0.2
WATCH_LIMIT_S = 150


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@pytest.fixture(scope="module")
def expiry_broker(tmp_path_factory):
    yield from running_broker(tmp_path_factory, "kafka-expiry", overrides={
        "offsets.retention.minutes": str(RETENTION_MINUTES),
        "offsets.retention.check.interval.ms": str(CHECK_INTERVAL_MS)})


def commit_with_retention(admin: KafkaAdminClient, group_id: str, offsets: dict,
                          retention_ms: int) -> None:
    """A simple commit (generation -1, no member) as OffsetCommit v2-v4, the last versions with
    ``retention_time_ms``: OffsetMetadataManager.commitOffset turns it into an expireTimestamp.
    kafka-python's Admin always sends -1, so its request is built here (private helpers)."""
    from kafka.protocol.consumer import OffsetCommitRequest

    request = admin._alter_group_offsets_request(group_id, offsets)
    request = OffsetCommitRequest(
        group_id=request.group_id, generation_id_or_member_epoch=-1, member_id="",
        group_instance_id=None, retention_time_ms=retention_ms, topics=request.topics,
        min_version=2, max_version=4)

    async def send():
        node_id = await admin._find_coordinator_id(group_id)
        return await admin._manager.send(request, node_id=node_id)

    response = admin._manager.run(send)
    assert admin._alter_group_offsets_process_response(response) == {
        tp: NoError for tp in offsets}


def make_groups(bootstrap: str) -> dict[tuple, int]:
    """The three groups' commits; returns the (group, topic, partition) keys with their offset."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=CLASSIC,
                             enable_auto_commit=False, session_timeout_ms=10_000,
                             heartbeat_interval_ms=1000)
    try:
        admin.create_topics({TOPIC: {"num_partitions": 2, "replication_factor": 1}},
                            wait_for_metadata=True)
        consumer.subscribe([TOPIC])
        deadline = time.monotonic() + 30
        while len(consumer.assignment()) < 2:
            assert time.monotonic() < deadline, f"{CLASSIC} got no assignment in 30 s"
            consumer.poll(timeout_ms=200)
        consumer.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(3 + p, "", -1)
                         for p in (0, 1)})
        simple = {TopicPartition(TOPIC, 0): OffsetAndMetadata(7, "", -1)}
        assert admin.alter_group_offsets(SIMPLE, simple) == {tp: NoError for tp in simple}
        commit_with_retention(admin, RETAINED, {TopicPartition(TOPIC, 1): OffsetAndMetadata(
            9, "", -1)}, EXPLICIT_RETENTION_MS)
        time.sleep(EMPTY_AFTER_COMMIT_S)
        consumer.close(autocommit=False)
        deadline = time.monotonic() + 30
        while {g["group_id"]: g["group_state"] for g in admin.list_groups()}.get(CLASSIC) != "Empty":
            assert time.monotonic() < deadline, f"{CLASSIC} did not become Empty in 30 s"
            time.sleep(0.1)
    finally:
        consumer.close(autocommit=False)
        admin.close()
    return {(CLASSIC, TOPIC, 0): 3, (CLASSIC, TOPIC, 1): 4, (SIMPLE, TOPIC, 0): 7,
            (RETAINED, TOPIC, 1): 9}


@dataclass
class Watch:
    """Per offset key (group, topic, partition) and group id: the (sent, answered) times in ms of
    the last poll that showed it and of the first that did not."""
    seen: dict = field(default_factory=dict)
    gone: dict = field(default_factory=dict)

    def note(self, keys, present: set, sent: int, answered: int) -> None:
        for key in keys:
            if key in self.gone:
                continue
            if key in present:
                self.seen[key] = (sent, answered)
            else:
                self.gone[key] = (sent, answered)


def watch_broker(bootstrap: str, offset_keys: list[tuple], stop: threading.Event) -> Watch:
    """Poll OffsetFetch and ListGroups until every offset and group is gone (or the limit, or
    ``stop``)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    watch = Watch()
    limit = time.monotonic() + WATCH_LIMIT_S
    try:
        while (len(watch.gone) < len(offset_keys) + len(GROUPS) and time.monotonic() < limit
               and not stop.is_set()):
            sent = now_ms()
            fetched = admin.list_group_offsets(list(GROUPS))
            answered = now_ms()
            watch.note(offset_keys, {(g, tp.topic, tp.partition)
                                     for g, offsets in fetched.items() for tp in offsets},
                       sent, answered)
            sent = now_ms()
            listed = {g["group_id"] for g in admin.list_groups()}
            watch.note(GROUPS, listed, sent, now_ms())
            time.sleep(POLL_S)
    finally:
        admin.close()
    return watch


def forecast(spark, lake, snapshot_id: str) -> dict[tuple, dict]:
    from jobs.lake.views import register_lake

    register_lake(spark, lake, snapshot_id, settings={
        "offsets_retention_minutes": RETENTION_MINUTES,
        "offsets_retention_check_interval_ms": CHECK_INTERVAL_MS})
    rows = spark.sql(
        "select group_id, topic, partition, committed_offset, base_timestamp_kind, blocked_by, "
        "unix_millis(commit_at) as commit_ms, unix_millis(base_at) as base_ms, "
        "unix_millis(expires_at) as expires_ms, unix_millis(group_expires_at) as group_expires_ms "
        "from offset_expiry").collect()
    return {(r.group_id, r.topic, r.partition): r.asDict() for r in rows}


def assert_within(what: str, forecast_ms: int, seen, gone) -> str:
    """``what`` vanished in (last seen sent, first gone answered]: no earlier than the forecast,
    no later than the forecast + one check interval + slack. Returns the timing as text."""
    assert seen is not None, f"{what} was never seen on the broker"
    assert gone is not None, f"{what} did not vanish within {WATCH_LIMIT_S} s"
    assert gone[1] >= forecast_ms - CLOCK_MS, \
        f"{what} vanished {forecast_ms - gone[1]} ms before its forecast"
    assert gone[1] <= forecast_ms + CHECK_INTERVAL_MS + SLACK_MS, \
        f"{what} vanished {gone[1] - forecast_ms} ms after its forecast"
    return f"{what}: gone in ({seen[0] - forecast_ms:+d}, {gone[1] - forecast_ms:+d}] ms of forecast"


def test_offsets_and_groups_vanish_when_the_forecast_says(expiry_broker, request,
                                                          tmp_path_factory):
    began = time.monotonic()
    committed = make_groups(expiry_broker.bootstrap_server)
    root = tmp_path_factory.mktemp("expiry-snapshot")
    snapshot_log_dirs(expiry_broker, root)
    snapshot_at = time.monotonic()
    stop = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        watching = pool.submit(watch_broker, expiry_broker.bootstrap_server, list(committed), stop)
        try:
            from jobs.stages.pipeline import run_pipeline

            spark = request.getfixturevalue("spark")
            lake = tmp_path_factory.mktemp("expiry-lake")
            report = run_pipeline(spark, lake, [str(root)], snapshot_id="expiry",
                                  progress=io.StringIO())
            assert report.reconciled, report.summary()
            rows = forecast(spark, lake, "expiry")
            versions = {(r.group_id, r.value_version) for r in spark.sql(
                "select group_id, value_version from offset_commits").collect()}
        except BaseException:
            stop.set()   # no need to watch the broker any longer
            raise
        piped_at = time.monotonic()
        watch = watching.result()
    done_at = time.monotonic()

    assert {key: row["committed_offset"] for key, row in rows.items()} == committed
    assert {key: (row["base_timestamp_kind"], row["blocked_by"]) for key, row in rows.items()} == {
        (CLASSIC, TOPIC, 0): ("current_state_timestamp", None),
        (CLASSIC, TOPIC, 1): ("current_state_timestamp", None),
        (SIMPLE, TOPIC, 0): ("commit_timestamp", None),
        (RETAINED, TOPIC, 1): ("expire_timestamp", None)}
    classic = rows[(CLASSIC, TOPIC, 0)]
    # The group became Empty after the member's stay: the base is that moment, not the commit.
    assert classic["base_ms"] - classic["commit_ms"] >= (EMPTY_AFTER_COMMIT_S - 1) * 1000
    retained = rows[(RETAINED, TOPIC, 1)]
    # commitOffset: expireTimestamp = the commit's time + retention_time_ms, in a version 1 value
    assert retained["expires_ms"] - retained["commit_ms"] == EXPLICIT_RETENTION_MS
    assert (RETAINED, 1) in versions and (SIMPLE, 1) not in versions

    timings = [assert_within(f"offset {key}", row["expires_ms"], watch.seen.get(key),
                             watch.gone.get(key)) for key, row in sorted(rows.items())]
    for group_id in GROUPS:
        group_rows = [row for key, row in rows.items() if key[0] == group_id]
        expected = max(row["expires_ms"] for row in group_rows)
        assert {row["group_expires_ms"] for row in group_rows} == {expected}
        timings.append(assert_within(f"group {group_id}", expected, watch.seen.get(group_id),
                                     watch.gone.get(group_id)))
    print("\n".join(timings))
    print(f"workload + snapshot {snapshot_at - began:.1f} s, pipeline and forecast "
          f"{piped_at - snapshot_at:.1f} s, until the last vanished {done_at - snapshot_at:.1f} s")

"""The offset expiry forecast (sql/offset_expiry.sql) against a real Kafka broker's coordinator.

A broker with ``offsets.retention.minutes=1`` and ``offsets.retention.check.interval.ms=2000``
gets four groups' offsets:

* ``ex-classic``: a kafka-python member of a classic group commits, waits a few seconds and
  leaves: the group is Empty and its offsets expire a minute after it became Empty
  (currentStateTimestamp), not after the commit;
* ``ex-simple``: a commit without joining (the Admin client's, generation -1): a simple group,
  expiring a minute after the commit;
* ``ex-retained``: the same, sent as OffsetCommit v4 with ``retention_time_ms`` 31 s: a value
  version 1 record with an explicit expireTimestamp, which expires before the minute is up (31,
  not 30: its expiry then falls in another phase of the 2 s check than the others');
* ``ex-churn`` (first, before the others): a KIP-848 ``consumer``-protocol group that a
  confluent-kafka consumer joins, commits in and leaves three times: six group epoch bumps in
  one hour, then Empty with offsets, expiring a minute after its last commit.

The ``__consumer_offsets`` log is snapshotted, the pipeline (``run_pipeline``) runs on it and
``offset_expiry`` forecasts each offset's ``expires_at`` and each group's ``group_expires_at``.
Meanwhile a thread polls the broker (OffsetFetch for the groups, ListGroups) from the snapshot on;
each offset and group must vanish no earlier than its forecast (less a few ms of clock) and no
later than the forecast plus one check interval and a little slack (a cleanup run's own time,
the poll's round trip).

Meanwhile too, the run audits the snapshot as ``offsetlake run --audit`` does
(:func:`jobs.stages.audit.audit_lake` on the tables the run holds: the fencing audit, then
sql/rules/*.sql, written to ``findings``), its thresholds set from the environment
(``OFFSETLAKE_INSIGHTS__<KEY>``, as an operator would); the forecast above is read from the
views it registered. Then the rules run again over those views with other thresholds from the
environment (the ``settings`` view rebuilt):

* findings: the broker's retention, a 3 minute warning window, recent activity 3 minutes (the
  whole scenario), ghost idle time 3.6 s (less than the 4 s stay after the simple commits), the
  storm threshold at the churn's six bumps. EX-01 for each group (its first expiry checked
  against when the broker dropped that offset), GH-01 for ``ex-simple``, ``ex-retained``
  (notices: commits only) and ``ex-churn``, not for ``ex-classic``, whose departure is the
  snapshot's newest record (a near miss), each checked against what the broker describes (no
  members, the offsets it returns); CH-01 for ``ex-churn``, its bumps checked against the group
  epoch Kafka's ConsumerGroupCommand describes;
* near misses: recent activity 2 s (only ``ex-classic``, which left at the snapshot time, still
  counts), the default ghost idle time (24 h) and the storm threshold one above the bumps: EX-01
  for ``ex-classic`` alone, no GH-01, no CH-01.
"""

from __future__ import annotations

import io
import json
import re
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest
from confluent_kafka import Consumer, ConsumerGroupState, TopicCollection
from confluent_kafka import TopicPartition as CkTopicPartition
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.errors import NoError
from kafka.structs import OffsetAndMetadata

from .conftest import running_broker
from .kafka_broker import snapshot_log_dirs
from .workloads import wait_until

pytestmark = pytest.mark.integration

RETENTION_MINUTES = 1
CHECK_INTERVAL_MS = 2000
EXPLICIT_RETENTION_MS = 31_000
TOPIC = "ex-orders"
CLASSIC, SIMPLE, RETAINED, CHURN = "ex-classic", "ex-simple", "ex-retained", "ex-churn"
GROUPS = (CLASSIC, SIMPLE, RETAINED, CHURN)
CHURN_CYCLES = 3              # a consumer of ex-churn joins, commits and leaves this many times
# Kafka 4.3.1: a new consumer group starts at epoch 1 (the ModernGroup constructor sets
# groupEpoch to 1, nothing is written); a new member's subscription bumps it
# (GroupMetadataManager.updateSubscriptionMetadata: groupEpoch + 1, newConsumerGroupEpochRecord),
# a leaving member bumps it again (consumerGroupFenceMembers: groupEpoch() + 1).
CHURN_BUMPS = 2 * CHURN_CYCLES
NEW_GROUP_EPOCH = 1
HOUR_MARGIN_S = 40            # the churn starts at least this long before a UTC hour ends
EMPTY_AFTER_COMMIT_S = 4      # how long the classic member stays after its commit
CLOCK_MS = 5                  # broker and test read the same machine's clock, in ms
SLACK_MS = 1500               # a cleanup run's own time + the poll's round trip and gap
POLL_S = 0.2
WATCH_LIMIT_S = 150


INSIGHT_RULES = ("EX-01", "GH-01", "TP-01", "CH-01")
INSIGHTS_ENV = "OFFSETLAKE_INSIGHTS__"
GHOST_IDLE_HOURS = 0.001      # 3.6 s: below the stay after the simple commits (4 s)
NEAR_MISS_RECENT_S = 2        # ex-classic left at the snapshot's newest record, the rest >= 4 s before
# The audits' thresholds (conf keys of the ``insights`` section; None: the conf/ default).
FINDING_SETTINGS = {
    "offsets_retention_minutes": RETENTION_MINUTES,
    "offsets_retention_check_interval_ms": CHECK_INTERVAL_MS,
    "expiry_warning_hours": 0.05,            # 3 min: every offset's 1 min retention is in it
    "recent_activity_hours": 0.05,           # the whole scenario is recent
    "ghost_idle_hours": GHOST_IDLE_HOURS,
    "storm_epoch_bumps_per_hour": CHURN_BUMPS}
NEAR_MISS_SETTINGS = {
    **FINDING_SETTINGS,
    "recent_activity_hours": NEAR_MISS_RECENT_S / 3600,
    "ghost_idle_hours": None,                # conf/offsetlake.yaml: 24 h
    "storm_epoch_bumps_per_hour": CHURN_BUMPS + 1}
CONSUMER_GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
TOOL_CELL = re.compile(r"\S+(?:\s+\(\S+\))?")   # "COORDINATOR (ID)" is one column


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass
class Workload:
    """What make_groups did: the offsets committed, the wall-clock moments (ms) the findings'
    figures are checked against, and what the broker said about the groups at snapshot time."""
    committed: dict[tuple, int]
    moments: dict[str, float]
    topic_id: str = ""
    described: dict[str, dict] = field(default_factory=dict)   # confluent describe + OffsetFetch
    churn_tool: dict[str, str] = field(default_factory=dict)   # ConsumerGroupCommand --state
    churn_hour: str = ""


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


def kafka_uuid_text(kafka_uuid) -> str:
    """A confluent-kafka Uuid as the tables write topic ids."""
    msb = kafka_uuid.get_most_significant_bits() & (2 ** 64 - 1)
    lsb = kafka_uuid.get_least_significant_bits() & (2 ** 64 - 1)
    return str(uuid.UUID(int=(msb << 64) | lsb))


def is_empty(admin: AdminClient, group_id: str) -> bool:
    described = admin.describe_consumer_groups([group_id], request_timeout=15)[group_id].result()
    return described.state == ConsumerGroupState.EMPTY and not described.members


def churn(bootstrap: str, admin: AdminClient, moments: dict[str, float]) -> None:
    """ex-churn: CHURN_CYCLES KIP-848 members (ConsumerGroupHeartbeat) one after the other, each
    joining, taking both partitions, committing and leaving (close: a heartbeat with epoch -1)
    before the next comes. Every member commits, so the group always has offsets and the 2 s
    cleanup never deletes it between two members (GroupCoordinatorShard.cleanupGroupMetadata ->
    GroupMetadataManager.maybeDeleteGroup deletes an empty group once its offsets are gone)."""
    for cycle in range(1, CHURN_CYCLES + 1):
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": CHURN,
                             "group.protocol": "consumer", "enable.auto.commit": False})
        try:
            consumer.subscribe([TOPIC])

            def assigned(consumer=consumer) -> bool:
                consumer.poll(0.1)
                return len(consumer.assignment()) == 2

            wait_until(f"{CHURN} member {cycle} assigned", assigned)
            consumer.commit(offsets=[CkTopicPartition(TOPIC, p, 10 + cycle) for p in (0, 1)],
                            asynchronous=False)
            moments["churn_left_sent"] = now_ms()
        finally:
            consumer.close()
        wait_until(f"{CHURN} empty after member {cycle}", lambda: is_empty(admin, CHURN))
    moments["churn_left_answered"] = now_ms()


def churn_state(broker) -> dict[str, str]:
    """ex-churn as Kafka's own tool describes it (``--state --verbose``: ConsumerGroupCommand
    .collectGroupsState reads ConsumerGroupDescription.groupEpoch, the ConsumerGroupDescribe
    answer): the row keyed by header, read from the right (an empty ASSIGNMENT-STRATEGY cell
    would shift the left)."""
    out = broker.run_tool(CONSUMER_GROUP_COMMAND, "--bootstrap-server", broker.bootstrap_server,
                          "--describe", "--group", CHURN, "--state", "--verbose").stdout
    header = None
    for line in out.splitlines():
        cells = TOOL_CELL.findall(line)
        if cells and cells[0] == "GROUP":
            header = cells
        elif header and cells and cells[0] == CHURN:
            return dict(zip(reversed(header), reversed(cells)))
    raise AssertionError(f"no {CHURN} row in:\n{out}")


def describe_groups(bootstrap: str, admin: AdminClient) -> dict[str, dict]:
    """Each group's type, state, simple-ness and members (DescribeGroups / ConsumerGroupDescribe,
    confluent-kafka) and committed partitions (OffsetFetch, kafka-python)."""
    described = {g: f.result() for g, f in
                 admin.describe_consumer_groups(list(GROUPS), request_timeout=15).items()}
    fetcher = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        fetched = fetcher.list_group_offsets(list(GROUPS))
    finally:
        fetcher.close()
    return {g: {"group_type": d.type.name.lower(), "group_state": d.state.name.title(),
                "is_simple": d.is_simple_consumer_group, "member_count": len(d.members),
                "committed_partitions": len(fetched.get(g, {}))}
            for g, d in described.items()}


def make_groups(broker) -> Workload:
    """The groups' commits (ex-churn's first); the (group, topic, partition) keys with their
    offset, the moments around the commits and departures, and the broker's view."""
    bootstrap = broker.bootstrap_server
    moments: dict[str, float] = {}
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    cadmin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        admin.create_topics({TOPIC: {"num_partitions": 2, "replication_factor": 1}},
                            wait_for_metadata=True)
        topic_id = kafka_uuid_text(cadmin.describe_topics(
            TopicCollection([TOPIC]), request_timeout=15)[TOPIC].result().topic_id)
        # group_churn counts bumps per UTC hour: the churn must not straddle an hour's end.
        to_hour_end = 3600 - time.time() % 3600
        if to_hour_end < HOUR_MARGIN_S:
            print(f"waiting {to_hour_end:.0f} s for the next hour before the churn")
            time.sleep(to_hour_end + 0.5)
        churn_began = time.time()
        churn(bootstrap, cadmin, moments)
        moments["churn_s"] = time.time() - churn_began
        assert moments["churn_s"] < HOUR_MARGIN_S, "the churn took too long"
        churn_hour = datetime.fromtimestamp(churn_began, UTC).strftime("%Y-%m-%dT%H:00:00Z")
        with ThreadPoolExecutor(1) as pool:
            tool = pool.submit(churn_state, broker)   # a JVM: meanwhile the other groups
            classic_offsets(bootstrap, admin, moments)
            described = describe_groups(bootstrap, cadmin)
            churn_tool = tool.result()
    finally:
        admin.close()
    committed = {(CLASSIC, TOPIC, 0): 3, (CLASSIC, TOPIC, 1): 4, (SIMPLE, TOPIC, 0): 7,
                 (RETAINED, TOPIC, 1): 9}
    committed.update({(CHURN, TOPIC, p): 10 + CHURN_CYCLES for p in (0, 1)})
    return Workload(committed, moments, topic_id, described, churn_tool, churn_hour)


def classic_offsets(bootstrap: str, admin: KafkaAdminClient, moments: dict[str, float]) -> None:
    """ex-classic joins and commits, ex-simple and ex-retained commit, ex-classic stays
    EMPTY_AFTER_COMMIT_S and leaves."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=CLASSIC,
                             enable_auto_commit=False, session_timeout_ms=10_000,
                             heartbeat_interval_ms=1000)
    try:
        consumer.subscribe([TOPIC])
        deadline = time.monotonic() + 30
        while len(consumer.assignment()) < 2:
            assert time.monotonic() < deadline, f"{CLASSIC} got no assignment in 30 s"
            consumer.poll(timeout_ms=200)
        consumer.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(3 + p, "", -1)
                         for p in (0, 1)})
        simple = {TopicPartition(TOPIC, 0): OffsetAndMetadata(7, "", -1)}
        moments["simple_sent"] = now_ms()
        assert admin.alter_group_offsets(SIMPLE, simple) == {tp: NoError for tp in simple}
        moments["simple_answered"] = moments["retained_sent"] = now_ms()
        commit_with_retention(admin, RETAINED, {TopicPartition(TOPIC, 1): OffsetAndMetadata(
            9, "", -1)}, EXPLICIT_RETENTION_MS)
        moments["retained_answered"] = now_ms()
        time.sleep(EMPTY_AFTER_COMMIT_S)
        moments["classic_left_sent"] = now_ms()
        consumer.close(autocommit=False)
        deadline = time.monotonic() + 30
        while {g["group_id"]: g["group_state"] for g in admin.list_groups()}.get(CLASSIC) != "Empty":
            assert time.monotonic() < deadline, f"{CLASSIC} did not become Empty in 30 s"
            time.sleep(0.1)
        moments["classic_left_answered"] = now_ms()
    finally:
        consumer.close(autocommit=False)


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


def forecast(spark) -> dict[tuple, dict]:
    """offset_expiry as registered for the snapshot (by the audit, with the broker's retention
    and check interval in ``settings``)."""
    rows = spark.sql(
        "select group_id, topic, partition, committed_offset, base_timestamp_kind, blocked_by, "
        "log_partition, log_offset, "
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


def set_insights(monkeypatch, settings: dict) -> None:
    """``settings`` (conf keys of the ``insights`` section) as OFFSETLAKE_INSIGHTS__<KEY>, read
    by jobs.runtime.config.load_section; None: the conf/ value."""
    for key, value in settings.items():
        if value is None:
            monkeypatch.delenv(INSIGHTS_ENV + key.upper(), raising=False)
        else:
            monkeypatch.setenv(INSIGHTS_ENV + key.upper(), str(value))


def audit(spark, lake, monkeypatch, frames: dict) -> list[dict]:
    """The audit of the snapshot (:func:`jobs.stages.audit.audit_lake`: the fencing audit and
    sql/rules/*.sql, written to ``findings``) with FINDING_SETTINGS in the environment, on
    ``frames``, the tables as the run holds them. It leaves the snapshot's views registered
    with those settings."""
    from jobs.stages.audit import audit_lake

    set_insights(monkeypatch, FINDING_SETTINGS)
    return audit_lake(spark, lake, "expiry", frames=frames).findings


def near_misses(spark, monkeypatch) -> list[dict]:
    """The insight rules again over the views the audit registered, with NEAR_MISS_SETTINGS in
    the environment: only the one-row ``settings`` view is replaced (settings_frame, which the
    audit's register_lake calls, reading the environment); the sql/ views read it by name when
    queried, so each rule sees the new thresholds (registering every table and view again would
    cost the test some 15 s more)."""
    from functools import reduce

    from jobs.audits.insights import rule_files
    from jobs.lake.views import SETTINGS_VIEW, settings_frame

    set_insights(monkeypatch, NEAR_MISS_SETTINGS)
    settings_frame(spark).createOrReplaceTempView(SETTINGS_VIEW)
    assert spark.table(SETTINGS_VIEW).first()["storm_epoch_bumps_per_hour"] == CHURN_BUMPS + 1
    found = reduce(lambda a, b: a.unionByName(b),
                   [spark.sql(path.read_text()) for rule, path in rule_files().items()
                    if rule != "TP-01"])   # no near miss of TP-01 here: it found nothing
    return [r.asDict() for r in found.drop("snapshot_id").collect()]


def by_rule(findings: list[dict]) -> dict[str, dict[str, dict]]:
    """The insight findings as {rule: {group: finding}} (one finding per group in this scenario),
    ``details`` parsed."""
    out: dict[str, dict[str, dict]] = {rule: {} for rule in INSIGHT_RULES}
    for f in findings:
        if f["rule_id"] in out:
            assert f["group_id"] not in out[f["rule_id"]], f
            out[f["rule_id"]][f["group_id"]] = {**f, "details": json.loads(f["details"])}
    return out


def json_ms(text: str) -> int:
    """A timestamp of ``to_json`` (ISO 8601, UTC) as epoch ms."""
    return round(datetime.fromisoformat(text).timestamp() * 1000)


def test_offsets_and_groups_vanish_when_the_forecast_says(expiry_broker, request, monkeypatch,
                                                          tmp_path_factory):
    began = time.monotonic()
    workload = make_groups(expiry_broker)
    committed, moments = workload.committed, workload.moments
    root = tmp_path_factory.mktemp("expiry-snapshot")
    snapshot_log_dirs(expiry_broker, root)
    moments["snapshot_copied"] = now_ms()
    snapshot_at = time.monotonic()
    stop = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        watching = pool.submit(watch_broker, expiry_broker.bootstrap_server, list(committed), stop)
        try:
            from jobs.stages.pipeline import run_pipeline

            spark = request.getfixturevalue("spark")
            lake = tmp_path_factory.mktemp("expiry-lake")
            got: dict = {}

            def audit_and_read(snapshot_id: str, frames: dict) -> None:
                """As ``offsetlake run --audit`` does, on the tables the run holds (the lake's
                are not read again); the views stay registered for the queries below."""
                got["piped_at"] = time.monotonic()
                got["found"] = audit(spark, lake, monkeypatch, frames)
                got["audited_at"] = time.monotonic()
                got["rows"] = forecast(spark)
                got["versions"] = {(r.group_id, r.value_version) for r in spark.sql(
                    "select group_id, value_version from offset_commits").collect()}
                # The epochs the CH-01 finding's evidence points at.
                evidence = (by_rule(got["found"])["CH-01"].get(CHURN, {})
                            .get("evidence_log_offsets") or [])
                got["churn_epochs"] = sorted(r.epoch for r in spark.sql(
                    f"select epoch from epochs where group_id = '{CHURN}' and epoch_kind = "
                    f"'group' and log_offset in ({', '.join(map(str, evidence)) or 'null'})"
                ).collect())
                got["missed"] = near_misses(spark, monkeypatch)

            report = run_pipeline(spark, lake, [str(root)], snapshot_id="expiry",
                                  progress=io.StringIO(), then=audit_and_read)
            assert report.reconciled, report.summary()
            piped_at, found, rows, versions, churn_epochs, missed = (
                got["piped_at"], got["found"], got["rows"], got["versions"],
                got["churn_epochs"], got["missed"])
            found_s = got["audited_at"] - piped_at
            missed_s = time.monotonic() - got["audited_at"]
        except BaseException:
            stop.set()   # no need to watch the broker any longer
            raise
        audited_at = time.monotonic()
        watch = watching.result()
    done_at = time.monotonic()
    print(f"\nworkload + snapshot {snapshot_at - began:.1f} s (churn "
          f"{workload.moments['churn_s']:.1f} s), Spark and pipeline "
          f"{piped_at - snapshot_at:.1f} s, audit {found_s:.1f} s, forecast and near misses "
          f"{missed_s:.1f} s (done "
          f"{audited_at - snapshot_at:.1f} s after the snapshot), until the last vanished "
          f"{done_at - snapshot_at:.1f} s")

    assert {key: row["committed_offset"] for key, row in rows.items()} == committed
    assert {key: (row["base_timestamp_kind"], row["blocked_by"]) for key, row in rows.items()} == {
        (CLASSIC, TOPIC, 0): ("current_state_timestamp", None),
        (CLASSIC, TOPIC, 1): ("current_state_timestamp", None),
        (SIMPLE, TOPIC, 0): ("commit_timestamp", None),
        (RETAINED, TOPIC, 1): ("expire_timestamp", None),
        (CHURN, TOPIC, 0): ("commit_timestamp", None),
        (CHURN, TOPIC, 1): ("commit_timestamp", None)}
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

    found_by, missed_by = by_rule(found), by_rule(missed)
    timings += check_ex01(found_by["EX-01"], rows, workload, watch)
    check_gh01(found_by["GH-01"], workload)
    check_ch01(found_by["CH-01"], churn_epochs, workload)
    assert found_by["TP-01"] == {}
    # The near misses: only ex-classic left within 2 s of the snapshot; nothing idles 24 h; six
    # bumps are one short of seven.
    assert {rule: sorted(groups) for rule, groups in missed_by.items()} == {
        "EX-01": [CLASSIC], "GH-01": [], "TP-01": [], "CH-01": []}
    assert missed_by["EX-01"][CLASSIC] == found_by["EX-01"][CLASSIC]
    others = sorted((f["rule_id"], f["group_id"], f["severity"]) for f in found
                    if f["rule_id"] not in INSIGHT_RULES)
    print("\n".join(timings))
    print(f"other findings: {others}")


def check_ex01(findings: dict[str, dict], rows: dict[tuple, dict], workload: Workload,
               watch: Watch) -> list[str]:
    """EX-01 names every group once for TOPIC (no members, all recent, every offset due within
    the warning window); its first expiry is the forecast's earliest and the broker dropped that
    partition's offset then. Returns the timings."""
    assert sorted(findings) == sorted(GROUPS)
    timings = []
    for group_id, f in sorted(findings.items()):
        keyed = sorted((row["expires_ms"], key[2], key) for key, row in rows.items()
                       if key[0] == group_id)
        first_ms, first_partition, first_key = keyed[0]
        partitions = sorted(key[2] for _, _, key in keyed)
        assert (f["severity"], f["verdict"], f["member_id"], f["topic"], f["topic_id"],
                f["partition"], f["log_partition"], f["log_offset"], f["evidence_log_offsets"]) == (
            "medium", "violation", None, TOPIC,
            # OffsetCommitValue.json (4.3.1): topicId is a tagged field of version 4+, and a
            # commit with a retention time is written as version 1 (expireTimestamp): no id.
            None if group_id == RETAINED else workload.topic_id, first_partition,
            rows[first_key]["log_partition"], rows[first_key]["log_offset"],
            sorted(rows[key]["log_offset"] for _, _, key in keyed)), f
        details = f["details"]
        assert {k: details[k] for k in ("partition_count", "partitions", "base_timestamp_kinds",
                                        "group_state", "member_count", "offsets_retention_ms")} == {
            "partition_count": len(partitions), "partitions": partitions,
            "base_timestamp_kinds": sorted({rows[key]["base_timestamp_kind"]
                                            for _, _, key in keyed}),
            "group_state": workload.described[group_id]["group_state"],
            "member_count": workload.described[group_id]["member_count"],
            "offsets_retention_ms": RETENTION_MINUTES * 60_000}, details
        assert json_ms(details["earliest_expires_at"]) == first_ms
        assert json_ms(details["latest_expires_at"]) == keyed[-1][0]
        noun = "partition" if len(partitions) == 1 else "partitions"
        assert (f"loses its committed offsets of {len(partitions)} {noun} of topic '{TOPIC}': "
                f"the first expires at "
                f"{datetime.fromtimestamp(first_ms / 1000, UTC):%Y-%m-%d %H:%M:%S} UTC"
                ) in f["message"], f["message"]
        timings.append(assert_within(f"EX-01 {group_id} first expiry {first_key}", first_ms,
                                     watch.seen.get(first_key), watch.gone.get(first_key)))
    return timings


def check_gh01(findings: dict[str, dict], workload: Workload) -> None:
    """GH-01 names the groups with offsets, no members and more than 3.6 s without a record:
    ex-simple and ex-retained (commits only: a notice), ex-churn (once had members); not
    ex-classic, whose departure is the snapshot's newest record. What the finding says of each
    group is what the broker described at snapshot time; the idle time lies between the moments
    the test saw around the group's last record and the snapshot's (ex-classic's departure)."""
    m = workload.moments
    assert sorted(findings) == sorted([SIMPLE, RETAINED, CHURN])
    last_record = {SIMPLE: ("simple_sent", "simple_answered"),
                   RETAINED: ("retained_sent", "retained_answered"),
                   CHURN: ("churn_left_sent", None)}
    for group_id, f in findings.items():
        broker = workload.described[group_id]
        assert broker["member_count"] == 0 and broker["committed_partitions"] > 0, broker
        never = group_id != CHURN
        assert (f["severity"], f["verdict"], f["topic"], f["partition"]) == (
            "info" if never else "low", "notice" if never else "violation", None, None), f
        details = f["details"]
        assert {k: details[k] for k in ("group_type", "group_state", "is_simple",
                                        "committed_partitions", "committed_topics",
                                        "never_rebalanced")} == {
            "group_type": broker["group_type"], "group_state": broker["group_state"],
            "is_simple": broker["is_simple"],
            "committed_partitions": broker["committed_partitions"], "committed_topics": 1,
            "never_rebalanced": never}, (group_id, details)
        sent, answered = last_record[group_id]
        assert details["idle_ms"] > GHOST_IDLE_HOURS * 3_600_000
        assert details["idle_ms"] <= m["classic_left_answered"] - m[sent] + CLOCK_MS, details
        if answered:
            assert details["idle_ms"] >= m["classic_left_sent"] - m[answered] - CLOCK_MS, details


def check_ch01(findings: dict[str, dict], churn_epochs: list[int], workload: Workload) -> None:
    """CH-01 names ex-churn alone (ex-classic's generations stay below six): as many bumps in the
    churn's hour as the group epoch Kafka's tool describes has moved since the group was new,
    the evidence being the records of every epoch after the first up to that one, the finding
    pointing at the bump that reached the threshold; a join and a leave per member."""
    assert sorted(findings) == [CHURN]
    f = findings[CHURN]
    tool = workload.churn_tool
    assert (tool["STATE"], tool["#MEMBERS"]) == ("Empty", "0"), tool
    broker_epoch = int(tool["GROUP-EPOCH"])
    assert broker_epoch - NEW_GROUP_EPOCH == CHURN_BUMPS, tool
    assert f["details"] == {
        "hour_at": workload.churn_hour, "group_type": "consumer",
        "epoch_bumps": broker_epoch - NEW_GROUP_EPOCH, "generation_bumps": 0,
        "joins": CHURN_CYCLES, "leaves": CHURN_CYCLES, "static_restarts": 0,
        "max_converge_ms": f["details"]["max_converge_ms"],
        "storm_epoch_bumps_per_hour": CHURN_BUMPS,
        "bump_count": broker_epoch - NEW_GROUP_EPOCH}, f["details"]
    assert churn_epochs == list(range(NEW_GROUP_EPOCH + 1, broker_epoch + 1))
    assert len(f["evidence_log_offsets"]) == CHURN_BUMPS
    assert f["log_offset"] == f["evidence_log_offsets"][CHURN_BUMPS - 1]
    assert (f["severity"], f["verdict"]) == ("medium", "violation")

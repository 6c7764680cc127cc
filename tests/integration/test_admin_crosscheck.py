"""Cross-checks 2 and 3 of issue #6: the replayed tables equal what the broker reports.

The workloads (:mod:`tests.integration.workloads`) leave groups of every kind the broker
supports; once they are settled the ``__consumer_offsets`` log is snapshotted both ways (segment
directories, ``offsetlake capture``) and, at the same moment (the log end offsets are checked
unchanged across snapshot and queries), the broker is asked through the Admin API:

* confluent-kafka 2.16.1 ``AdminClient``: ``list_consumer_groups`` (group id, type, state,
  is-simple) and ``describe_consumer_groups`` (type, state, members with member id, instance id,
  client id, host, current assignment and, for consumer groups, target assignment);
* kafka-python's ``KafkaAdminClient.list_group_offsets`` (OffsetFetch: committed offset,
  metadata, leader epoch) -- confluent-kafka's ``list_consumer_group_offsets`` returns metadata
  bytes it cannot decode (and its ``commit`` stores metadata with a trailing NUL byte, which the
  tables show as it is: ``"ck-a\u0000"``);
* Kafka's own ``kafka-consumer-groups``/``kafka-share-groups`` (the Java Admin client, run from
  the broker's jars) for what confluent-kafka does not expose: group epoch, target assignment
  epoch and member epoch of consumer groups, and everything about share groups.

What the Admin API does not expose, so is not compared: the classic generation, protocol and
leader (DescribeGroups returns the protocol name but librdkafka drops it; no generation at all),
member subscriptions, rack, rebalance/session timeouts, the per-partition assignment epochs
(KIP-1251), the member state byte (UNREVOKED/UNRELEASED), pending-revocation partitions (the
describe shows the assignment without them; the test requires none), offsets' commit
timestamps, and anything of a deleted group (it is simply absent: describe says Dead).
confluent-kafka maps the consumer-group states Assigning/Reconciling to UNKNOWN (its enum has
the classic states only), so the snapshot is taken only when every group is Stable or Empty.

Each check runs on four replays of the same snapshot: the pure-Python replay
(``jobs.replay``) of the segment directories and of the capture, and the Spark pipeline
(``jobs.stages.pipeline.run_pipeline``) on both, when that module exists.

The module runs in passes (:data:`PASSES`): a broker of the suite's release (4.3.1), one of each
newer ``<writer.versions>`` release (4.4.0), and ``rolling``: the last writer release on a log
directory every ``<rolling.versions>`` release wrote to first (3.9.2 ... 4.3.1,
:mod:`tests.integration.rolling_upgrade`), so every check also covers groups written by six
releases' coordinators.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import re
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from confluent_kafka import TopicCollection
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient

from jobs.replay import TABLE_COLUMNS

from .conftest import running_broker
from .kafka_broker import (KafkaBroker, KafkaJarsMissing, kafka_version, snapshot_log_dirs,
                           writer_versions)
from .make_sample import replay_tables
from .workloads import Workloads, offsets_end_offsets

pytestmark = pytest.mark.integration

CONSUMER_GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
SHARE_GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
STATE_NAMES = {"STABLE": "Stable", "EMPTY": "Empty", "DEAD": "Dead",
               "PREPARING_REBALANCING": "PreparingRebalance",
               "COMPLETING_REBALANCING": "CompletingRebalance", "UNKNOWN": "Unknown"}
HAS_PIPELINE = importlib.util.find_spec("jobs.stages.pipeline") is not None
SOURCES = ["segments/python", "capture/python",
           pytest.param("segments/spark", marks=pytest.mark.skipif(
               not HAS_PIPELINE, reason="jobs.stages.pipeline is not there yet")),
           pytest.param("capture/spark", marks=pytest.mark.skipif(
               not HAS_PIPELINE, reason="jobs.stages.pipeline is not there yet"))]


# ---- what the broker reports ------------------------------------------------------------------

@dataclass
class AdminView:
    """The broker's answers, normalised to the replay tables' vocabulary."""
    groups: dict[str, dict] = field(default_factory=dict)          # group id -> type/state/...
    members: dict[tuple[str, str], dict] = field(default_factory=dict)  # (group, member) -> ...
    offsets: dict[str, dict[tuple[str, int], dict]] = field(default_factory=dict)
    dead: dict[str, str] = field(default_factory=dict)             # asked about, not there
    topic_names: dict[str, str] = field(default_factory=dict)      # topic id (uuid str) -> name
    tool_output: dict[str, str] = field(default_factory=dict)


def tool_rows(text: str) -> list[dict[str, str]]:
    """Rows of kafka-consumer-groups/kafka-share-groups ``--describe`` output: one table per
    group (a header line, then rows); cells are whitespace-separated and never contain spaces,
    except the coordinator cell ``host:port  (id)``."""
    cell = re.compile(r"\S+(?:\s+\(\S+\))?")
    rows, header = [], None
    for line in text.splitlines():
        if not line.strip():
            header = None
            continue
        cells = cell.findall(line)
        if cells[0] == "GROUP":
            header = cells
        elif header is not None:
            if len(cells) != len(header):
                raise AssertionError(f"cannot parse {line!r} under {header}")
            rows.append(dict(zip(header, cells)))
    return rows


def tool_assignment(text: str) -> set[tuple[str, int]]:
    """``wl-orders:0,1,2`` (topics separated the same way) -> {(topic, partition)}."""
    if text in ("-", ""):
        return set()
    out, topic = set(), None
    for token in re.split(r"[,;]", text):
        if ":" in token:
            topic, token = token.rsplit(":", 1)
        if token:
            out.add((topic, int(token)))
    return out


def tool_int(text: str) -> int | None:
    return None if text == "-" else int(text)


def kafka_uuid(text: str) -> str:
    """Kafka's base64 Uuid text as the tables write topic ids (``uuid.UUID`` text)."""
    return str(uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))))


def admin_view(broker: KafkaBroker, asked: list[str]) -> AdminView:
    view = AdminView()
    bootstrap = broker.bootstrap_server
    admin = AdminClient({"bootstrap.servers": bootstrap})
    with ThreadPoolExecutor(4) as pool:
        tools = {name: pool.submit(broker.run_tool, main, "--bootstrap-server", bootstrap,
                                   "--describe", "--all-groups", *args)
                 for name, main, args in (
                     ("members", CONSUMER_GROUP_COMMAND, ("--members", "--verbose")),
                     ("state", CONSUMER_GROUP_COMMAND, ("--state", "--verbose")),
                     ("share-members", SHARE_GROUP_COMMAND, ("--members", "--verbose")),
                     ("share-state", SHARE_GROUP_COMMAND, ("--state", "--verbose")))}

        listed = admin.list_consumer_groups(request_timeout=15).result().valid
        ids = sorted({g.group_id for g in listed} | set(asked))
        described = {gid: f.result() for gid, f in
                     admin.describe_consumer_groups(ids, request_timeout=15).items()}
        for gid, d in described.items():
            state = STATE_NAMES[d.state.name]
            if state == "Dead":
                view.dead[gid] = state
                continue
            view.groups[gid] = {"group_type": d.type.name.lower(), "group_state": state,
                                "is_simple": d.is_simple_consumer_group,
                                "member_count": len(d.members)}
            for m in d.members:
                view.members[(gid, m.member_id)] = {
                    "instance_id": m.group_instance_id, "client_id": m.client_id,
                    "client_host": m.host,
                    "assignment": {(tp.topic, tp.partition)
                                   for tp in m.assignment.topic_partitions},
                    "target": None if m.target_assignment is None else
                    {(tp.topic, tp.partition) for tp in m.target_assignment.topic_partitions}}
        # Offsets through kafka-python's OffsetFetch: confluent-kafka 2.16.1 cannot be trusted
        # with offset metadata (its commit stores the string with a trailing NUL byte, and its
        # list_consumer_group_offsets returns bytes past the end that fail to decode).
        fetcher = KafkaAdminClient(bootstrap_servers=bootstrap)
        try:
            fetched = fetcher.list_group_offsets({gid: None for gid in
                                                  list(view.groups) + list(view.dead)})
        finally:
            fetcher.close()
        for gid, offsets in fetched.items():
            view.offsets[gid] = {(tp.topic, tp.partition): {
                "committed_offset": o.offset, "metadata": o.metadata or None,
                "leader_epoch": None if o.leader_epoch == -1 else o.leader_epoch}
                for tp, o in offsets.items()}
        for name, future in tools.items():
            view.tool_output[name] = future.result().stdout

    for row in tool_rows(view.tool_output["state"]):
        group = view.groups[row["GROUP"]]
        group["tool_state"] = row["STATE"]
        group["group_epoch"] = tool_int(row["GROUP-EPOCH"])
        group["target_assignment_epoch"] = tool_int(row["TARGET-ASSIGNMENT-EPOCH"])
    for row in tool_rows(view.tool_output["members"]):
        member = view.members[(row["GROUP"], row["CONSUMER-ID"])]
        member["member_epoch"] = tool_int(row["CURRENT-EPOCH"])
        member["target_epoch"] = tool_int(row["TARGET-EPOCH"])
        assert tool_assignment(row["CURRENT-ASSIGNMENT"]) == member["assignment"], row
    # Share groups: confluent-kafka 2.16.1 can neither list them (its ListGroups leaves them
    # out) nor describe them (it answers Dead), so everything comes from kafka-share-groups.
    for row in tool_rows(view.tool_output["share-state"]):
        view.dead.pop(row["GROUP"], None)  # confluent's describe calls a share group Dead
        view.groups[row["GROUP"]] = {
            "group_type": "share", "group_state": row["STATE"], "is_simple": False,
            "member_count": int(row["#MEMBERS"]), "tool_state": row["STATE"],
            "group_epoch": tool_int(row["GROUP-EPOCH"]),
            "target_assignment_epoch": tool_int(row["ASSIGNMENT-EPOCH"])}
        view.offsets[row["GROUP"]] = {}  # share groups keep no offsets in __consumer_offsets
    for row in tool_rows(view.tool_output["share-members"]):
        view.members[(row["GROUP"], row["CONSUMER-ID"])] = {
            "instance_id": None, "client_id": row["CLIENT-ID"], "client_host": row["HOST"],
            "assignment": tool_assignment(row["ASSIGNMENT"]), "target": None,
            "member_epoch": tool_int(row["MEMBER-EPOCH"])}

    topics = admin.describe_topics(
        TopicCollection(
            [t for t in admin.list_topics(timeout=10).topics if not t.startswith("__")]),
        request_timeout=15)
    for name, future in topics.items():
        view.topic_names[kafka_uuid(str(future.result().topic_id))] = name
    return view


# ---- fixtures -------------------------------------------------------------------------------

@dataclass
class Observation:
    release: str
    workloads: Workloads
    segments: Path
    capture: Path
    admin: AdminView
    attempts: int


_workload_failure: dict[str, str] = {}   # pass -> why its workloads failed
ROLLING = "rolling"
PASSES = (kafka_version(), *writer_versions(), ROLLING)


@pytest.fixture(scope="module", params=PASSES)
def crosscheck_broker(request, tmp_path_factory):
    """A broker of this module's own, once per release (the suite's and each newer writer
    release): the workloads delete offsets and groups and leave members running, which the tests
    sharing ``kafka_broker`` do not expect. The ``rolling`` pass: the last writer release on a log
    directory every release of ``<rolling.versions>`` wrote to first
    (:mod:`tests.integration.rolling_upgrade`), its earlier groups left Empty or deleted."""
    if request.param != ROLLING:
        for broker in running_broker(tmp_path_factory, f"kafka-crosscheck-{request.param}",
                                     None if request.param == kafka_version() else request.param):
            broker.label, broker.earlier = request.param, []
            yield broker
        return
    from .rolling_upgrade import upgraded_broker

    try:
        broker, earlier = upgraded_broker(tmp_path_factory.mktemp("kafka-rolling"))
    except KafkaJarsMissing as exc:
        pytest.fail(f"{exc} (or `bash build/kafka/fetch.sh --rolling`)", pytrace=False)
    broker.label, broker.earlier = ROLLING, earlier
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def workloads(crosscheck_broker):
    kafka_broker = crosscheck_broker
    failed = _workload_failure.get(kafka_broker.label)
    if failed:  # pytest retries a failed module fixture for every test: don't
        pytest.fail(f"the workloads failed earlier: {failed}", pytrace=False)
    wl = Workloads(kafka_broker.bootstrap_server)
    try:
        if kafka_broker.label == ROLLING:
            from .rolling_upgrade import scenarios_of

            wl.run_all(scenarios_of(kafka_broker.version))
        else:
            wl.run_all()
        wl.wait_settled()
    except BaseException as exc:
        _workload_failure[kafka_broker.label] = repr(exc)
        print(f"broker log tail:\n{kafka_broker.log_tail()}")
        wl.close()
        raise
    yield wl
    wl.close()


@pytest.fixture(scope="module")
def observed(crosscheck_broker, workloads, tmp_path_factory) -> Observation:
    """Snapshots (segments + capture) and Admin answers of one instant: the log end offsets
    are the same before the copy and after the last query, else everything is taken again."""
    from jobs.snapshots.capture import capture

    kafka_broker = crosscheck_broker
    asked = [s["group_id"] for s in workloads.scenarios]
    for attempt in range(1, 4):
        root = tmp_path_factory.mktemp(f"observed-{attempt}")
        before = offsets_end_offsets(kafka_broker.bootstrap_server)
        snapshot_log_dirs(kafka_broker, root / "segments")
        capture(kafka_broker.bootstrap_server, root / "capture", snapshot_id="crosscheck",
                progress=io.StringIO())
        admin = admin_view(kafka_broker, asked)
        if offsets_end_offsets(kafka_broker.bootstrap_server) == before:
            return Observation(kafka_broker.label, workloads, root / "segments",
                               root / "capture", admin, attempt)
        workloads.wait_settled()
    pytest.fail("__consumer_offsets kept changing while the snapshot was taken")


def capture_events(capture_dir: Path):
    """Replay events of a capture: read_committed rows, no producer ids, no markers."""
    from decoders.codec import decode_record
    from jobs.replay.events import ReplayEvent

    table = pq.read_table(capture_dir / "raw_records").to_pylist()
    by_partition: dict[int, list] = {}
    for row in sorted(table, key=lambda r: (r["partition"], r["offset"])):
        by_partition.setdefault(row["partition"], []).append(ReplayEvent(
            row["partition"], row["offset"], row["timestamp"], -1, False, None,
            decode_record(row["key"], row["value"])))
    return by_partition


def python_capture_tables(capture_dir: Path) -> dict[str, list[dict]]:
    from jobs.replay import replay_partition

    tables = {name: [] for name in TABLE_COLUMNS}
    for events in capture_events(capture_dir).values():
        for name, rows in replay_partition(events).tables.items():
            tables[name].extend(rows)
    return tables


def spark_tables(spark, lake: Path, path: Path, snapshot_id: str) -> dict[str, list[dict]]:
    from jobs.lake import read_table
    from jobs.stages.pipeline import run_pipeline

    report = run_pipeline(spark, lake, [str(path)], snapshot_id=snapshot_id,
                          progress=io.StringIO())
    assert report.reconciled, report.summary()
    tables = {}
    for name in TABLE_COLUMNS:
        rows = read_table(spark, lake, name).where(f"snapshot_id = '{snapshot_id}'").collect()
        tables[name] = [{k: v for k, v in r.asDict(recursive=True).items() if k != "snapshot_id"}
                        for r in rows]
    return tables


_replays: dict[tuple[str, str], dict[str, list[dict]]] = {}   # (release, source) -> its tables


@pytest.fixture(params=SOURCES)
def replayed(request, observed, tmp_path_factory) -> dict[str, list[dict]]:
    """The replay tables of the observed snapshot, by source/engine (computed once each)."""
    source = request.param
    done = {s: table for (release, s), table in _replays.items() if release == observed.release}
    if source not in done:
        began = time.monotonic()
        try:
            if source == "segments/python":
                done[source] = replay_tables(observed.segments)
            elif source == "capture/python":
                done[source] = python_capture_tables(observed.capture)
            else:
                # Both Spark legs at once, in two threads of the one session: the pipeline is
                # mostly driver-side overhead (small jobs, Delta commits), so they overlap well.
                spark = request.getfixturevalue("spark")
                legs = {"segments/spark": observed.segments, "capture/spark": observed.capture}
                with ThreadPoolExecutor(len(legs)) as pool:
                    futures = {leg: pool.submit(spark_tables, spark,
                                                tmp_path_factory.mktemp("lake"), path,
                                                leg.replace("/", "-"))
                               for leg, path in legs.items()}
                for leg, future in futures.items():
                    exc = future.exception()
                    done[leg] = future.result() if exc is None else exc
                if isinstance(done[source], Exception):
                    raise done[source]
        except Exception as exc:
            done[source] = exc  # fail the other tests of this source at once, not again
            raise
        finally:
            _replays.update({(observed.release, s): table for s, table in done.items()})
        print(f"{observed.release} {source}: replayed in {time.monotonic() - began:.1f} s")
    if isinstance(done[source], Exception):
        pytest.fail(f"the {source} replay failed earlier: {done[source]!r}", pytrace=False)
    return done[source]


# ---- helpers over the replay tables ----------------------------------------------------------

def _topic(row: dict, admin: AdminView) -> str | None:
    return row.get("topic_name") or admin.topic_names.get(row.get("topic_id"))


def replay_groups(tables) -> dict[str, dict]:
    return {r["group_id"]: r for r in tables["groups"]}


def replay_assignments(tables, admin: AdminView, table="member_assignments") -> dict:
    out: dict[tuple[str, str], set] = {}
    for r in tables[table]:
        if r.get("is_pending_revocation"):
            continue
        out.setdefault((r["group_id"], r["member_id"]), set()).add((_topic(r, admin),
                                                                    r["partition"]))
    return out


def replay_offsets(tables) -> dict[str, dict[tuple[str, int], dict]]:
    out: dict[str, dict] = {}
    for r in tables["offsets"]:
        if r["committed_offset"] is None:
            continue  # a tombstone row, if a replay keeps one: no committed offset
        out.setdefault(r["group_id"], {})[(r["topic"], r["partition"])] = {
            "committed_offset": r["committed_offset"], "metadata": r["metadata"] or None,
            "leader_epoch": r["leader_epoch"]}
    return out


def scenario(observed: Observation, name: str) -> dict:
    return next(s for s in observed.workloads.scenarios if s["scenario"] == name)


# ---- the workloads did what they say (so the cross-checks below test something) -------------

def test_every_scenario_reached_its_expected_end_state(observed):
    admin = observed.admin
    for s in observed.workloads.scenarios:
        gid, expected = s["group_id"], s["expected"]
        if expected.get("deleted"):
            assert gid in admin.dead and admin.offsets[gid] == {}, s["scenario"]
            continue
        group = admin.groups[gid]
        assert (group["group_type"], group["group_state"]) == \
            (expected["group_type"], expected["state"]), s["scenario"]
        clients = sorted(m["client_id"] for (g, _), m in admin.members.items() if g == gid)
        assert clients == expected["members"], s["scenario"]
        got = {f"{t}-{p}": o["committed_offset"] for (t, p), o in admin.offsets[gid].items()}
        assert got == expected["offsets"], s["scenario"]


def test_the_snapshot_covers_every_group_kind(observed):
    kinds = {g["group_type"] for g in observed.admin.groups.values()}
    assert {"classic", "consumer", "share"} <= kinds
    assert not [g for g in observed.admin.groups.values()
                if g["group_state"] not in ("Stable", "Empty")]


# ---- cross-check 2: replayed tables == Admin API ----------------------------------------------

def test_groups_match_the_admin_api(observed, replayed):
    admin = observed.admin
    got = {gid: {"group_type": r["group_type"], "group_state": r["group_state"],
                 "is_simple": bool(r["is_simple"]), "member_count": r["member_count"]}
           for gid, r in replay_groups(replayed).items()}
    want = {gid: {k: g[k] for k in ("group_type", "group_state", "is_simple", "member_count")}
            for gid, g in admin.groups.items()}
    assert got == want
    assert not set(got) & set(admin.dead)


def test_group_epochs_match_the_admin_api(observed, replayed):
    """Group and target assignment epochs of consumer and share groups (Java Admin only)."""
    rows = replay_groups(replayed)
    got = {gid: (rows[gid]["group_epoch"], rows[gid]["target_assignment_epoch"])
           for gid in observed.admin.groups if gid in rows}
    want = {gid: (g.get("group_epoch"), g.get("target_assignment_epoch"))
            for gid, g in observed.admin.groups.items()}
    assert got == want


def test_members_match_the_admin_api(observed, replayed):
    got = {(r["group_id"], r["member_id"]): {
        "instance_id": r["instance_id"], "client_id": r["client_id"],
        "client_host": r["client_host"], "member_epoch": r["member_epoch"]}
        for r in replayed["members"]}
    want = {key: {"instance_id": m["instance_id"], "client_id": m["client_id"],
                  "client_host": m["client_host"], "member_epoch": m.get("member_epoch")}
            for key, m in observed.admin.members.items()}
    assert got == want


def test_member_assignments_match_the_admin_api(observed, replayed):
    admin = observed.admin
    assert not [r for r in replayed["member_assignments"] if r["is_pending_revocation"]]
    got = {k: v for k, v in replay_assignments(replayed, admin).items()}
    want = {key: m["assignment"] for key, m in admin.members.items() if m["assignment"]}
    assert got == want


def test_target_assignments_match_the_admin_api(observed, replayed):
    """Consumer groups only: DescribeGroups (classic) has no target, share describe neither."""
    admin = observed.admin
    consumer_groups = {gid for gid, g in admin.groups.items() if g["group_type"] == "consumer"}
    got = {k: v for k, v in replay_assignments(replayed, admin, "target_assignments").items()
           if k[0] in consumer_groups}
    want = {key: m["target"] for key, m in admin.members.items()
            if key[0] in consumer_groups and m["target"]}
    assert got == want


def test_committed_offsets_match_the_admin_api(observed, replayed):
    got = replay_offsets(replayed)
    want = {gid: offsets for gid, offsets in observed.admin.offsets.items() if offsets}
    assert got == want


# ---- cross-check 3: transactions -------------------------------------------------------------

def test_aborted_transaction_offsets_are_absent_and_committed_ones_present(
        observed, replayed, request):
    txn = scenario(observed, "transactions")
    gid, expected = txn["group_id"], txn["expected"]
    offsets = {f"{t}-{p}": o["committed_offset"]
               for (t, p), o in replay_offsets(replayed).get(gid, {}).items()}
    assert offsets == expected["offsets"]                     # committed transaction installed
    assert not set(expected["absent"]) & set(offsets)         # aborted-only key never appears
    assert all(offsets.get(k) != v for k, v in expected["aborted"].items())

    commits = [r for r in replayed["offset_commits"] if r["group_id"] == gid]
    aborted = {(f"{r['topic']}-{r['partition']}", r["committed_offset"]) for r in commits
               if r["outcome"] == "aborted"}
    committed = {(f"{r['topic']}-{r['partition']}", r["committed_offset"]) for r in commits
                 if r["outcome"] == "committed" and r["is_installed"]}
    outcomes = sorted(r["outcome"] for r in replayed["transactions"] if r["group_id"] == gid)
    if request.node.callspec.params["replayed"].startswith("segments"):
        # The segments keep the aborted records, their producer id and the ABORT marker.
        assert aborted == set(expected["aborted"].items())
        assert committed == set(expected["offsets"].items())
        assert not [r for r in commits if r["outcome"] == "aborted" and r["is_installed"]]
        assert outcomes == ["aborted", "committed"]
    else:
        # read_committed never returns the aborted records, nor markers or producer ids: the
        # committed transaction's records look like plain commits.
        assert aborted == set() and outcomes == []
        assert {(f"{r['topic']}-{r['partition']}", r["committed_offset"]) for r in commits} == \
            set(expected["offsets"].items())


def test_a_real_log_raises_no_violation(replayed):
    """The coordinator wrote and loaded this log without complaint: the replay must find
    nothing to report either."""
    assert [(r["rule_id"], r["severity"], r["group_id"], r["message"])
            for r in replayed["violations"]] == []


def test_capture_and_segment_replays_agree_on_the_final_state(observed):
    """Same log, two readers: the final-state tables agree except for log positions the capture
    cannot shift (it holds the same offsets) and producer ids (a capture has none)."""
    segments = replay_tables(observed.segments)
    capture = python_capture_tables(observed.capture)
    drop = {"producer_id", "is_transactional"}
    for name in ("groups", "members", "member_assignments", "target_assignments", "offsets"):
        strip = [sorted(repr({k: v for k, v in r.items() if k not in drop}) for r in t[name])
                 for t in (segments, capture)]
        assert strip[0] == strip[1], name


# ---- dump, on each release's log ---------------------------------------------------------------

def test_dump_equals_the_releases_dump_log_segments(crosscheck_broker, observed):
    """``offsetlake dump`` of the snapshot equals, record for record, Kafka's
    ``DumpLogSegments --offsets-decoder`` run from the jars of the release that wrote it; the
    workloads make that release write every group kind's records."""
    from .test_dump_vs_kafka import assert_dump_equals_dump_log_segments

    counts = assert_dump_equals_dump_log_segments(crosscheck_broker, observed.segments)
    print(f"\n{observed.release} wrote:", dict(sorted(counts.items())))
    kinds = set(counts)
    expected = {f"type {t}" for t in (1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15)}
    assert expected <= kinds, f"{observed.release} did not write {expected - kinds}"


def test_the_rolling_log_holds_groups_of_every_release(crosscheck_broker, observed, replayed):
    """The ``rolling`` pass: each release the log went through left groups the last broker
    still reports (their tables are in every comparison above) or deleted."""
    if observed.release != ROLLING:
        pytest.skip("a single release's log")
    from .rolling_upgrade import prefix_of, rolling_versions

    earlier = crosscheck_broker.earlier
    assert {s["release"] for s in earlier} == set(rolling_versions())
    kept = {gid.split("-", 1)[0] for gid in replay_groups(replayed)}
    assert {prefix_of(v) for v in rolling_versions()} <= kept
    deleted = {s["group_id"] for s in earlier if s["expected"].get("deleted")}
    assert deleted and not deleted & set(replay_groups(replayed))

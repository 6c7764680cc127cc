"""Workloads that make a real broker's group coordinator write every kind of group record.

Each scenario drives real clients against the broker and appends to :attr:`Workloads.scenarios` a
dict saying what it did: ``scenario``, ``group_id``, ``protocol``, ``clients``, ``steps`` (one line
per action, in order) and ``expected`` (the end state the broker should report: group type and
state, members by client id, committed offsets, offsets that must be absent, or ``deleted``)::

    with Workloads(broker.bootstrap_server) as wl:
        wl.run_all()          # leaves some members alive (stable) until the with-block ends
        wl.wait_settled()     # every group Stable/Empty and __consumer_offsets not growing
        ...snapshot, describe...

Members that must still be in their groups at snapshot time run in :class:`LiveMember` threads
that keep polling (classic members must poll to take part in rebalances, librdkafka serves
assignments from poll), with auto-commit off everywhere so that nothing writes once settled.

Clients: kafka-python (classic protocol only) and confluent-kafka (classic, KIP-848 ``consumer``
protocol, share consumer, transactions). Streams groups are not produced: no Python client speaks
the streams rebalance protocol (KIP-1071), and this harness has no Kafka Streams application.

Also runnable to see what it writes against any broker::

    python -m tests.integration.workloads 127.0.0.1:9092
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from typing import Any
from collections.abc import Callable

from confluent_kafka import (Consumer, ConsumerGroupState, ConsumerGroupType, Producer,
                             ShareConsumer)
from confluent_kafka import TopicPartition as CkTopicPartition
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource,
                                   NewTopic, ResourceType)
from kafka import KafkaAdminClient, KafkaConsumer
from kafka import TopicPartition as KpTopicPartition
from kafka.structs import OffsetAndMetadata

from .kafka_python_rejoin import guard_rejoin

guard_rejoin()

ORDERS = "wl-orders"      # 3 partitions: what every group subscribes to
EVENTS = "wl-events"      # 2 partitions: offsets committed outside the subscription, then deleted
TOPICS = {ORDERS: 3, EVENTS: 2}
MESSAGES_PER_PARTITION = 10

# KIP-848 session timeout of the groups whose members crash or leave statically: a group-level
# config (KIP-848 group configs), so the broker's defaults stay as the other tests expect them.
FAST_SESSION_TIMEOUT_MS = 2000

SETTLE_TIMEOUT_S = 60.0

# A KIP-848 member in a child process that is SIGKILLed: no leave heartbeat is ever sent, so
# the coordinator fences it when the session times out (what a crashed JVM/host looks like).
CRASH_MEMBER_CODE = r"""
import sys, time
from confluent_kafka import Consumer
bootstrap, group, topic, client_id = sys.argv[1:5]
c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
              "client.id": client_id, "enable.auto.commit": False,
              "auto.offset.reset": "earliest"})
c.subscribe([topic])
deadline = time.monotonic() + 30
while not c.assignment():
    if time.monotonic() > deadline:
        sys.exit("no assignment in 30 s")
    c.poll(0.1)
print(c.memberid(), flush=True)
while True:
    c.poll(0.1)
"""


class WorkloadError(RuntimeError):
    """A scenario could not bring its group where it should be."""


def wait_until(what: str, check: Callable[[], Any], timeout_s: float = 30.0,
               interval_s: float = 0.2):
    """Call ``check`` until it returns something truthy; raise naming ``what`` (and the last
    value) when ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    last = None
    while True:
        try:
            last = check()
        except Exception as exc:  # a describe during a rebalance may fail transiently
            last = exc
        else:
            if last:
                return last
        if time.monotonic() > deadline:
            raise WorkloadError(f"timed out after {timeout_s:.0f} s waiting for {what}; "
                                f"last: {last!r}")
        time.sleep(interval_s)


class LiveMember:
    """A group member polled by its own thread until :meth:`stop`.

    Clients are not thread-safe, so the client is created, used (:meth:`call`) and closed in that
    thread only. ``stop(close=True)`` closes it (classic LeaveGroup / KIP-848 leave heartbeat with
    epoch -1, or -2 for a static member); ``stop(close=False)`` just stops polling.
    """

    def __init__(self, name: str, kind: str, factory: Callable[[], Any]):
        self.name, self.kind = name, kind
        self._factory = factory
        self._calls: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._close = True
        self.received = 0  # messages polled so far
        self._started: Future = Future()
        self._thread = threading.Thread(target=self._run, name=f"member-{name}", daemon=True)
        self._thread.start()
        self._started.result(timeout=30)

    def _run(self) -> None:
        try:
            client = self._factory()
        except BaseException as exc:
            self._started.set_exception(exc)
            return
        self._started.set_result(None)
        try:
            while not self._stop.is_set():
                try:
                    fn, result = self._calls.get_nowait()
                except queue.Empty:
                    self._poll(client)
                    continue
                try:
                    result.set_result(fn(client))
                except BaseException as exc:
                    result.set_exception(exc)
        finally:
            if self._close:
                try:
                    if self.kind == "kafka-python":
                        client.close(autocommit=False)
                    else:
                        client.close()
                except Exception:
                    pass

    def _poll(self, client) -> None:
        if self.kind == "kafka-python":
            self.received += sum(len(r) for r in client.poll(timeout_ms=50).values())
        elif self.kind == "share":
            self.received += sum(1 for m in client.poll(0.05) if m.error() is None)
        else:
            message = client.poll(0.05)
            self.received += message is not None and message.error() is None

    def call(self, fn: Callable[[Any], Any], timeout_s: float = 30.0):
        """Run ``fn(client)`` in the member's thread and return its result."""
        result: Future = Future()
        self._calls.put((fn, result))
        return result.result(timeout=timeout_s)

    def stop(self, close: bool = True) -> None:
        self._close = close
        self._stop.set()
        self._thread.join(timeout=60)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()


def _assigned(client, kind: str) -> list[tuple[str, int]]:
    """The client's own view of its assignment (both clients' TopicPartition have these)."""
    return sorted((tp.topic, tp.partition) for tp in client.assignment())


def _commit(client, kind: str, offsets: dict[tuple[str, int], int], metadata: str) -> None:
    """Synchronous commit of ``offsets`` ((topic, partition) -> offset) with ``metadata``."""
    if kind == "kafka-python":
        client.commit({KpTopicPartition(t, p): OffsetAndMetadata(o, metadata, -1)
                       for (t, p), o in offsets.items()})
        return
    result = client.commit(offsets=[CkTopicPartition(t, p, o, metadata)
                                    for (t, p), o in sorted(offsets.items())],
                           asynchronous=False)
    failed = [tp for tp in result or () if tp.error is not None]
    if failed:
        raise WorkloadError(f"commit failed: {failed}")


class Workloads:
    """Runs the scenarios against ``bootstrap`` and keeps the members meant to stay alive."""

    def __init__(self, bootstrap: str, prefix: str = "wl"):
        self.bootstrap = bootstrap
        self.prefix = prefix
        self.scenarios: list[dict] = []
        self.members: dict[str, LiveMember] = {}
        self.admin = AdminClient({"bootstrap.servers": bootstrap})
        self.timings: dict[str, float] = {}

    # -- plumbing ------------------------------------------------------------------------------

    def __enter__(self) -> Workloads:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        """Close every member still alive (cleanly: they leave their groups), then let go of the
        admin client: a handle that outlives its broker reconnects to it until the process ends,
        logging "Connection refused" (the brokers leg's end, two such handles)."""
        for name in list(self.members):
            self.members.pop(name).stop(close=True)
        self.admin = None

    def group(self, name: str) -> str:
        return f"{self.prefix}-{name}"

    def _record(self, scenario: str, group_id: str, protocol: str, clients: str,
                steps: list[str], expected: dict) -> None:
        self.scenarios.append({"scenario": scenario, "group_id": group_id, "protocol": protocol,
                               "clients": clients, "steps": steps, "expected": expected})

    def _confluent(self, name: str, group_id: str, protocol: str, topics=(ORDERS,),
                   **conf) -> LiveMember:
        settings = {"bootstrap.servers": self.bootstrap, "group.id": group_id,
                    "group.protocol": protocol, "client.id": name,
                    "enable.auto.commit": False, "auto.offset.reset": "earliest", **conf}
        if protocol == "classic":
            settings.setdefault("partition.assignment.strategy", "range")
            settings.setdefault("session.timeout.ms", 6000)
            settings.setdefault("heartbeat.interval.ms", 300)

        def factory():
            consumer = Consumer(settings)
            if topics:
                consumer.subscribe(list(topics))
            return consumer
        member = LiveMember(name, "confluent", factory)
        self.members[name] = member
        return member

    def _kafka_python(self, name: str, group_id: str, topics=(ORDERS,)) -> LiveMember:
        def factory():
            consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, group_id=group_id,
                                     client_id=name, enable_auto_commit=False,
                                     auto_offset_reset="earliest", session_timeout_ms=6000,
                                     heartbeat_interval_ms=300)
            consumer.subscribe(list(topics))
            return consumer
        member = LiveMember(name, "kafka-python", factory)
        self.members[name] = member
        return member

    def _share(self, name: str, group_id: str, topics=(ORDERS,)) -> LiveMember:
        def factory():
            consumer = ShareConsumer({"bootstrap.servers": self.bootstrap, "group.id": group_id,
                                      "client.id": name})
            consumer.subscribe(list(topics))
            return consumer
        member = LiveMember(name, "share", factory)
        self.members[name] = member
        return member

    def _stop(self, name: str, close: bool = True) -> None:
        self.members.pop(name).stop(close=close)

    def assignment(self, name: str) -> list[tuple[str, int]]:
        member = self.members[name]
        return member.call(lambda c: _assigned(c, member.kind))

    def commit_assigned(self, name: str, base: int, metadata: str) -> dict[tuple[str, int], int]:
        """Commit ``base + partition`` for every partition ``name`` owns; returns what it did."""
        member = self.members[name]

        def commit(client):
            offsets = {tp: base + tp[1] for tp in _assigned(client, member.kind)}
            if not offsets:
                raise WorkloadError(f"{name} owns no partition to commit")
            _commit(client, member.kind, offsets, metadata)
            return offsets
        return member.call(commit)

    def commit(self, name: str, offsets: dict[tuple[str, int], int], metadata: str) -> None:
        member = self.members[name]
        member.call(lambda c: _commit(c, member.kind, offsets, metadata))

    def describe(self, group_id: str):
        """confluent-kafka's ConsumerGroupDescription (classic and consumer groups)."""
        return self.admin.describe_consumer_groups([group_id], request_timeout=10)[group_id] \
            .result()

    def wait_group(self, group_id: str, state: ConsumerGroupState, clients: set[str] | None,
                   partitions: set[tuple[str, int]] | None = None, group_type=None,
                   timeout_s: float = 30.0):
        """Wait until the group is in ``state`` with exactly ``clients`` (by client id) as
        members, every member owning what its target says, and (optionally) all of
        ``partitions`` owned."""
        def check():
            d = self.describe(group_id)
            if d.state != state or (group_type is not None and d.type != group_type):
                return None
            if clients is not None and sorted(m.client_id for m in d.members) != sorted(clients):
                return None
            owned = [(tp.topic, tp.partition) for m in d.members
                     for tp in m.assignment.topic_partitions]
            if partitions is not None and sorted(owned) != sorted(partitions):
                return None
            for m in d.members:
                if m.target_assignment is not None and \
                        _tps(m.target_assignment) != _tps(m.assignment):
                    return None
                # ... and the client itself has taken what the coordinator says it owns (a
                # classic member learns it from its SyncGroup response, a bit later).
                live = self.members.get(m.client_id)
                if live is not None and set(self.assignment(m.client_id)) != _tps(m.assignment):
                    return None
            return d
        return wait_until(f"{group_id} {state.name} with members {sorted(clients or ())}", check,
                          timeout_s)

    def set_group_config(self, group_id: str, **configs: str) -> None:
        """KIP-848 group configs (e.g. consumer.session.timeout.ms) for one group."""
        entries = [ConfigEntry(k.replace("_", "."), str(v),
                               incremental_operation=AlterConfigOpType.SET)
                   for k, v in configs.items()]
        resource = ConfigResource(ResourceType.GROUP, group_id, incremental_configs=entries)
        for future in self.admin.incremental_alter_configs([resource]).values():
            future.result()

    # -- scenarios -----------------------------------------------------------------------------

    SCENARIOS = ("classic_kafka_python", "classic_confluent", "consumer_lifecycle",
                 "consumer_static", "consumer_drained", "transactions", "offset_deletion",
                 "group_deletion", "conversion", "share_group")

    def run_all(self, scenarios: tuple[str, ...] = SCENARIOS) -> list[dict]:
        self.create_topics()
        for name in scenarios:
            began = time.monotonic()
            getattr(self, name)()
            self.timings[name] = round(time.monotonic() - began, 2)
        return self.scenarios

    def create_topics(self) -> None:
        """The workloads' topics with their records; nothing when an earlier run on the same
        cluster made them (a rolling upgrade runs the workloads once per release)."""
        existing = self.admin.list_topics(timeout=10).topics
        if all(t in existing for t in TOPICS):
            return
        futures = self.admin.create_topics([NewTopic(t, n, 1) for t, n in TOPICS.items()])
        for future in futures.values():
            future.result()
        wait_until("topic metadata", lambda: all(
            t in self.admin.list_topics(timeout=5).topics for t in TOPICS))
        producer = Producer({"bootstrap.servers": self.bootstrap})
        for topic, partitions in TOPICS.items():
            for i in range(MESSAGES_PER_PARTITION * partitions):
                producer.produce(topic, value=b"%s-%d" % (topic.encode(), i),
                                 partition=i % partitions)
        if producer.flush(30) != 0:
            raise WorkloadError("messages not delivered")

    def classic_kafka_python(self) -> None:
        """Two kafka-python members share a classic group; one commits; both stay."""
        gid = self.group("classic-kp")
        a, b = f"{gid}-1", f"{gid}-2"
        self._kafka_python(a, gid)
        self.wait_group(gid, ConsumerGroupState.STABLE, {a}, _all(ORDERS))
        self._kafka_python(b, gid)
        self.wait_group(gid, ConsumerGroupState.STABLE, {a, b}, _all(ORDERS))
        committed = self.commit_assigned(a, 3, "kp")
        self._record("classic-kafka-python", gid, "classic", "kafka-python", [
            f"{a} joins (JoinGroup/SyncGroup, range assignor): generation 1 owns {ORDERS} 0-2",
            f"{b} joins: rebalance, generation 2 splits the partitions",
            f"{a} commits {_fmt(committed)} (metadata 'kp')",
            "both members stay in the group until the snapshot"],
            {"group_type": "classic", "state": "Stable", "members": sorted([a, b]),
             "offsets": _offsets(committed)})

    def classic_confluent(self) -> None:
        """Two confluent-kafka classic members; both commit; one leaves cleanly."""
        gid = self.group("classic-ck")
        a, b = f"{gid}-1", f"{gid}-2"
        self._confluent(a, gid, "classic")
        self._confluent(b, gid, "classic")
        self.wait_group(gid, ConsumerGroupState.STABLE, {a, b}, _all(ORDERS))
        committed = self.commit_assigned(a, 4, "ck-a")
        committed_b = self.commit_assigned(b, 5, "ck-b")
        self._stop(b)
        self.wait_group(gid, ConsumerGroupState.STABLE, {a}, _all(ORDERS))
        self._record("classic-confluent", gid, "classic", "confluent-kafka (group.protocol=classic)", [
            f"{a} and {b} join (range assignor) and split {ORDERS}",
            f"{a} commits {_fmt(committed)}; {b} commits {_fmt(committed_b)}",
            f"{b} closes: LeaveGroup, rebalance, {a} owns all of {ORDERS}",
            f"{a} stays until the snapshot"],
            {"group_type": "classic", "state": "Stable", "members": [a],
             "offsets": _offsets({**committed, **committed_b})})

    def consumer_lifecycle(self) -> None:
        """KIP-848: three members join, one leaves cleanly, one crashes (SIGKILL) and is fenced."""
        gid = self.group("consumer")
        a, b, c = f"{gid}-1", f"{gid}-2", f"{gid}-crash"
        self.set_group_config(gid, consumer_session_timeout_ms=FAST_SESSION_TIMEOUT_MS)
        self._confluent(a, gid, "consumer")
        self.wait_group(gid, ConsumerGroupState.STABLE, {a}, _all(ORDERS))
        self._confluent(b, gid, "consumer")
        crashed = subprocess.Popen([sys.executable, "-c", CRASH_MEMBER_CODE, self.bootstrap, gid,
                                    ORDERS, c], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   stdin=subprocess.DEVNULL, text=True)
        try:
            crashed_id = crashed.stdout.readline().strip()
            if not crashed_id:
                raise WorkloadError(f"crash member did not start: {crashed.stderr.read()}")
            self.wait_group(gid, ConsumerGroupState.STABLE, {a, b, c}, _all(ORDERS))
            committed = self.commit_assigned(a, 6, "consumer-a")
            committed_b = self.commit_assigned(b, 7, "consumer-b")
            self._stop(b)
            crashed.kill()
        finally:
            crashed.kill()
            crashed.wait(timeout=10)
            crashed.stdout.close()
            crashed.stderr.close()
        self.wait_group(gid, ConsumerGroupState.STABLE, {a}, _all(ORDERS),
                        timeout_s=FAST_SESSION_TIMEOUT_MS / 1000 + 20)
        self._record("consumer-lifecycle", gid, "consumer", "confluent-kafka (group.protocol=consumer)", [
            f"group config consumer.session.timeout.ms={FAST_SESSION_TIMEOUT_MS}",
            f"{a} joins (ConsumerGroupHeartbeat epoch 0) and gets {ORDERS} 0-2",
            f"{b} and {c} (a child process, member id {crashed_id}) join; the uniform assignor "
            "spreads the partitions",
            f"{a} commits {_fmt(committed)}; {b} commits {_fmt(committed_b)}",
            f"{b} closes: leave heartbeat (epoch -1)",
            f"{c} is SIGKILLed (no leave) and fenced when its {FAST_SESSION_TIMEOUT_MS} ms "
            "session expires",
            f"{a} owns all partitions again and stays until the snapshot"],
            {"group_type": "consumer", "state": "Stable", "members": [a],
             "fenced_member_id": crashed_id,
             "offsets": _offsets({**committed, **committed_b})})

    def consumer_static(self) -> None:
        """KIP-848 static members: one leaves (epoch -2) and rejoins under a new member id."""
        gid = self.group("static")
        a, b = f"{gid}-a", f"{gid}-b"
        self.set_group_config(gid, consumer_session_timeout_ms=FAST_SESSION_TIMEOUT_MS * 3)
        self._confluent(a, gid, "consumer", **{"group.instance.id": "instance-a"})
        self._confluent(b, gid, "consumer", **{"group.instance.id": "instance-b"})
        before = self.wait_group(gid, ConsumerGroupState.STABLE, {a, b}, _all(ORDERS))
        old_id = next(m.member_id for m in before.members if m.client_id == a)
        owned_a = sorted(_tps(next(m.assignment for m in before.members if m.client_id == a)))
        committed = self.commit_assigned(b, 8, "static-b")
        self._stop(a)  # close() of a static member: heartbeat with epoch -2 (temporary leave)
        self._confluent(a, gid, "consumer", **{"group.instance.id": "instance-a"})
        after = self.wait_group(gid, ConsumerGroupState.STABLE, {a, b}, _all(ORDERS))
        new_id = next(m.member_id for m in after.members if m.client_id == a)
        if new_id == old_id:
            raise WorkloadError("the rejoining static member kept its member id")
        self._record("consumer-static", gid, "consumer",
                     "confluent-kafka (group.protocol=consumer, group.instance.id)", [
            f"{a} (instance-a) and {b} (instance-b) join; {a} owns {owned_a}",
            f"{b} commits {_fmt(committed)}",
            f"{a} closes: static temporary leave (member epoch -2, partitions kept)",
            f"a new consumer with instance-a rejoins: new member id {new_id} replaces {old_id} "
            "and takes over its partitions",
            "both stay until the snapshot"],
            {"group_type": "consumer", "state": "Stable", "members": sorted([a, b]),
             "instances": {"instance-a": new_id}, "replaced_member_id": old_id,
             "offsets": _offsets(committed)})

    def consumer_drained(self) -> None:
        """A KIP-848 group whose only member commits and leaves: Empty, offsets kept."""
        gid = self.group("drained")
        a = f"{gid}-1"
        self._confluent(a, gid, "consumer")
        self.wait_group(gid, ConsumerGroupState.STABLE, {a}, _all(ORDERS))
        committed = self.commit_assigned(a, 9, "drained")
        self._stop(a)
        self.wait_group(gid, ConsumerGroupState.EMPTY, set())
        self._record("consumer-drained", gid, "consumer", "confluent-kafka (group.protocol=consumer)", [
            f"{a} joins, owns {ORDERS} 0-2 and commits {_fmt(committed)}",
            f"{a} leaves: the group is Empty (consumer type, offsets kept)"],
            {"group_type": "consumer", "state": "Empty", "members": [],
             "offsets": _offsets(committed)})

    def consumer_regex(self) -> None:
        """A KIP-848 member subscribed by regular expression (SubscribedTopicRegex): the
        coordinator resolves it and writes ConsumerGroupRegularExpression (type 16). Not in
        :data:`SCENARIOS` (the bundled kafka-* samples predate it): the rolling upgrade runs it
        on every release from 4.0 on."""
        gid = self.group("regex")
        a = f"{gid}-1"
        pattern = "^wl-(orders|events)$"
        self._confluent(a, gid, "consumer", topics=(pattern,))
        everything = _all(ORDERS) | {(EVENTS, p) for p in range(TOPICS[EVENTS])}
        self.wait_group(gid, ConsumerGroupState.STABLE, {a}, everything)
        committed = self.commit_assigned(a, 4, "regex")
        self._record("consumer-regex", gid, "consumer", "confluent-kafka (group.protocol=consumer)", [
            f"{a} joins subscribed to the regex {pattern}: the coordinator resolves it to "
            f"{ORDERS} and {EVENTS}; it owns their 5 partitions and commits {_fmt(committed)}"],
            {"group_type": "consumer", "state": "Stable", "members": [a],
             "offsets": _offsets(committed)})

    def transactions(self) -> None:
        """send_offsets_to_transaction: one transaction committed, one aborted."""
        gid = self.group("txn")
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": gid,
                             "group.protocol": "classic", "enable.auto.commit": False})
        producer = Producer({"bootstrap.servers": self.bootstrap,
                             "transactional.id": f"{gid}-producer"})
        committed = {(ORDERS, 0): 5, (ORDERS, 1): 6}
        aborted = {(ORDERS, 1): 77, (ORDERS, 2): 88}
        try:
            metadata = consumer.consumer_group_metadata()
            producer.init_transactions(30)
            for offsets, end in ((committed, producer.commit_transaction),
                                 (aborted, producer.abort_transaction)):
                producer.begin_transaction()
                producer.produce(ORDERS, value=b"in-transaction", partition=0)
                producer.send_offsets_to_transaction(
                    [CkTopicPartition(t, p, o) for (t, p), o in sorted(offsets.items())],
                    metadata, 30)
                producer.flush(30)
                end(30)
        finally:
            consumer.close()
        self._record("transactions", gid, "classic (simple group)", "confluent-kafka Producer (transactional.id)", [
            f"a transactional producer sends {_fmt(committed)} for {gid} with "
            "send_offsets_to_transaction and commits",
            f"a second transaction sends {_fmt(aborted)} and aborts",
            f"{gid} has no members: a simple classic group created by the offset commits"],
            {"group_type": "classic", "state": "Empty", "members": [], "simple": True,
             "offsets": _offsets(committed),
             "aborted": _offsets(aborted),
             "absent": _offsets({k: v for k, v in aborted.items() if k not in committed})})

    def offset_deletion(self) -> None:
        """A classic group commits offsets of two topics; after it empties, some are deleted."""
        gid = self.group("offdel")
        a = f"{gid}-1"
        self._confluent(a, gid, "classic")
        self.wait_group(gid, ConsumerGroupState.STABLE, {a}, _all(ORDERS))
        committed = {**{(ORDERS, p): 10 + p for p in range(3)},
                     **{(EVENTS, p): 20 + p for p in range(2)}}
        self.commit(a, committed, "offdel")
        self._stop(a)
        self.wait_group(gid, ConsumerGroupState.EMPTY, set())
        deleted = [(EVENTS, 0), (EVENTS, 1), (ORDERS, 2)]
        # confluent-kafka 2.16 has no binding for DeleteConsumerGroupOffsets (OffsetDelete, API
        # 47); kafka-python's admin client sends it.
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap)
        try:
            errors = admin.delete_group_offsets(gid, [KpTopicPartition(t, p) for t, p in deleted])
        finally:
            admin.close()
        bad = {tp: err for tp, err in errors.items() if err.__name__ != "NoError"}
        if bad:
            raise WorkloadError(f"offset deletion failed: {bad}")
        kept = {k: v for k, v in committed.items() if k not in deleted}
        self._record("offset-deletion", gid, "classic", "confluent-kafka classic + kafka-python admin", [
            f"{a} joins (subscribed to {ORDERS}) and commits {_fmt(committed)}",
            f"{a} leaves: the group is Empty",
            f"OffsetDelete (kafka-python delete_group_offsets) of {deleted}: offset tombstones"],
            {"group_type": "classic", "state": "Empty", "members": [],
             "offsets": _offsets(kept), "absent": _offsets({k: committed[k] for k in deleted})})

    def group_deletion(self) -> None:
        """A classic and a consumer group commit, empty, and are deleted (DeleteGroups)."""
        classic, modern = self.group("deleted-classic"), self.group("deleted-consumer")
        a, b = f"{classic}-1", f"{modern}-1"
        self._kafka_python(a, classic)
        self._confluent(b, modern, "consumer")
        self.wait_group(classic, ConsumerGroupState.STABLE, {a}, _all(ORDERS))
        self.wait_group(modern, ConsumerGroupState.STABLE, {b}, _all(ORDERS))
        committed_a = self.commit_assigned(a, 11, "to-delete")
        committed_b = self.commit_assigned(b, 12, "to-delete")
        self._stop(a)
        self._stop(b)
        self.wait_group(classic, ConsumerGroupState.EMPTY, set())
        self.wait_group(modern, ConsumerGroupState.EMPTY, set())
        for future in self.admin.delete_consumer_groups([classic, modern],
                                                        request_timeout=15).values():
            future.result()
        for gid, client, committed in ((classic, "kafka-python", committed_a),
                                       (modern, "confluent-kafka (group.protocol=consumer)",
                                        committed_b)):
            self._record("group-deletion", gid, "classic" if gid == classic else "consumer",
                         client + " + confluent-kafka delete_consumer_groups", [
                             f"one member joins, commits {_fmt(committed)} and leaves",
                             "DeleteGroups: offset tombstones, then the group's tombstones"],
                         {"deleted": True, "absent": _offsets(committed)})

    def conversion(self) -> None:
        """classic -> consumer (online upgrade) -> classic (online downgrade)."""
        gid = self.group("convert")
        a, b, k = f"{gid}-classic-1", f"{gid}-classic-2", f"{gid}-consumer"
        self._kafka_python(a, gid)
        self._confluent(b, gid, "classic")
        self.wait_group(gid, ConsumerGroupState.STABLE, {a, b}, _all(ORDERS))
        first = self.commit_assigned(a, 13, "classic-phase")
        self._confluent(k, gid, "consumer")
        self.wait_group(gid, ConsumerGroupState.STABLE, {a, b, k}, _all(ORDERS),
                        group_type=ConsumerGroupType.CONSUMER)
        owned_k = self.assignment(k)
        second = self.commit_assigned(k, 14, "consumer-phase") if owned_k else {}
        self._stop(k)
        self.wait_group(gid, ConsumerGroupState.STABLE, {a, b}, _all(ORDERS),
                        group_type=ConsumerGroupType.CLASSIC)
        third = self.commit_assigned(b, 15, "classic-again")
        self._record("conversion", gid, "classic -> consumer -> classic",
                     "kafka-python + confluent-kafka classic, confluent-kafka consumer", [
                         f"{a} (kafka-python) and {b} (confluent classic) form a classic group "
                         "(range assignor)",
                         f"{a} commits {_fmt(first)}",
                         f"{k} joins with group.protocol=consumer: online upgrade "
                         "(GroupMetadata tombstone, consumer-group records for the classic "
                         "members)",
                         f"{k} owns {owned_k} and commits {_fmt(second)}",
                         f"{k} leaves: the last consumer-protocol member, online downgrade "
                         "(consumer tombstones, GroupMetadata) and a classic rebalance",
                         f"{b} commits {_fmt(third)}; both classic members stay"],
                     {"group_type": "classic", "state": "Stable", "members": sorted([a, b]),
                      "offsets": _offsets({**first, **second, **third})})

    def share_group(self) -> None:
        """KIP-932 share group: two share consumers fetch (acquire) records and stay."""
        gid = self.group("share")
        a, b = f"{gid}-1", f"{gid}-2"
        # A share group starts at the latest offset unless told otherwise (group config).
        self.set_group_config(gid, share_auto_offset_reset="earliest")
        self._share(a, gid)
        self._share(b, gid)
        wait_until(f"{gid} members to receive records",
                   lambda: self.members[a].received + self.members[b].received
                   >= MESSAGES_PER_PARTITION * TOPICS[ORDERS])
        self._record("share-group", gid, "share", "confluent-kafka ShareConsumer", [
            f"{a} and {b} join (ShareGroupHeartbeat), subscribed to {ORDERS}",
            "group config share.auto.offset.reset=earliest",
            f"they poll and acknowledge (implicit mode) all {MESSAGES_PER_PARTITION * 3} records "
            f"of {ORDERS}; the share-partition state goes to __share_group_state, not "
            "__consumer_offsets",
            "both stay until the snapshot"],
            {"group_type": "share", "state": "Stable", "members": sorted([a, b]), "offsets": {}})

    # -- settling ------------------------------------------------------------------------------

    def wait_settled(self, quiet_s: float = 1.5, timeout_s: float = SETTLE_TIMEOUT_S) -> None:
        """Until every listed classic/consumer group is Stable or Empty, with every member's
        assignment equal to its target, and ``__consumer_offsets`` has not grown for
        ``quiet_s``."""
        deadline = time.monotonic() + timeout_s
        last_ends, quiet_since = None, time.monotonic()
        while True:
            ends = offsets_end_offsets(self.bootstrap)
            settled = self._groups_settled()
            now = time.monotonic()
            if ends != last_ends or not settled:
                last_ends, quiet_since = ends, now
            elif now - quiet_since >= quiet_s:
                return
            if now > deadline:
                raise WorkloadError(f"groups did not settle in {timeout_s:.0f} s "
                                    f"(ends {ends}, settled {settled})")
            time.sleep(0.25)

    def _groups_settled(self) -> bool:
        listed = self.admin.list_consumer_groups(request_timeout=10).result().valid
        ids = [g.group_id for g in listed if g.type.name in ("CLASSIC", "CONSUMER")]
        if not ids:
            return True
        for future in self.admin.describe_consumer_groups(ids, request_timeout=10).values():
            d = future.result()
            if d.state not in (ConsumerGroupState.STABLE, ConsumerGroupState.EMPTY):
                return False
            for m in d.members:
                if m.target_assignment is not None and \
                        _tps(m.target_assignment) != _tps(m.assignment):
                    return False
        return True


def offsets_end_offsets(bootstrap: str) -> tuple[int, ...]:
    """High watermarks of every ``__consumer_offsets`` partition."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "offsetlake-watermarks",
                         "enable.auto.commit": False})
    try:
        meta = consumer.list_topics("__consumer_offsets", timeout=10)
        partitions = sorted(meta.topics["__consumer_offsets"].partitions)
        return tuple(consumer.get_watermark_offsets(CkTopicPartition("__consumer_offsets", p),
                                                    timeout=10)[1] for p in partitions)
    finally:
        consumer.close()


def _tps(assignment) -> set[tuple[str, int]]:
    return {(tp.topic, tp.partition) for tp in assignment.topic_partitions}


def _all(topic: str) -> set[tuple[str, int]]:
    return {(topic, p) for p in range(TOPICS[topic])}


def _fmt(offsets: dict[tuple[str, int], int]) -> str:
    return ", ".join(f"{t}-{p}@{o}" for (t, p), o in sorted(offsets.items())) or "nothing"


def _offsets(offsets: dict[tuple[str, int], int]) -> dict[str, int]:
    """JSON-friendly {"topic-partition": offset}."""
    return {f"{t}-{p}": o for (t, p), o in sorted(offsets.items())}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m tests.integration.workloads BOOTSTRAP", file=sys.stderr)
        return 2
    with Workloads(args[0]) as wl:
        wl.run_all()
        wl.wait_settled()
        print(json.dumps({"scenarios": wl.scenarios, "seconds": wl.timings}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

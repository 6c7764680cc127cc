"""A series of snapshots of one broker's ``__consumer_offsets`` with the log cleaner compacting it.

    series = take_compaction_series(tmp_path, count=6)
    series.snapshots        # snapshot-00 ... snapshot-05, oldest first
    series.steps[i]         # what the workload did before snapshot i

    python -m tests.integration.compaction_series OUT_DIR [--count N]

One KRaft broker (:class:`tests.integration.kafka_broker.KafkaBroker`) runs with the cleaner on
(:data:`CLEANER_SETTINGS`): ``__consumer_offsets`` segments roll after :data:`SEGMENT_MS`, any dirty
byte makes a partition cleanable, and a tombstone lives :data:`DELETE_RETENTION_MS` after the pass
that first kept it. Each step then

1. runs a small workload (:func:`run_step`): a simple group per offsets partition commits
   three partitions of ``cs-ledger`` in one batch, two of which the next step commits again
   (:func:`ledger_partitions`: the next snapshot holds that batch with its first and last
   record compacted away); a classic group (kafka-python) and a KIP-848 ``consumer``-protocol
   group (confluent-kafka) each get a member that joins, commits and leaves (the older commits
   and group records become compactable, the KIP-848 member's records become tombstones); a
   "doomed" group commits (simple commits on even steps, a KIP-848 member on odd ones); last,
   the previous step's doomed group is deleted (DeleteGroups: offset and group tombstones),
   and the step waits until its groups are Empty (their leaves written);
2. waits until nothing is appended, and until every delete horizon stamped in the previous
   snapshot has passed (read from that snapshot's batch headers);
3. rolls every partition's active segment (waits ``segment.ms`` after its first batch, then
   commits one "roll" offset per partition: the append rolls it), so that everything the step
   wrote is in a rolled, cleanable segment (rolled again should anything but the roll commit
   land in the new active segment);
4. waits until the broker's ``cleaner-offset-checkpoint`` says every partition is cleaned up to
   its new active segment: a cleaning pass that started after the roll has recopied the whole
   log, dropping every record a newer one replaced and every tombstone whose horizon has passed
   (that is why step 2 waits for them), and stamping the newer tombstones with their horizon;
5. copies the partition directories (:func:`snapshot_log_dirs`) and ``meta.properties``.

So between consecutive snapshots new records are appended, older commits of re-committed keys
are gone, and every tombstone of the earlier snapshot is gone; below its active segment each
snapshot holds every key once.

Consistency of a copy. The copy is taken while the broker runs. Stopping it for each copy and
restarting it on the same storage would also give consistent files, but costs seconds of JVM
start a step on two busy cores, reloads the coordinators (their groups' state comes back from the
log) and keeps the clients reconnecting: not what a capture of a live cluster sees. Nothing
appends at the moment of the copy (step 2) and the cleaner has nothing dirty left (step 4), so the
files are at rest; a copy is still checked rather than trusted, because the cleaner swaps segments
by renaming ``.cleaned`` -> ``.swap``, the replaced ``.log`` files -> ``.deleted`` and the
``.swap`` -> ``.log``, and a copy made across a swap may lack a range or hold it twice. A copy
counts only when, before and after it, no ``.cleaned``/``.swap`` file exists and every ``.log``
file has the same name, inode, size and modification time; otherwise it is made again
(:func:`copy_snapshot`, a bounded number of attempts). The copy's active segments must then hold
the roll commits only (nothing was written after the cleaning), or the step rolls, cleans and
copies again.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from .kafka_broker import OFFSETS_PARTITIONS, OFFSETS_TOPIC, KafkaBroker, snapshot_log_dirs

SEGMENT_MS = 1000            # log.roll.ms: the default segment.ms of __consumer_offsets
DELETE_RETENTION_MS = 1500   # log.cleaner.delete.retention.ms: a kept tombstone's lifetime
CLEANER_SETTINGS = {
    "log.cleaner.enable": "true",
    "log.cleaner.threads": "1",
    "log.cleaner.backoff.ms": "500",
    # cleanable when more than 1 % of the bytes are dirty: every step writes far more
    "log.cleaner.min.cleanable.ratio": "0.01",
    "log.cleaner.min.compaction.lag.ms": "0",
    "log.cleaner.delete.retention.ms": str(DELETE_RETENTION_MS),
    # 16 MiB offset map instead of 128 MiB of the broker's 768 MiB heap (~700 000 keys)
    "log.cleaner.dedupe.buffer.size": str(16 * 1024 * 1024),
    "log.roll.ms": str(SEGMENT_MS),
    # the active segment's indexes are preallocated at this size (10 MiB by default) and copied
    # with every snapshot; a 1 MiB segment needs at most 256 entries
    "log.index.size.max.bytes": str(64 * 1024),
}
# What the __consumer_offsets topic must report (describe_configs) for the series to mean what
# it says; the broker settings above give them (no topic override is needed).
EXPECTED_TOPIC_CONFIGS = {
    "cleanup.policy": "compact",
    "segment.ms": str(SEGMENT_MS),
    "delete.retention.ms": str(DELETE_RETENTION_MS),
    "min.cleanable.dirty.ratio": "0.01",
    "min.compaction.lag.ms": "0",
}

TOPIC = "cs-orders"           # what the members subscribe to
TOPIC_PARTITIONS = 3
LEDGER = "cs-ledger"          # what the steady groups commit: count + 2 partitions

CLEANER_CHECKPOINT = "cleaner-offset-checkpoint"
META_PROPERTIES = "meta.properties"
SERIES_JSON = "series.json"
BROKER_PID = "broker.pid"    # written by main(): the broker to kill should its child hang
SERIES_TIMEOUT_S = 600.0     # a series takes 1-2 min on two busy cores
EXIT_GRACE_S = 30.0          # a child that said it is done has this long to exit
DONE_LINE = "cluster id "    # main's last line, printed once the series is written
WAIT_S = 45.0
COPY_ATTEMPTS = 20
CLEANED_LINE = re.compile(r"Log cleaner thread \d+ cleaned log "
                          + re.escape(OFFSETS_TOPIC) + r"-(\d+) \(dirty section = \[(\d+), (\d+)\]\)")


def _retriable() -> set[int]:
    from confluent_kafka import KafkaError

    return {KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
            KafkaError.COORDINATOR_NOT_AVAILABLE}


def ledger_partitions(step: int) -> tuple[int, int, int]:
    """The partitions of :data:`LEDGER` the steady groups commit in ``step``, in one batch:
    0 (again every step), ``step + 1`` (committed by no later step) and ``step + 2`` (again by
    the next step). After the next step that batch holds its middle record only."""
    return 0, step + 1, step + 2


def committed_offset(step: int, partition: int) -> int:
    """The offset a step commits for a partition (any group, any topic)."""
    return 100 * (step + 1) + partition


class SeriesError(RuntimeError):
    """The broker, its cleaner or a copy did not do what the series needs in time."""


@dataclass(frozen=True)
class Step:
    """What happened before snapshot ``index`` was copied."""
    index: int
    snapshot: Path
    # every offset commit the workload made, (group, topic, partition) -> committed offset;
    # the roll commits are in ``roll_commits``
    commits: dict[tuple[str, str, int], int]
    joined: dict[str, str]              # group -> protocol of the member that joined and left
    deleted_groups: tuple[str, ...]     # DeleteGroups, the step's last workload action
    roll_commits: dict[tuple[str, str, int], int]
    horizon_waited_ms: int | None       # the newest delete horizon of the previous snapshot
    rolled_at_ms: int                   # wall clock before the roll commits: the pass that
                                        # cleaned up to active_base started after it
    active_base: dict[int, int]         # partition -> base offset of its active segment
    cleaner_checkpoint: dict[int, int]  # partition -> cleaner-offset-checkpoint at the copy
    copy_attempts: int
    seconds: float


@dataclass(frozen=True)
class CompactionSeries:
    snapshots: tuple[Path, ...]         # oldest first
    cluster_id: str
    steps: tuple[Step, ...]
    groups: dict[str, int]              # every group the workload used -> its offsets partition
    steady_groups: dict[int, str]       # offsets partition -> the simple group re-committing
    roll_groups: dict[int, str]         # offsets partition -> the group whose commit rolls it
    settings: dict[str, str]            # broker settings on top of the harness's
    topic_configs: dict[str, str]       # __consumer_offsets' configs as the broker described them
    cleaner_passes: dict[int, list[tuple[int, int]]]   # partition -> dirty sections cleaned
    server_log: Path
    seconds: float = 0.0

    def to_json(self) -> str:
        def plain(value):
            if isinstance(value, Path):
                return str(value)
            if isinstance(value, dict):
                return {(",".join(map(str, k)) if isinstance(k, tuple) else str(k)): plain(v)
                        for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [plain(v) for v in value]
            return value
        return json.dumps(plain(asdict(self)), indent=2)

    @classmethod
    def from_json(cls, text: str) -> CompactionSeries:
        """The inverse of :meth:`to_json`."""
        raw = json.loads(text)

        def commits(found: dict[str, int]) -> dict[tuple[str, str, int], int]:
            keyed = {}
            for key, offset in found.items():
                group, topic, partition = key.rsplit(",", 2)
                keyed[(group, topic, int(partition))] = offset
            return keyed

        def by_partition(found: dict[str, object]) -> dict[int, object]:
            return {int(p): v for p, v in found.items()}

        steps = tuple(Step(
            index=s["index"], snapshot=Path(s["snapshot"]), commits=commits(s["commits"]),
            joined=s["joined"], deleted_groups=tuple(s["deleted_groups"]),
            roll_commits=commits(s["roll_commits"]), horizon_waited_ms=s["horizon_waited_ms"],
            rolled_at_ms=s["rolled_at_ms"], active_base=by_partition(s["active_base"]),
            cleaner_checkpoint=by_partition(s["cleaner_checkpoint"]),
            copy_attempts=s["copy_attempts"], seconds=s["seconds"]) for s in raw["steps"])
        return cls(
            snapshots=tuple(Path(p) for p in raw["snapshots"]), cluster_id=raw["cluster_id"],
            steps=steps, groups=raw["groups"], steady_groups=by_partition(raw["steady_groups"]),
            roll_groups=by_partition(raw["roll_groups"]), settings=raw["settings"],
            topic_configs=raw["topic_configs"],
            cleaner_passes={p: [tuple(section) for section in sections]
                            for p, sections in by_partition(raw["cleaner_passes"]).items()},
            server_log=Path(raw["server_log"]), seconds=raw["seconds"])


# -- where a group's records go --------------------------------------------------------------------

def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units), as a signed 32-bit int."""
    data = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i:i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def offsets_partition(group_id: str, partitions: int = OFFSETS_PARTITIONS) -> int:
    """The ``__consumer_offsets`` partition of a group: ``Utils.abs(groupId.hashCode()) % n``
    (Utils.abs maps Integer.MIN_VALUE to 0)."""
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def group_on(prefix: str, partition: int) -> str:
    """The first of ``prefix-0``, ``prefix-1``, ... whose records go to ``partition``."""
    n = 0
    while offsets_partition(f"{prefix}-{n}") != partition:
        n += 1
    return f"{prefix}-{n}"


# -- the broker's files -----------------------------------------------------------------------------

def now_ms() -> int:
    return time.time_ns() // 1_000_000


def _wait(what: str, check, broker: KafkaBroker, timeout_s: float = WAIT_S, interval_s: float = 0.1):
    """:func:`.workloads.wait_until`, its timeout a :class:`SeriesError` with the broker's cleaner
    lines."""
    from .workloads import WorkloadError, wait_until

    try:
        return wait_until(what, check, timeout_s, interval_s)
    except WorkloadError as exc:
        raise SeriesError(f"{exc}\ncleaner lines of the broker log:\n"
                          f"{cleaner_log_tail(broker)}") from exc


def cleaner_log_tail(broker: KafkaBroker, lines: int = 25) -> str:
    if not broker.server_log.exists():
        return "(no broker log)"
    found = [line for line in broker.server_log.read_text(errors="replace").splitlines()
             if "LogCleaner" in line or "Cleaner" in line or "cleaned log" in line]
    return "\n".join(found[-lines:]) or "(no cleaner line at all)"


def cleaner_passes(server_log: Path) -> dict[int, list[tuple[int, int]]]:
    """The dirty sections ``[from, to]`` the cleaner reported cleaning, by partition
    ("Log cleaner thread N cleaned log __consumer_offsets-P (dirty section = [a, b])")."""
    passes: dict[int, list[tuple[int, int]]] = {p: [] for p in range(OFFSETS_PARTITIONS)}
    for match in CLEANED_LINE.finditer(server_log.read_text(errors="replace")):
        passes.setdefault(int(match.group(1)), []).append((int(match.group(2)), int(match.group(3))))
    return passes


def read_cleaner_checkpoint(data_dir: Path) -> dict[int, int]:
    """``__consumer_offsets`` partitions of the log dir's ``cleaner-offset-checkpoint``
    (version line, count line, then ``topic partition offset`` lines)."""
    path = data_dir / CLEANER_CHECKPOINT
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return {}
    out = {}
    for line in lines[2:]:
        parts = line.split()
        if len(parts) == 3 and parts[0] == OFFSETS_TOPIC:
            out[int(parts[1])] = int(parts[2])
    return out


def _segment_logs(partition_dir: Path) -> dict[int, Path]:
    return {int(p.name[:-4]): p for p in partition_dir.glob("*.log") if p.name[:-4].isdigit()}


def active_segment(broker: KafkaBroker, partition: int) -> tuple[int, Path]:
    """(base offset, path) of a partition's active segment: its newest ``.log`` file."""
    logs = _segment_logs(broker.data_dir / f"{OFFSETS_TOPIC}-{partition}")
    if not logs:
        raise SeriesError(f"{OFFSETS_TOPIC}-{partition} has no segment")
    base = max(logs)
    return base, logs[base]


def first_batch_timestamp(segment: Path) -> int | None:
    """The max timestamp of a segment's first batch: what Kafka's time-based roll counts from
    (LogSegment.rollingBasedTimestamp); None for an empty segment."""
    from decoders.log import RecordBatch, iter_segment

    for item in iter_segment(segment):
        return item.max_timestamp if isinstance(item, RecordBatch) else None
    return None


def newest_delete_horizon(snapshot: Path) -> int | None:
    """The latest delete horizon a batch of ``snapshot`` carries (None if none carries one)."""
    from decoders.log import RecordBatch, iter_segment, list_segments

    horizons = [item.delete_horizon_ms for seg in list_segments(snapshot)
                for item in iter_segment(seg.path)
                if isinstance(item, RecordBatch) and item.delete_horizon_ms is not None]
    return max(horizons, default=None)


def _listing(broker: KafkaBroker) -> tuple[dict[str, tuple[int, int, int]], list[str]]:
    """(``.log`` files -> (inode, size, mtime_ns), in-flight cleaner files) of the offsets
    partitions."""
    logs, in_flight = {}, []
    for directory in broker.partition_dirs():
        for entry in os.scandir(directory):
            name = f"{directory.name}/{entry.name}"
            if entry.name.endswith((".cleaned", ".swap")):
                in_flight.append(name)
            elif entry.name.endswith(".log"):
                try:
                    st = entry.stat()
                except FileNotFoundError:
                    in_flight.append(name)
                    continue
                logs[name] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return logs, in_flight


def copy_snapshot(broker: KafkaBroker, dest: Path, attempts: int = COPY_ATTEMPTS) -> int:
    """Copy the offsets partitions (:func:`snapshot_log_dirs`) and ``meta.properties`` into
    ``dest``, again until the copy is consistent (module docstring); returns the attempts."""
    last = ""
    for attempt in range(1, attempts + 1):
        before, in_flight = _listing(broker)
        if in_flight:
            last = f"cleaner files in flight: {in_flight}"
            time.sleep(0.2)
            continue
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        try:
            snapshot_log_dirs(broker, dest)
        except FileNotFoundError as exc:          # a file renamed or deleted under the copy
            last = f"vanished during the copy: {exc}"
            continue
        after, in_flight = _listing(broker)
        if after == before and not in_flight:
            shutil.copy2(broker.data_dir / META_PROPERTIES, dest / META_PROPERTIES)
            return attempt
        changed = sorted(set(before.items()) ^ set(after.items()))
        last = f"changed during the copy: {changed[:6]} in flight {in_flight}"
        time.sleep(0.2)
    raise SeriesError(f"no consistent copy of {OFFSETS_TOPIC} in {attempts} attempts ({last})")


# -- the workload ----------------------------------------------------------------------------------

class Clients:
    """The admin client and the helpers a step uses."""

    def __init__(self, bootstrap: str):
        from confluent_kafka.admin import AdminClient

        self.bootstrap = bootstrap
        self.admin = AdminClient({"bootstrap.servers": bootstrap})

    def create_topics(self, topics: dict[str, int]) -> None:
        from confluent_kafka.admin import NewTopic

        for future in self.admin.create_topics([NewTopic(t, n, 1)
                                                for t, n in topics.items()]).values():
            future.result(timeout=30)
        deadline = time.monotonic() + 30
        while not set(topics) <= set(self.admin.list_topics(timeout=10).topics):
            if time.monotonic() > deadline:
                raise SeriesError(f"{sorted(topics)} have no metadata after 30 s")
            time.sleep(0.2)

    def simple_commit(self, group: str, offsets: dict[int, int],
                      topic: str = TOPIC) -> dict[tuple[str, str, int], int]:
        """A commit without a member (AlterConsumerGroupOffsets: OffsetCommit, generation -1):
        one batch of ``len(offsets)`` records. Retried while the coordinator is not ready."""
        from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException, TopicPartition

        request = [ConsumerGroupTopicPartitions(
            group, [TopicPartition(topic, p, o) for p, o in sorted(offsets.items())])]
        deadline = time.monotonic() + 30
        while True:
            try:
                result = self.admin.alter_consumer_group_offsets(request, request_timeout=10)[group] \
                    .result(timeout=15)
                failed = [tp for tp in result.topic_partitions if tp.error is not None]
                if not failed:
                    return {(group, topic, p): o for p, o in offsets.items()}
                error = failed
                if any(tp.error.code() not in _retriable() for tp in failed):
                    raise SeriesError(f"commit of {group} failed: {failed}")
            except KafkaException as exc:   # the offsets topic is being created or loaded
                error = exc
            if time.monotonic() > deadline:
                raise SeriesError(f"commit of {group} failed for 30 s: {error}")
            time.sleep(0.3)

    def classic_member(self, group: str, base: int) -> dict[tuple[str, str, int], int]:
        """A kafka-python member joins ``group`` (classic protocol), commits ``base + p`` for
        every partition and leaves (LeaveGroup)."""
        from kafka import KafkaConsumer, TopicPartition
        from kafka.structs import OffsetAndMetadata

        from .kafka_python_rejoin import guard_rejoin

        guard_rejoin()
        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, group_id=group,
                                 client_id=f"{group}-member", enable_auto_commit=False,
                                 auto_offset_reset="earliest", session_timeout_ms=6000,
                                 heartbeat_interval_ms=300)
        try:
            consumer.subscribe([TOPIC])
            deadline = time.monotonic() + 30
            while len(consumer.assignment()) < TOPIC_PARTITIONS:
                if time.monotonic() > deadline:
                    raise SeriesError(f"{group}: no assignment in 30 s")
                consumer.poll(timeout_ms=200)
            offsets = {p: base + p for p in range(TOPIC_PARTITIONS)}
            consumer.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(o, "classic", -1)
                             for p, o in offsets.items()})
        finally:
            consumer.close(autocommit=False)
        return {(group, TOPIC, p): o for p, o in offsets.items()}

    def consumer_member(self, group: str, base: int) -> dict[tuple[str, str, int], int]:
        """A confluent-kafka member joins ``group`` with the KIP-848 ``consumer`` protocol,
        commits ``base + p`` for every partition and leaves (heartbeat with epoch -1: the
        coordinator writes tombstones for the member's records)."""
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": group,
                             "group.protocol": "consumer", "client.id": f"{group}-member",
                             "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        try:
            consumer.subscribe([TOPIC])
            deadline = time.monotonic() + 30
            while len(consumer.assignment()) < TOPIC_PARTITIONS:
                if time.monotonic() > deadline:
                    raise SeriesError(f"{group}: no assignment in 30 s")
                consumer.poll(0.1)
            offsets = {p: base + p for p in range(TOPIC_PARTITIONS)}
            result = consumer.commit(offsets=[TopicPartition(TOPIC, p, o, "consumer")
                                              for p, o in offsets.items()], asynchronous=False)
            failed = [tp for tp in result or () if tp.error is not None]
            if failed:
                raise SeriesError(f"{group}: commit failed: {failed}")
        finally:
            consumer.close()
        return {(group, TOPIC, p): o for p, o in offsets.items()}

    def delete_groups(self, groups: list[str]) -> None:
        """DeleteGroups; retried while a group is not Empty yet (a member's leave in flight)
        or its coordinator is not ready."""
        from confluent_kafka import KafkaError, KafkaException

        retry = _retriable() | {KafkaError.NON_EMPTY_GROUP}
        pending, deadline = list(groups), time.monotonic() + 30
        while pending:
            failed = []
            for group, future in self.admin.delete_consumer_groups(pending,
                                                                   request_timeout=15).items():
                try:
                    future.result(timeout=20)
                except KafkaException as exc:
                    if exc.args[0].code() not in retry or time.monotonic() > deadline:
                        raise SeriesError(f"deleting {group} failed: {exc}") from exc
                    failed.append(group)
            pending = failed
            if pending:
                time.sleep(0.3)

    def wait_empty(self, groups: list[str], timeout_s: float = 30.0) -> None:
        """Until every group is Empty with no member: its members' leaves are written (the
        coordinator's describe reads committed state only)."""
        from confluent_kafka import ConsumerGroupState

        deadline, last = time.monotonic() + timeout_s, None
        while True:
            futures = self.admin.describe_consumer_groups(groups, request_timeout=10)
            try:
                last = {g: f.result(timeout=15) for g, f in futures.items()}
                if all(d.state == ConsumerGroupState.EMPTY and not d.members
                       for d in last.values()):
                    return
                last = {g: (d.state, len(d.members)) for g, d in last.items()}
            except Exception as exc:   # a describe during a rebalance may fail transiently
                last = exc
            if time.monotonic() > deadline:
                raise SeriesError(f"groups {groups} not Empty after {timeout_s:.0f} s: {last!r}")
            time.sleep(0.2)

    def topic_configs(self) -> dict[str, str]:
        from confluent_kafka.admin import ConfigResource, ResourceType

        resource = ConfigResource(ResourceType.TOPIC, OFFSETS_TOPIC)
        described = self.admin.describe_configs([resource], request_timeout=10)[resource] \
            .result(timeout=15)
        return {name: entry.value for name, entry in described.items()}


def doomed_group(step: int) -> str:
    return f"cs-doomed-{step}"


def run_step(clients: Clients, step: int, steady: dict[int, str]) -> dict:
    """The workload of one step (module docstring); returns what it did."""
    commits: dict[tuple[str, str, int], int] = {}
    joined: dict[str, str] = {}

    def offsets(shift: int, partitions=range(TOPIC_PARTITIONS)) -> dict[int, int]:
        return {p: committed_offset(step, p) + shift for p in partitions}
    for group in steady.values():
        commits.update(clients.simple_commit(group, offsets(0, ledger_partitions(step)), LEDGER))
    commits.update(clients.classic_member("cs-classic", committed_offset(step, 10)))
    joined["cs-classic"] = "classic"
    doomed = doomed_group(step)
    if step % 2:
        commits.update(clients.consumer_member(doomed, committed_offset(step, 30)))
        joined[doomed] = "consumer"
    else:
        commits.update(clients.simple_commit(doomed, offsets(30)))
    commits.update(clients.consumer_member("cs-consumer", committed_offset(step, 20)))
    joined["cs-consumer"] = "consumer"
    deleted = (doomed_group(step - 1),) if step else ()
    if deleted:
        clients.delete_groups(list(deleted))
    clients.wait_empty(sorted(joined))
    return {"commits": commits, "joined": joined, "deleted_groups": deleted}


# -- the series ------------------------------------------------------------------------------------

def _wait_quiet(broker: KafkaBroker, quiet_s: float = 0.6) -> None:
    """Until no partition's active segment has grown for ``quiet_s``."""
    state = {"last": None, "since": time.monotonic()}

    def quiet():
        now = [(base, path.stat().st_size) for base, path in
               (active_segment(broker, p) for p in range(OFFSETS_PARTITIONS))]
        if now != state["last"]:
            state["last"], state["since"] = now, time.monotonic()
        return time.monotonic() - state["since"] >= quiet_s
    _wait("__consumer_offsets to stop growing", quiet, broker)


def _foreign_records(segment: Path, roll_group: str) -> list[str]:
    """What a partition's active segment holds besides ``roll_group``'s commits."""
    from decoders import decode_record
    from decoders.log import RecordBatch, iter_segment

    foreign = []
    for item in iter_segment(segment):
        if not isinstance(item, RecordBatch):
            foreign.append(repr(item))
            continue
        for record in item.records:
            decoded = decode_record(record.key, None)
            if decoded.group_id != roll_group:
                foreign.append(f"{record.offset}: {decoded.type_name} {decoded.key}")
    return foreign


def _unsettled(snapshot: Path, bases: dict[int, int], roll_groups: dict[int, str]) -> dict:
    """What a copy holds beyond the cleaned state it was meant to catch: a newer active segment
    than ``bases`` or anything but roll commits in the active segment, by partition."""
    found = {}
    for p, base in bases.items():
        logs = _segment_logs(snapshot / f"{OFFSETS_TOPIC}-{p}")
        newest = max(logs, default=None)
        if newest != base:
            found[p] = [f"active segment {newest}, not {base}"]
        elif records := _foreign_records(logs[base], roll_groups[p]):
            found[p] = records
    return found


def _roll(broker: KafkaBroker, clients: Clients, step: int, roll_groups: dict[int, str],
          partitions: set[int]) -> dict:
    """Roll the active segment of ``partitions``: wait ``segment.ms`` after its first batch, then
    append one roll commit (again if the append did not roll it)."""
    before = {p: active_segment(broker, p)[0] for p in partitions}
    pending, rolls = set(partitions), {}
    deadline = time.monotonic() + WAIT_S
    while pending:
        for p in sorted(pending):
            first = first_batch_timestamp(active_segment(broker, p)[1])
            if first is not None:
                delay_ms = first + SEGMENT_MS + 20 - now_ms()
                if delay_ms > 0:
                    time.sleep(delay_ms / 1000)
        for p in sorted(pending):
            rolls.update(clients.simple_commit(roll_groups[p], {0: step}))
        pending = {p for p in pending if active_segment(broker, p)[0] == before[p]}
        if pending and time.monotonic() > deadline:
            raise SeriesError(f"partitions {sorted(pending)} did not roll in {WAIT_S:.0f} s")
    return rolls


def _roll_and_clean(broker: KafkaBroker, clients: Clients, step: int,
                    roll_groups: dict[int, str]) -> tuple[int, dict, dict[int, int], dict[int, int]]:
    """Roll every partition's active segment and wait until the cleaner has cleaned up to it;
    again for a partition whose new active segment holds more than the roll commit (a write
    that came late). Returns (rolled_at_ms, roll commits, active bases, checkpoint)."""
    rolled_at, rolls = now_ms(), {}
    partitions = set(range(OFFSETS_PARTITIONS))
    for _ in range(3):
        rolls.update(_roll(broker, clients, step, roll_groups, partitions))
        bases = {p: active_segment(broker, p)[0] for p in range(OFFSETS_PARTITIONS)}

        def cleaned(bases=bases):
            checkpoint = read_cleaner_checkpoint(broker.data_dir)
            done = all(checkpoint.get(p, -1) >= bases[p] for p in bases)
            return checkpoint if done else None
        try:
            checkpoint = _wait(f"the cleaner to clean up to the active segments {bases}", cleaned,
                               broker)
        except SeriesError as exc:
            raise SeriesError(f"{exc}\ncheckpoint: {read_cleaner_checkpoint(broker.data_dir)}") \
                from None
        foreign = {p: _foreign_records(active_segment(broker, p)[1], roll_groups[p])
                   for p in range(OFFSETS_PARTITIONS)}
        partitions = {p for p, found in foreign.items() if found}
        if not partitions:
            return rolled_at, rolls, bases, checkpoint
    raise SeriesError(f"writes keep arriving after the workload: {foreign}")


def take_compaction_series(work_dir: str | os.PathLike, count: int = 6, *,
                           broker: KafkaBroker | None = None, log=print) -> CompactionSeries:
    """Take ``count`` snapshots (``work_dir/snapshot-NN``) of one broker's ``__consumer_offsets``
    with the cleaner compacting it between them (module docstring); writes
    ``work_dir/series.json``. ``broker``: a running broker started with
    :data:`CLEANER_SETTINGS` among its overrides (left running); default: one started in
    ``work_dir/broker`` and stopped at the end."""
    if count < 2:
        raise ValueError("a series needs at least two snapshots")
    began = time.monotonic()
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    own = broker is None
    if own:
        broker = KafkaBroker(work_dir / "broker", overrides=CLEANER_SETTINGS)
        broker.start()
    else:
        wrong = {k: broker.properties.get(k) for k, v in CLEANER_SETTINGS.items()
                 if broker.properties.get(k) != v}
        if wrong:
            raise SeriesError(f"the broker does not run with the cleaner settings: {wrong}")
    clients = None
    try:
        clients = Clients(broker.bootstrap_server)
        described_id = clients.admin.describe_cluster(request_timeout=10).result(timeout=15) \
            .cluster_id
        if described_id != broker.cluster_id:
            raise SeriesError(f"the broker describes cluster {described_id}, formatted "
                              f"{broker.cluster_id}")
        clients.create_topics({TOPIC: TOPIC_PARTITIONS, LEDGER: count + 2})
        steady = {p: group_on("cs-steady", p) for p in range(OFFSETS_PARTITIONS)}
        roll_groups = {p: group_on("cs-roll", p) for p in range(OFFSETS_PARTITIONS)}
        groups: dict[str, int] = {}
        steps: list[Step] = []
        for index in range(count):
            step_began = time.monotonic()
            did = run_step(clients, index, steady)
            _wait_quiet(broker)
            horizon = newest_delete_horizon(steps[-1].snapshot) if steps else None
            if horizon is not None and horizon + 20 > now_ms():
                time.sleep((horizon + 20 - now_ms()) / 1000)
            dest = work_dir / f"snapshot-{index:02d}"
            rolled_at, rolls, attempts = None, {}, 0
            for _ in range(3):
                # again should a write land after the cleaning and before the copy: the copy's
                # active segments must hold roll commits only
                at, rolled, bases, checkpoint = _roll_and_clean(broker, clients, index, roll_groups)
                rolled_at, rolls = rolled_at or at, {**rolls, **rolled}
                attempts += copy_snapshot(broker, dest)
                foreign = _unsettled(dest, bases, roll_groups)
                if not foreign:
                    break
            else:
                raise SeriesError(f"snapshot {index}: writes after the cleaning: {foreign}")
            for group, *_ in list(did["commits"]) + list(rolls):
                groups[group] = offsets_partition(group)
            steps.append(Step(index, dest, did["commits"], did["joined"], did["deleted_groups"],
                              rolls, horizon, rolled_at, bases, checkpoint, attempts,
                              round(time.monotonic() - step_began, 2)))
            log(f"snapshot {index}: active segments {bases}, cleaned up to {checkpoint}, "
                f"copy attempts {attempts}, {time.monotonic() - step_began:.1f} s")
        topic_configs = clients.topic_configs()
        passes = cleaner_passes(broker.server_log)
        series = CompactionSeries(
            snapshots=tuple(s.snapshot for s in steps), cluster_id=broker.cluster_id,
            steps=tuple(steps), groups=groups, steady_groups=steady, roll_groups=roll_groups,
            settings=dict(CLEANER_SETTINGS), topic_configs=topic_configs,
            cleaner_passes=passes, server_log=broker.server_log,
            seconds=round(time.monotonic() - began, 1))
        uncleaned = [p for p in range(OFFSETS_PARTITIONS) if not passes.get(p)]
        if uncleaned:
            raise SeriesError(f"the broker log shows no cleaning of partitions {uncleaned}:\n"
                              f"{cleaner_log_tail(broker)}")
        (work_dir / SERIES_JSON).write_text(series.to_json())
        return series
    except BaseException:
        log(f"broker log tail:\n{broker.log_tail()}")
        raise
    finally:
        clients = None   # the admin client's handle goes before its broker (no reconnect noise)
        if own:
            broker.stop()


def summary(series: CompactionSeries) -> list[str]:
    """One line per snapshot: records, tombstones, what left since the previous one."""
    from decoders.log import RecordBatch, iter_segment, list_segments

    lines, previous = [], None
    for step in series.steps:
        records = {}
        for seg in list_segments(step.snapshot):
            for item in iter_segment(seg.path):
                if isinstance(item, RecordBatch):
                    for r in item.records:
                        records[(seg.partition, r.offset)] = r.is_tombstone
        line = (f"snapshot {step.index}: {len(records)} records "
                f"({sum(records.values())} tombstones)")
        if previous is not None:
            gone = [k for k in previous if k not in records]
            line += (f", {len(records.keys() - previous.keys())} new, {len(gone)} gone "
                     f"({sum(previous[k] for k in gone)} tombstones)")
        lines.append(line)
        previous = records
    return lines


def take_in_child(work_dir: str | os.PathLike, count: int = 6, *,
                  timeout_s: float = SERIES_TIMEOUT_S, attempts: int = 2) -> CompactionSeries:
    """:func:`main` in a child process with a broker of its own, then the series it wrote.

    The clients a series uses (confluent-kafka's librdkafka handles, kafka-python's threads)
    live and die in the child, not in the test session: a handle whose teardown never returns
    once cost a CI run its whole time limit, the test session waiting on it for an hour. Here it
    costs at most ``timeout_s``: the child's process group and its broker are killed, and the
    series is kept when the child had written it before it hung, taken again otherwise (up to
    ``attempts`` times). Each attempt works in ``work_dir/attempt-N``."""
    root = Path(__file__).resolve().parents[2]
    failures = []
    for attempt in range(1, attempts + 1):
        out = Path(work_dir) / f"attempt-{attempt}"
        out.mkdir(parents=True)
        began = time.monotonic()
        with (out / "series.log").open("wb") as log:
            child = subprocess.Popen(
                [sys.executable, "-m", "tests.integration.compaction_series", str(out), "--count", str(count)],
                cwd=root, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True)
            rc = _wait_for_child(child, out, began + timeout_s)
            if rc is None:
                _kill_group(child.pid)
                child.wait(timeout=30)
                _kill_group(_broker_pid(out))
        output = (out / "series.log").read_text(errors="replace")
        if (out / SERIES_JSON).is_file() and rc in (0, None):
            if rc is None:
                print(f"compaction series: the child wrote the series, then did not exit; "
                      f"killed it and its broker:\n{output[-3000:]}")
            print(output)
            return CompactionSeries.from_json((out / SERIES_JSON).read_text())
        failures.append(f"attempt {attempt}: "
                        + (f"no series in {timeout_s:.0f} s" if rc is None else f"exit {rc}")
                        + f" after {time.monotonic() - began:.0f} s; its output ends:\n"
                        + output[-4000:])
    raise SeriesError("\n".join(failures))


def _wait_for_child(child: subprocess.Popen, out: Path, deadline: float) -> int | None:
    """The child's exit code; None when it is still running at ``deadline``, or
    :data:`EXIT_GRACE_S` after it said it was done (series written, broker stopped)."""
    done_at = None
    while (rc := child.poll()) is None:
        now = time.monotonic()
        if done_at is None and (out / SERIES_JSON).is_file() and DONE_LINE in (
                out / "series.log").read_text(errors="replace"):
            done_at = now
        if now > deadline or (done_at is not None and now - done_at > EXIT_GRACE_S):
            return None
        time.sleep(0.5)
    return rc


def _broker_pid(out: Path) -> int | None:
    try:
        return int((out / BROKER_PID).read_text())
    except (OSError, ValueError):
        return None


def _kill_group(pid: int | None) -> None:
    """SIGKILL the process group ``pid`` leads (the child and the broker each lead one)."""
    if pid is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.integration.compaction_series",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--count", type=int, default=6)
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    broker = _start_broker(args.out_dir)
    try:
        series = take_compaction_series(args.out_dir, args.count, broker=broker,
                                        log=lambda m: print(m, file=sys.stderr, flush=True))
    finally:
        broker.stop()
    print("\n".join(summary(series)))
    print(f"{DONE_LINE}{series.cluster_id}; {series.seconds} s; {args.out_dir / SERIES_JSON}",
          flush=True)
    return 0


def _start_broker(out_dir: Path) -> KafkaBroker:
    """A broker with :data:`CLEANER_SETTINGS` in ``out_dir/broker``, its pid in
    ``out_dir/broker.pid``; tried again on other ports should another process take one before
    the broker binds it."""
    from .kafka_broker import KafkaHarnessError

    try:
        broker = KafkaBroker(out_dir / "broker", overrides=CLEANER_SETTINGS)
        broker.start()
    except KafkaHarnessError as exc:
        print(f"Kafka did not start, trying again on other ports: {exc}", file=sys.stderr)
        broker = KafkaBroker(out_dir / "broker-again", overrides=CLEANER_SETTINGS)
        broker.start()
    (out_dir / BROKER_PID).write_text(str(broker.pid))
    return broker


def _exit_without_teardown() -> None:
    """Run :func:`main` and leave at once, skipping the interpreter's teardown. A librdkafka
    handle still alive then is destroyed with its broker gone, which can block: the CI of 2605bc8
    waited out the child's 600 s limit after the series was written and the broker stopped."""
    import traceback

    try:
        code = main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - said on stderr, the exit code says it failed
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    _exit_without_teardown()

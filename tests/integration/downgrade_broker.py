"""Start an older Kafka broker on a copy of a snapshot's ``__consumer_offsets`` partitions and
record what its group coordinator does with them.

How the copy is made (the broker must really load the copied records):

1. format a fresh single-node KRaft broker of the target version with the snapshot's number of
   ``__consumer_offsets`` partitions and start it;
2. make it create ``__consumer_offsets`` (an OffsetFetch for a probe group: FindCoordinator
   creates the topic) and wait until it has loaded every partition, then stop it cleanly;
3. in each partition directory delete the broker's own segments, indexes, producer-state
   snapshots and the clean-shutdown marker, and copy in the snapshot's ``.log`` files (the
   broker keeps its own ``partition.metadata``, i.e. its topic id, and leader-epoch file);
4. start it again: with no clean-shutdown marker the log is recovered from the segments
   (indexes rebuilt, log end offset = the snapshot's), the broker becomes leader of every
   partition and its group coordinator loads them from offset 0, exactly as after a downgrade.

What is recorded: per partition, whether the load finished or failed (the log lines), the WARN
lines of skipped records, and what the Admin API then shows (groups listed, committed offsets
per group, or the error the coordinator answers with).
"""

from __future__ import annotations

import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from .kafka_broker import NEW_COORDINATOR_3X, OFFSETS_TOPIC, KafkaBroker, release_of

_PARTITION = re.compile(r"__consumer_offsets-(\d+)")
# Java coordinator (CoordinatorRuntime / CoordinatorLoaderImpl) and Scala GroupMetadataManager.
LOADED = (re.compile(r"Finished loading of metadata from __consumer_offsets-(\d+)"),
          re.compile(r"Finished loading offsets and group metadata from __consumer_offsets-(\d+)"))
FAILED = (re.compile(r"Failed to load metadata from __consumer_offsets-(\d+)"),
          re.compile(r"Error loading offsets from __consumer_offsets-(\d+)"))
SKIPPED = re.compile(r"(Unknown record type|Unknown message key|Ignoring it).*__consumer_offsets-(\d+)"
                     r"|__consumer_offsets-(\d+).*(Unknown record type|Ignoring it)")
_REMOVED_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex", ".snapshot")


@dataclass
class PartitionLoad:
    loaded: bool = False
    failed: bool = False
    failure_lines: list[str] = field(default_factory=list)
    skipped_lines: list[str] = field(default_factory=list)


@dataclass
class BrokerObservation:
    version: str
    new_coordinator: bool
    partitions: dict[int, PartitionLoad]
    listed_groups: set[str]
    offsets: dict[str, dict[tuple[str, int], int] | str]   # group -> offsets, or the error
    log_excerpt: str = ""


def load_snapshot_on(version: str, snapshot: Path, work_dir: Path, *, num_partitions: int,
                     groups: list[str], new_coordinator: bool = False,
                     settle_s: float = 60.0) -> BrokerObservation:
    overrides = {"offsets.topic.num.partitions": str(num_partitions)}
    if new_coordinator and release_of(version) < (4, 0):
        overrides.update(NEW_COORDINATOR_3X)
    broker = KafkaBroker(work_dir, version=version, overrides=overrides)
    try:
        broker.start()
        _create_offsets_topic(broker, num_partitions)
        broker.stop()
        _install_segments(broker, snapshot, num_partitions)
        mark = broker.server_log.stat().st_size
        broker.start(format_storage=False)
        loads = _wait_for_loads(broker, mark, num_partitions, settle_s)
        listed, offsets = _admin_view(broker, groups)
        text = broker.server_log.read_text(errors="replace")[mark:]
        return BrokerObservation(version, new_coordinator, loads, listed, offsets,
                                 "\n".join(_interesting(text))[-6000:])
    finally:
        broker.stop()


def _create_offsets_topic(broker: KafkaBroker, num_partitions: int) -> None:
    from kafka import KafkaAdminClient

    deadline = time.monotonic() + 60
    while True:
        try:
            admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_server)
            try:
                admin.list_group_offsets({"offsetlake-probe": None})
            finally:
                admin.close()
            if len(broker.partition_dirs()) == num_partitions:
                return
        except Exception as exc:  # the topic is being created; the coordinator is loading
            if time.monotonic() > deadline:
                raise RuntimeError(f"{OFFSETS_TOPIC} not created: {exc!r}\n"
                                   f"{broker.log_tail()}") from exc
        time.sleep(0.5)


def _install_segments(broker: KafkaBroker, snapshot: Path, num_partitions: int) -> None:
    (broker.data_dir / ".kafka_cleanshutdown").unlink(missing_ok=True)
    for p in range(num_partitions):
        target = broker.data_dir / f"{OFFSETS_TOPIC}-{p}"
        for item in target.iterdir():
            if item.suffix in _REMOVED_SUFFIXES:
                item.unlink()
        source = snapshot / f"{OFFSETS_TOPIC}-{p}"
        for segment in sorted(source.glob("*.log")) if source.is_dir() else ():
            shutil.copy2(segment, target / segment.name)


def _wait_for_loads(broker: KafkaBroker, mark: int, num_partitions: int,
                    settle_s: float) -> dict[int, PartitionLoad]:
    deadline = time.monotonic() + settle_s
    while True:
        loads = parse_loads(broker.server_log.read_text(errors="replace")[mark:], num_partitions)
        if all(p.loaded or p.failed for p in loads.values()) or time.monotonic() > deadline:
            return loads
        time.sleep(0.5)


def parse_loads(text: str, num_partitions: int) -> dict[int, PartitionLoad]:
    loads = {p: PartitionLoad() for p in range(num_partitions)}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        for pattern in LOADED:
            if (m := pattern.search(line)):
                loads[int(m.group(1))].loaded = True
        for pattern in FAILED:
            if (m := pattern.search(line)):
                load = loads[int(m.group(1))]
                load.failed = True
                load.failure_lines += lines[i:i + 4]
        if (m := SKIPPED.search(line)):
            loads[int(m.group(2) or m.group(3))].skipped_lines.append(line)
    return loads


def _interesting(text: str) -> list[str]:
    return [line for line in text.splitlines()
            if "__consumer_offsets" in line and (" WARN " in line or " ERROR " in line
                                                 or "Finished loading" in line)]


def _admin_view(broker: KafkaBroker, groups: list[str]):
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_server, request_timeout_ms=8000)
    try:
        try:
            listed = {_group_name(g) for g in admin.list_groups()}
        except Exception as exc:  # a failed coordinator answers with an error
            listed = {f"<error {type(exc).__name__}>"}
        offsets: dict = {}
        for group in groups:
            try:
                found = admin.list_group_offsets({group: None}).get(group, {})
                offsets[group] = {(tp.topic, tp.partition): om.offset for tp, om in found.items()}
            except Exception as exc:
                offsets[group] = f"{type(exc).__name__}: {exc}"[:200]
        return listed, offsets
    finally:
        admin.close()


def _group_name(group) -> str:
    if isinstance(group, dict):
        return group.get("group_id") or group.get("group") or str(group)
    return getattr(group, "group_id", None) or group[0]

"""The downgrade audit against real older brokers: its verdict for a target must predict, partition
by partition, what that release's group coordinator does when it loads the snapshot.

Snapshots: ``samples/kafka-4.3.1`` (written by the integration suite's Kafka 4.3.1 broker under
every workload: classic, KIP-848, static, drained, deleted, converted, share groups and
transactions), ``samples/rolling-upgrade`` (one log carried from 3.9.2 to 4.4.0, the workloads
run at each release: records written by six releases' coordinators), fresh ones written the
same way during the test (:mod:`.make_sample`) by the suite's broker and by each newer
``<writer.versions>`` broker (4.4.0), and a hand-made one (:mod:`.downgrade_snapshots`: a
compacted deleted group, a simple group that later joins as a KIP-848 group, an offset commit
claiming value version 5).
Brokers: the ``<downgrade.versions>`` of ``build/kafka/pom.xml`` (3.7.2 with its early-access
Java coordinator, 3.9.2 with its default Scala coordinator and with the Java one, 4.0.2, 4.2.1),
fetched from Maven Central by ``build/kafka/fetch.sh --downgrade``.

How the copy is made: :mod:`.downgrade_broker` (fresh broker of the target version with the
snapshot's partition count creates ``__consumer_offsets``, is stopped, its segments are replaced
by the snapshot's with indexes, producer snapshots and the clean-shutdown marker removed, and it
is restarted so it recovers the log and its coordinator loads every partition from offset 0).

Per partition the test asserts:

* predicted BREAK fail-closed (Java) -> the broker logs "Failed to load metadata" for it and the
  Admin API answers NOT_COORDINATOR for every group of the snapshot on it;
* predicted BREAK fail-open (Scala) -> "Error loading offsets" is logged and its groups show no
  committed offsets at all;
* otherwise the partition loads, the records the broker skips with a WARN are exactly the DU-1
  records (same number, same record types), the groups the Admin API lists are those with live
  state the target keeps, and each group's committed offsets are what our own replay of the
  snapshot says (where our replay can read every record).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from jobs.audits.downgrade import BREAK, DROP, audit_facts
from support.partition_dirs import facts_from_partition_dir
from jobs.audits.downgrade_targets import parse_target

from .conftest import _SKIPPED_NO_JAVA, _skip_reasons
from .downgrade_broker import load_snapshot_on
from .downgrade_snapshots import write_crafted_snapshot
from .kafka_broker import (KafkaJarsMissing, downgrade_versions, java_executable, kafka_libs_dir,
                           kafka_version, release_of, writer_versions)

pytestmark = pytest.mark.integration

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "kafka-4.3.1"
ROLLING_SAMPLE = SAMPLE.parent / "rolling-upgrade"   # one log from 3.9.2 to 4.4.0: its README
PARTITIONS = 3
_SKIPPED_TYPE = re.compile(r"Unknown (?:record type|message key with version) (-?\d+)")


def _brokers() -> list[tuple[str, bool, str]]:
    """(version, new coordinator, audit target) for every pinned older broker: 3.x with its Java
    coordinator enabled, and the newest 3.x also with its default Scala one (the Scala loader's
    rules are the same from 3.4.1 to 3.9)."""
    versions = downgrade_versions()
    newest_3x = max((v for v in versions if v.startswith("3.")), key=release_of, default=None)
    out = []
    for version in versions:
        line = ".".join(version.split(".")[:2])
        if not version.startswith("3.") or version == newest_3x:
            out.append((version, False, line))
        if version.startswith("3."):
            out.append((version, True, line + "+new-coordinator"))
    return out


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory) -> dict[str, Path]:
    return {"kafka-4.3.1-sample": SAMPLE, "rolling-upgrade-sample": ROLLING_SAMPLE,
            "crafted": write_crafted_snapshot(tmp_path_factory.mktemp("crafted"))}


@pytest.fixture(scope="module")
def workloads_snapshots(tmp_path_factory):
    """``snapshot(version)``: a new snapshot of a broker of ``version`` under every workload (new
    member ids, topic ids, timings: not the bundled bytes), copied while the members are still in
    their groups; made once per version."""
    from .make_sample import make_sample

    made: dict[str, Path] = {}

    def snapshot(version: str) -> Path:
        if java_executable() is None:
            _skip_reasons.add(_SKIPPED_NO_JAVA)
            pytest.skip(_SKIPPED_NO_JAVA)
        if version not in made:
            try:
                kafka_libs_dir(version)
            except KafkaJarsMissing as exc:
                pytest.fail(f"{exc} (or `bash build/kafka/fetch.sh --writers`)", pytrace=False)
            target = tmp_path_factory.mktemp("workloads") / f"kafka-{version}"
            make_sample(target, write_expectations=False, version=version)
            made[version] = target
        return made[version]
    return snapshot


def _expected_offsets(snapshot: Path) -> dict[int, dict[str, dict]]:
    """partition -> group -> {(topic, partition): offset} from our replay; a partition our replay
    cannot read (a value version no release writes) is left out."""
    from jobs.replay import replay_partition
    from support.partition_dirs import events_from_partition_dir

    out = {}
    for p in range(PARTITIONS):
        try:
            result = replay_partition(events_from_partition_dir(snapshot / f"__consumer_offsets-{p}"))
        except Exception:  # noqa: BLE001 - an unreadable partition is simply not compared
            continue
        groups: dict[str, dict] = {}
        for row in result.tables["offsets"]:
            groups.setdefault(row["group_id"], {})[(row["topic"], row["partition"])] = row["committed_offset"]
        out[p] = groups
    return out


@pytest.mark.parametrize("version, new_coordinator, target", _brokers(),
                         ids=[b[2] for b in _brokers()])
@pytest.mark.parametrize("snapshot_name", ["kafka-4.3.1-sample", "rolling-upgrade-sample", "crafted",
                                           *(f"workloads-{v}" for v in (kafka_version(), *writer_versions()))])
def test_audit_predicts_the_broker_partition_by_partition(request, snapshots, snapshot_name,
                                                          version, new_coordinator, target,
                                                          tmp_path):
    if java_executable() is None:
        _skip_reasons.add(_SKIPPED_NO_JAVA)
        pytest.skip(_SKIPPED_NO_JAVA)
    try:
        kafka_libs_dir(version)
    except KafkaJarsMissing as exc:
        pytest.fail(f"{exc} (or `bash build/kafka/fetch.sh --downgrade`)", pytrace=False)
    snapshot = (request.getfixturevalue("workloads_snapshots")(snapshot_name.split("-", 1)[1])
                if snapshot_name.startswith("workloads-") else snapshots[snapshot_name])
    facts = [f for p in range(PARTITIONS)
             for f in facts_from_partition_dir(snapshot / f"__consumer_offsets-{p}")]
    findings = audit_facts(facts, [target])
    groups = sorted({f.group_id for f in facts if f.group_id})
    observed = load_snapshot_on(version, snapshot, tmp_path, num_partitions=PARTITIONS,
                                groups=groups, new_coordinator=new_coordinator)
    expected_offsets = _expected_offsets(snapshot)
    context = f"{target} on {snapshot_name}; broker log:\n{observed.log_excerpt}"
    for p in range(PARTITIONS):
        load = observed.partitions[p]
        on_p = [g for g in groups if any(f.group_id == g and f.partition == p for f in facts)]
        breaks = sorted((f for f in findings if f.partition == p and f.klass == BREAK),
                        key=lambda f: f.offset)
        if breaks and breaks[0].failure_mode == "fail-closed":
            assert load.failed and not load.loaded, f"partition {p} should fail closed: {context}"
            assert all(isinstance(observed.offsets[g], str) and "NotCoordinator" in observed.offsets[g]
                       for g in on_p), (p, observed.offsets, context)
        elif breaks:
            assert load.failed, f"partition {p} should fail open: {context}"
            assert all(observed.offsets[g] == {} for g in on_p), (p, observed.offsets, context)
        else:
            assert load.loaded and not load.failed, f"partition {p} should load: {context}"
            dropped = Counter(f.record_type for f in findings
                              if f.partition == p and f.rule_id == "DU-1" and f.klass == DROP)
            skipped = Counter(int(_SKIPPED_TYPE.search(line).group(1)) for line in load.skipped_lines)
            assert skipped == dropped, (p, context)
            kept = _groups_with_kept_state(facts, target, p)
            for g in on_p:
                assert (g in observed.listed_groups) == (g in kept), (p, g, context)
                if p in expected_offsets:
                    assert observed.offsets[g] == expected_offsets[p].get(g, {}), (p, g, context)


def _groups_with_kept_state(facts, target: str, partition: int) -> set[str]:
    """Groups the target still knows after loading: a live, non-tombstone record of a type it
    decodes (an offset alone makes a simple group; dropped records make nothing)."""
    known = parse_target(target).known_types
    return {f.group_id for f in facts if f.partition == partition and f.is_live
            and not f.is_tombstone and f.record_type in known}

"""The coordinator oracle against what real brokers did with ``samples/kafka-4.3.1``.

Each release's real group coordinator (its jars from Maven Central) replays the sample written by
a 4.3.1 broker. The expectations are the outcomes recorded from real brokers in
``docs/downgrade.md`` ("Checked against real brokers"), the record layout of the sample
(``samples/kafka-4.3.1.expected/dump.jsonl``) and, for the releases that load everything, the
final groups and offsets of the expected tables (``samples/kafka-4.3.1.expected/tables``).
A small hand-made log with committed, aborted and open transactions checks the marker handling
(3.6's loader fails on a control batch; 3.7+ replay the markers).

One JVM per release, one at a time: each release answers all its inputs in one go and is stopped
before the next one starts.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from decoders.log.writer import encode_batch, encode_control_batch
from support.snapshot_factory import offset_commit_key, offset_commit_value

from .runner import RELEASES, Oracle, OracleError

pytestmark = pytest.mark.oracle

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "kafka-4.3.1"
EXPECTED = SAMPLE.parent / "kafka-4.3.1.expected"
SHARE_GROUP_TYPES = range(9, 16)        # 3.9's serde maps record types 0-8 only

# Without a JDK the module is skipped, loudly; without Maven (and jars not yet fetched) it fails.
if shutil.which("java") is None or shutil.which("javac") is None:
    pytest.skip("oracle tests SKIPPED: need java and javac (JDK 17+) on PATH", allow_module_level=True)


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    """``answers(release)``: that release's answers for the sample, a path that does not exist,
    an empty partition and the transactions log, computed once by one JVM, stopped before another
    release starts."""
    empty = tmp_path_factory.mktemp("empty") / "__consumer_offsets-7"
    empty.mkdir()
    (empty / "00000000000000000000.log").touch()    # a fresh partition's empty active segment
    missing = empty.parent / "no-such-snapshot"
    transactions = _transactions_log(tmp_path_factory.mktemp("txn") / "__consumer_offsets-4")
    cache: dict[str, dict] = {}

    def answer(release: str) -> dict:
        if release not in cache:
            with Oracle(release) as oracle:
                sample = oracle.load(SAMPLE)
                try:
                    oracle.load(missing)
                    missing_error = None
                except OracleError as e:
                    missing_error = str(e)
                cache[release] = {"sample": sample, "empty": oracle.load(empty),
                                  "missing_error": missing_error,
                                  "transactions": oracle.load(transactions)}
        return cache[release]

    return answer


def _transactions_log(directory: Path) -> Path:
    """Group g: a plain commit (t-0), a committed (producer 5, t-1), an aborted (producer 6, t-2)
    and an open (producer 7, t-3) transactional commit; OffsetCommitValue v3 (every release
    reads it). Offsets 0-5, markers at 2 and 4."""
    directory.mkdir(parents=True)

    def commit(offset, partition, producer_id=-1):
        record = (offset_commit_key("g", "t", partition), offset_commit_value(offset * 10, 1_000 + offset), 1_000)
        return encode_batch([record], base_offset=offset, producer_id=producer_id, producer_epoch=0,
                            is_transactional=producer_id >= 0)

    def marker(offset, control_type, producer_id):   # control type 0 = ABORT, 1 = COMMIT
        return encode_control_batch(control_type, 0, offset=offset, producer_id=producer_id,
                                    producer_epoch=0, timestamp=1_000)

    (directory / f"{0:020d}.log").write_bytes(
        commit(0, 0) + commit(1, 1, 5) + marker(2, 1, 5) + commit(3, 2, 6) + marker(4, 0, 6) + commit(5, 3, 7))
    return directory


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _dump(partition: int) -> list[dict]:
    return [r for r in _jsonl(EXPECTED / "dump.jsonl") if r["partition"] == partition]


def _data_records(partition: int) -> list[dict]:
    return [r for r in _dump(partition) if not r["batch"]["isControl"]]


def _partitions(answer: dict) -> dict[int, dict]:
    return {p["partition"]: p for p in answer["partitions"]}


@pytest.mark.parametrize("release", RELEASES)
def test_starts_and_loads_an_empty_partition(answers, release):
    got = answers(release)
    assert got["empty"]["release"] == release
    assert got["empty"]["partitions"] == [{
        "partition": 7, "status": "loaded", "failure": None, "replayed": 0, "skipped": [],
        "control_batches": 0, "markers_replayed": release != "3.6.2",
        "groups": [], "offsets": [], "pending_transactional_offsets": []}]
    # The unreadable path is reported, and the same JVM went on to answer the empty partition.
    assert "NoSuchFileException" in got["missing_error"] and "no-such-snapshot" in got["missing_error"]
    assert [p["partition"] for p in got["sample"]["partitions"]] == [0, 1, 2]


def test_4_0_2_fails_partition_0_at_the_type_11_record_written_by_4_1(answers):
    partitions = _partitions(answers("4.0.2")["sample"])
    failure = partitions[0]["failure"]
    assert partitions[0]["status"] == "failed"
    assert (failure["offset"], failure["record_type"], failure["stage"]) == (1, 11, "deserialize")
    assert [r["key"]["type"] for r in _dump(0) if r["offset"] == 1] == [11]
    assert partitions[0]["replayed"] == 1          # offset 0, the share member's type 10
    for p in (1, 2):
        assert (partitions[p]["status"], partitions[p]["failure"]) == ("loaded", None)
        assert partitions[p]["replayed"] == len(_data_records(p))


@pytest.mark.parametrize("release", ["3.6.2", "3.7.2"])
def test_3_6_and_3_7_misread_the_3_8_layout_and_skip_the_share_group(answers, release):
    partitions = _partitions(answers(release)["sample"])
    share_offsets = [r["offset"] for r in _data_records(0) if r["key"]["type"] in SHARE_GROUP_TYPES]
    assert partitions[0]["status"] == "loaded"
    assert [s["offset"] for s in partitions[0]["skipped"]] == share_offsets
    assert {s["reason"] for s in partitions[0]["skipped"]} == {"unknown_record_type"}
    assert partitions[0]["groups"] == []
    for p in (1, 2):
        failure = partitions[p]["failure"]
        assert partitions[p]["status"] == "failed"
        assert "non-nullable field partitions was serialized as null" in failure["message"]
        # The first assignment record (type 7 or 8): its 3.8+ value layout is what 3.6/3.7 misread;
        # the earlier types 3-6 of the same groups were read without error.
        first_assignment = min(r["offset"] for r in _data_records(p)
                               if r["key"]["type"] in (7, 8) and r["value"] is not None)
        assert (failure["offset"], failure["stage"]) == (first_assignment, "deserialize")


@pytest.mark.parametrize("release", ["3.8.1", "3.9.2"])
def test_3_8_and_3_9_load_everything_but_the_share_group(answers, release):
    partitions = _partitions(answers(release)["sample"])
    skipped = [(s["offset"], s["record_type"]) for s in partitions[0]["skipped"]]
    assert skipped == [(r["offset"], r["key"]["type"]) for r in _data_records(0)]
    assert len(skipped) == 15 and {t for _, t in skipped} <= set(SHARE_GROUP_TYPES)
    for p in (0, 1, 2):
        assert (partitions[p]["status"], partitions[p]["failure"]) == ("loaded", None)
    assert partitions[1]["control_batches"] == 2
    assert partitions[1]["replayed"] + partitions[2]["replayed"] == len(_data_records(1)) + len(_data_records(2))


@pytest.mark.parametrize("release", ["4.1.2", "4.2.1", "4.3.1", "4.4.0"])
def test_4_1_and_later_load_every_record(answers, release):
    partitions = _partitions(answers(release)["sample"])
    for p in (0, 1, 2):
        assert (partitions[p]["status"], partitions[p]["skipped"]) == ("loaded", [])
        assert partitions[p]["replayed"] == len(_data_records(p))
    assert (partitions[1]["control_batches"], partitions[1]["markers_replayed"]) == (2, True)
    # wl-txn's committed transaction is installed, its aborted one dropped: nothing stays pending.
    assert all(not p["pending_transactional_offsets"] for p in partitions.values())


def _expected_groups(partition: int) -> list[dict]:
    members = [m for m in _jsonl(EXPECTED / "tables" / "members.jsonl") if m["log_partition"] == partition]
    groups = []
    for row in _jsonl(EXPECTED / "tables" / "groups.jsonl"):
        if row["log_partition"] != partition:
            continue
        classic = row["group_type"] == "classic"
        groups.append({
            "group_id": row["group_id"], "type": row["group_type"], "state": row["group_state"],
            "protocol_type": row["protocol_type"] if classic else None,
            # a simple group (offsets, no GroupMetadata record) is a ClassicGroup at generation 0
            "epoch": (row["generation"] or 0) if classic else row["group_epoch"],
            "target_assignment_epoch": None if classic else row["target_assignment_epoch"],
            "members": sorted(({"member_id": m["member_id"], "member_epoch": m["member_epoch"],
                                "instance_id": m["instance_id"]}
                               for m in members if m["group_id"] == row["group_id"]),
                              key=lambda m: m["member_id"]),
        })
    return sorted(groups, key=lambda g: g["group_id"])


def _expected_offsets(partition: int) -> list[dict]:
    rows = [r for r in _jsonl(EXPECTED / "tables" / "offsets.jsonl") if r["log_partition"] == partition]
    offsets = [{"group_id": r["group_id"], "topic": r["topic"], "partition": r["partition"],
                "offset": r["committed_offset"],
                "leader_epoch": -1 if r["leader_epoch"] is None else r["leader_epoch"],
                "metadata": r["metadata"], "commit_timestamp": r["commit_timestamp"]} for r in rows]
    return sorted(offsets, key=lambda o: (o["group_id"], o["topic"], o["partition"]))


@pytest.mark.parametrize("release", ["4.2.1", "4.3.1", "4.4.0"])
@pytest.mark.parametrize("partition", [0, 1, 2])
def test_final_state_equals_the_expected_tables(answers, release, partition):
    got = _partitions(answers(release)["sample"])[partition]
    assert got["groups"] == _expected_groups(partition)
    assert got["offsets"] == _expected_offsets(partition)


def test_3_6_fails_on_the_first_transaction_marker(answers):
    (got,) = answers("3.6.2")["transactions"]["partitions"]
    assert (got["status"], got["control_batches"], got["markers_replayed"]) == ("failed", 1, False)
    assert got["failure"] == {"offset": 2, "record_type": None, "stage": "control",
                              "exception": "java.lang.IllegalStateException",
                              "message": "Control batches are not supported yet."}
    # 3.6 replays a transactional commit like a plain one: t-1 is already in place.
    assert [(o["topic"], o["partition"], o["offset"]) for o in got["offsets"]] == [("t", 0, 0), ("t", 1, 10)]


@pytest.mark.parametrize("release", RELEASES[1:])
def test_3_7_and_later_replay_transaction_markers(answers, release):
    (got,) = answers(release)["transactions"]["partitions"]
    assert (got["status"], got["replayed"], got["control_batches"]) == ("loaded", 4, 2)
    assert [(o["topic"], o["partition"], o["offset"]) for o in got["offsets"]] == [("t", 0, 0), ("t", 1, 10)]
    assert got["pending_transactional_offsets"] == [
        {"group_id": "g", "producer_id": 7, "topic": "t", "partition": 3, "offset": 50}]


def test_an_unknown_release_is_refused():
    with pytest.raises(ValueError, match="unsupported release"):
        Oracle("3.5.2")

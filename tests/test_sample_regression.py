"""Regression fixtures: the committed real snapshots ``samples/kafka-<release>`` (each written by
a broker of that release under the integration workloads, see its README) and
``samples/streams-<release>`` (a broker and a Kafka Streams application of that release:
``tests/integration/make_streams_sample.py``), and their checked-in expectations.

No broker is needed: ``offsetlake dump`` and the pure-Python replay are recomputed on each sample
and compared, exactly, with ``samples/<sample>.expected/``. After an intended change of
the output, rewrite the expectations and review the diff::

    OFFSETLAKE_UPDATE_GOLDEN=1 python -m pytest tests/test_sample_regression.py
    git diff samples/*.expected
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

import pytest

from jobs.cli import main as offsetlake
from jobs.replay import TABLE_COLUMNS
from tests.integration.make_sample import replay_tables, table_lines

ROOT = Path(__file__).resolve().parents[1]
# Real-broker samples: kafka-<release> (the integration workloads: classic, consumer, share
# groups, transactions), streams-<release> (a Kafka Streams application's streams group) and
# rolling-upgrade (one log carried from 3.9.2 to 4.4.0, the workloads run at each release).
SAMPLES = ("kafka-4.3.1", "kafka-4.4.0", "streams-4.3.1", "streams-4.4.0", "rolling-upgrade")
UPDATE = os.environ.get("OFFSETLAKE_UPDATE_GOLDEN") == "1"
MAX_DIFF_LINES = 60


def check_golden(path: Path, lines: list[str]) -> None:
    """``lines`` must equal the file at ``path`` line for line (rewritten when updating)."""
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in lines))
        return
    if not path.exists():
        pytest.fail(f"{path.relative_to(ROOT)} is missing; create it with "
                    "OFFSETLAKE_UPDATE_GOLDEN=1", pytrace=False)
    expected = path.read_text().splitlines()
    if lines == expected:
        return
    diff = list(difflib.unified_diff(expected, lines, fromfile=f"{path.relative_to(ROOT)} (expected)",
                                     tofile="recomputed", lineterm="", n=1))
    shown = "\n".join(diff[:MAX_DIFF_LINES])
    more = f"\n... {len(diff) - MAX_DIFF_LINES} more diff lines" if len(diff) > MAX_DIFF_LINES else ""
    pytest.fail(f"{len(expected)} expected lines, {len(lines)} recomputed; diff:\n{shown}{more}\n"
                "If the change is intended: OFFSETLAKE_UPDATE_GOLDEN=1 python -m pytest "
                f"{Path(__file__).relative_to(ROOT)}", pytrace=False)


@pytest.fixture(scope="module", params=SAMPLES)
def name(request) -> str:
    """The sample's name (``kafka-4.3.1``...)."""
    return request.param


def sample(name: str) -> Path:
    return ROOT / "samples" / name


def expected(name: str) -> Path:
    return ROOT / "samples" / f"{name}.expected"


@pytest.fixture(scope="module")
def tables(name) -> dict[str, list[dict]]:
    return replay_tables(sample(name))


def test_the_sample_is_small_and_holds_only_offsets_partitions(name):
    files = [f for f in sample(name).rglob("*") if f.is_file()]
    logs = [f for f in files if f.suffix == ".log"]
    assert logs and all(f.parent.name.startswith("__consumer_offsets-") for f in logs)
    assert {f.parent.name for f in logs} == {f"__consumer_offsets-{p}" for p in range(3)}
    assert sum(f.stat().st_size for f in files) < 512 * 1024


def test_offsetlake_dump_of_the_sample_matches_the_golden_file(name, capsys):
    code = offsetlake(["dump", str(sample(name))])
    out = capsys.readouterr().out

    assert code == 0
    lines = out.splitlines()
    check_golden(expected(name) / "dump.jsonl", lines)
    assert not [line for line in lines if '"error"' in line], "dump reported unreadable records"


@pytest.mark.parametrize("table", list(TABLE_COLUMNS))
def test_replay_table_of_the_sample_matches_the_golden_file(name, tables, table):
    check_golden(expected(name) / "tables" / f"{table}.jsonl", table_lines(tables[table]))


def test_the_sample_covers_every_group_kind_and_scenario(name, tables):
    if name.startswith("streams-"):
        pytest.skip("a streams sample: see the next test")
    scenarios = json.loads((sample(name) / "scenarios.json").read_text())
    groups = {r["group_id"]: r for r in tables["groups"]}

    assert scenarios["kafka_version"] == (name.removeprefix("kafka-") if name.startswith("kafka-")
                                          else "4.4.0")
    # The rolling upgrade's earlier releases: each release's groups are there, Empty (their
    # members closed before the broker stopped), or gone when the scenario deleted them.
    earlier = scenarios.get("earlier_scenarios", [])
    assert {s["release"] for s in earlier} == ({"3.9.2", "4.0.2", "4.1.2", "4.2.1", "4.3.1"}
                                               if name == "rolling-upgrade" else set())
    for s in earlier:
        assert (s["group_id"] in groups) != bool(s["expected"].get("deleted")), s
        if s["group_id"] in groups and s["protocol"] != "share":
            assert groups[s["group_id"]]["group_state"] == "Empty", s
    assert {r["group_type"] for r in groups.values()} == {"classic", "consumer", "share"}
    for s in scenarios["scenarios"]:
        if s["expected"].get("deleted"):
            assert s["group_id"] not in groups, s["scenario"]
        else:
            row = groups[s["group_id"]]
            assert (row["group_type"], row["group_state"]) == \
                (s["expected"]["group_type"], s["expected"]["state"]), s["scenario"]
            assert row["member_count"] == len(s["expected"]["members"]), s["scenario"]
    offsets = {(r["group_id"], f"{r['topic']}-{r['partition']}"): r["committed_offset"]
               for r in tables["offsets"]}
    for s in scenarios["scenarios"]:
        for key, offset in s["expected"].get("offsets", {}).items():
            assert offsets.get((s["group_id"], key)) == offset, s["scenario"]
        for key in s["expected"].get("absent", {}):
            assert (s["group_id"], key) not in offsets, s["scenario"]
    assert [r["outcome"] for r in tables["transactions"]] == \
        ["committed", "aborted"] * (1 + len({s["release"] for s in earlier}))
    assert tables["violations"] == []


def test_the_streams_sample_says_what_the_admin_api_said(name, tables):
    """The streams group of ``samples/streams-*`` as ``kafka-streams-groups --describe`` saw it at
    the snapshot (``described.json``): state, epochs, members, active tasks, offsets."""
    if not name.startswith("streams-"):
        pytest.skip("not a streams sample")
    described = json.loads((sample(name) / "described.json").read_text())
    assert described["kafka_version"] == name.removeprefix("streams-")
    (group,) = [r for r in tables["groups"] if r["group_id"] == "st-app"]
    state = described["state"]
    assert (group["group_type"], group["group_state"], group["group_epoch"],
            group["target_assignment_epoch"], group["member_count"]) == \
        ("streams", state["state"], state["group_epoch"], state["target_assignment_epoch"],
         state["members"])
    assert {m["member_id"]: m["member_epoch"] for m in tables["members"]} == \
        {mid: m["member_epoch"] for mid, m in described["members"].items()}
    active: dict[str, set] = {}
    for r in tables["member_assignments"]:
        active.setdefault(r["member_id"], set()).add((r["subtopology_id"], r["partition"]))
    assert active == {mid: {tuple(t) for t in m["tasks"]["ACTIVE"]}
                      for mid, m in described["members"].items()}
    assert sorted([r["topic"], r["partition"], r["committed_offset"]] for r in tables["offsets"]) \
        == described["offsets"]
    assert tables["violations"] == []


# Record types no real-broker sample can hold, and why.
NOT_IN_ANY_SAMPLE = {
    0: "written only by 0.8.2 brokers (offset commit key version 0); no such broker runs here",
    9: "ShareGroupPartitionMetadata: written only by 4.0's early-access share groups, whose "
       "ShareGroupHeartbeat the clients here do not speak (UNSUPPORTED_VERSION on 4.1 too)",
    18: "StreamsGroupPartitionMetadata: removed before any release shipped it (no schema in the "
        "4.0.2, 4.1.2 or 4.2.1 group-coordinator jars)",
    24: "StreamsGroupTargetAssignmentResolvedTopicIds: on no release yet (not in 4.4.0's jar)",
}


def test_real_broker_samples_hold_every_record_type_a_release_writes():
    """Which layouts real broker bytes cover: the types in the samples' golden dumps, by sample."""
    found: dict[int, set[str]] = {}
    for name in SAMPLES:
        for line in (expected(name) / "dump.jsonl").read_text().splitlines():
            key = json.loads(line).get("key")
            if isinstance(key, dict):
                found.setdefault(key["type"], set()).add(name)
    assert set(found) == set(range(25)) - set(NOT_IN_ANY_SAMPLE), sorted(found)
    assert found[16] == {"rolling-upgrade"}
    assert {t for t, names in found.items() if names & {"streams-4.3.1", "streams-4.4.0"}} >= \
        {1, 17, 19, 20, 21, 22, 23}
    assert {t for t, names in found.items() if "kafka-4.4.0" in names} >= \
        {1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15}

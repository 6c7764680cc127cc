"""The log generator (support.loggen): determinism, coverage of the shapes the coordinator releases
disagree on, real segment files our reader decodes, the cleaner model's invariants, shrinking and
saved cases. No Spark, no JVM."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from decoders.codec import CoordinatorRecord, UnknownRecord, decode_record
from decoders.errors import UnknownVersionError
from decoders.log.segment import iter_partition_dir
from decoders.log.types import RecordBatch
from jobs.replay.events import ABORT, COMMIT
from support.loggen import generate
from support.loggen.compaction import CleaningPass, clean, key_bytes, transactions
from support.loggen.generator import partition_for
from support.loggen.records import KNOWN, LogRec, UNKNOWN_TYPE, UNKNOWN_VERSION, decode_expectation, record_bytes
from support.loggen.shapes import content_shapes, orders_left_by_compaction
from support.loggen.shrink import load_case, save_case, shrink
from support.scenarios.base import default_topic_id
from support.scenarios.log import Batch

SEEDS = range(300)


@pytest.fixture(scope="module")
def logs():
    return {seed: generate(seed) for seed in SEEDS}


def digest(log) -> str:
    h = hashlib.sha256()
    for path, data in sorted(log.segment_bytes().items()):
        h.update(path.encode() + data)
    return h.hexdigest()


# ---- determinism ---------------------------------------------------------------------------

def test_same_seed_gives_identical_bytes(tmp_path):
    for seed in range(25):
        assert generate(seed).segment_bytes() == generate(seed).segment_bytes()
    generate(7).write(tmp_path / "a")
    generate(7).write(tmp_path / "b")
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.log"))
    assert files and all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
                         for f in files)


def test_bytes_do_not_depend_on_the_hash_seed():
    code = ("import sys; sys.path.insert(0, 'tests'); from test_loggen import digest; "
            "from support.loggen import generate; print([digest(generate(s)) for s in range(8)])")
    outputs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, cwd=Path(__file__).parent.parent,
                              env={**os.environ, "PYTHONHASHSEED": str(h)}).stdout
               for h in (1, 2)}
    assert len(outputs) == 1


def test_different_seeds_give_different_logs(logs):
    digests = [digest(log) for log in list(logs.values())[:100]]
    assert len(set(digests)) == len(digests)


def test_group_ids_hash_to_their_partition(logs):
    for log in list(logs.values())[:50]:
        for p, _, _, rec in log.records():
            group = rec.key.get("group", rec.key.get("groupId"))
            assert partition_for(group) == p, (group, p)


# ---- coverage ------------------------------------------------------------------------------

def test_every_type_and_shape_appears_over_300_seeds(logs):
    seen = set().union(*(content_shapes(log) for log in logs.values()))
    assert {f"type {t}" for t in range(24)} <= seen
    assert {f"type {t}" for t in range(25, 31)} & seen, "no record of an unknown type (25..30)"
    assert {"tombstone", COMMIT, ABORT, "open_transaction", "historical/3.7.0", "historical/4.0",
            UNKNOWN_TYPE, UNKNOWN_VERSION, "unknown_tags", "double_ownership",
            "mixed_group_types", "conversion_upgrade", "conversion_downgrade"} <= seen


def test_marked_shapes_appear_over_300_seeds(logs):
    shapes = set().union(*(log.shapes() for log in logs.values()))
    assert {"double_ownership", "double_ownership_lower", "assigned_and_pending",
            "epoch_regression", "foreign_group_type", "phantom_tombstone", "conversion_upgrade",
            "conversion_downgrade", "conversion_offline_upgrade", "conversion_offline_downgrade",
            "transaction_commit", "transaction_abort", "open_transaction"} <= shapes


def test_defaults_give_tens_to_hundreds_of_records(logs):
    counts = sorted(log.record_count for log in logs.values())
    assert counts[len(counts) // 10] >= 15 and counts[-1] <= 260
    assert 40 <= counts[len(counts) // 2] <= 150
    assert sum(len(log.partitions) > 1 for log in logs.values()) >= 20


def test_knobs():
    only_consumer = {"simple": 0, "classic": 0, "connect": 0, "consumer": 1, "conversion": 0,
                     "share": 0, "streams": 0}
    for seed in range(10):
        log = generate(seed, partitions=2, compaction=False, max_records=60, irregular=0,
                       weights=only_consumer)
        assert len(log.partitions) == 2 and log.partitions == log.raw
        assert log.record_count <= 60 + 20          # the budget stops after the step that spends it
        # consumer groups write 2 only when a classic member turns them back into a classic group
        assert {rec.record_type for _, _, _, rec in log.records()} <= {1, 2, 3, 4, 5, 6, 7, 8, 16}


# ---- real segment files ------------------------------------------------------------------------

def test_written_logs_decode_with_our_reader_and_codec(logs, tmp_path):
    outcomes = set()
    for seed in SEEDS:
        log = logs[seed]
        log.write(tmp_path / str(seed))
        expected = {(p, o): rec for p, _, o, rec in log.records()}
        for p in log.partitions:
            last = -1
            for _, item in iter_partition_dir(tmp_path / str(seed) / f"__consumer_offsets-{p}"):
                assert isinstance(item, RecordBatch), (seed, item)
                for rec in item.records:
                    assert rec.offset > last
                    last = rec.offset
                    if not item.is_control:
                        outcomes.add(_check_record(expected.pop((p, rec.offset)), rec))
        assert not expected, (seed, sorted(expected))
    assert outcomes == {KNOWN, UNKNOWN_TYPE, UNKNOWN_VERSION}


def _check_record(generated, written) -> str:
    assert (written.key, written.value) == record_bytes(generated)
    expectation = decode_expectation(generated)
    if expectation == UNKNOWN_VERSION:
        with pytest.raises(UnknownVersionError):
            decode_record(written.key, written.value)
        return expectation
    decoded = decode_record(written.key, written.value)
    if expectation == UNKNOWN_TYPE:
        assert isinstance(decoded, UnknownRecord) and decoded.record_type == generated.record_type
        return expectation
    assert isinstance(decoded, CoordinatorRecord) and decoded.key == generated.key
    assert decoded.trailing_bytes == 0 and decoded.is_tombstone == (generated.value is None)
    if generated.layout:
        assert decoded.layout == generated.layout
    return expectation


# ---- compaction ----------------------------------------------------------------------------

def test_each_cleaning_pass_keeps_the_latest_record_per_key_below_its_end(logs):
    checked = 0
    for log in logs.values():
        for p, passes in log.cleanings.items():
            before = log.raw[p]
            for cleaning in passes:
                after = clean(before, cleaning)
                _check_pass(before, after, cleaning)
                before, checked = after, checked + 1
            assert before == log.partitions[p]
    assert checked >= 200


def _entries(batches) -> dict[int, object]:
    out = {}
    for b in batches:
        out.update({o: r for o, r in b.records})
        if b.control_type is not None:
            out[b.base_offset] = b
    return out


def _check_pass(before, after, cleaning) -> None:
    end, old, new = cleaning.cleanable_end, _entries(before), _entries(after)
    assert set(new) <= set(old) and all(new[o] == old[o] for o in new)    # offsets preserved
    assert all(o in new for o in old if o >= end)                          # nothing at/after E
    aborted = {b.base_offset for t in transactions(before) for b in t.data_batches
               if t.marker is not None and t.marker.control_type == ABORT
               and t.marker.base_offset < cleaning.log_end}
    latest = {}
    for b in before:
        if b.control_type is None and b.base_offset not in aborted:
            latest.update({key_bytes(r): o for o, r in b.records if o < end})
    below = [(o, r) for b in after if b.control_type is None for o, r in b.records if o < end]
    keys = [key_bytes(r) for _, r in below]
    assert len(keys) == len(set(keys))                                     # one record per key
    assert all(latest[key_bytes(r)] == o for o, r in below)                # ... the latest
    survivors = {o for o, _ in below}
    assert all(o in survivors or old[o].value is None for o in latest.values())
    for t in transactions(before):                                         # open at the pass
        if t.marker is None or t.marker.base_offset >= cleaning.log_end:
            assert all(o in new for b in t.data_batches for o, _ in b.records)


def test_compaction_leaves_orders_the_coordinator_never_writes(logs):
    found = set()
    for log in logs.values():
        for p, batches in log.partitions.items():
            found |= orders_left_by_compaction(batches) - orders_left_by_compaction(log.raw[p])
    assert found == {"member record before its group's epoch record",
                     "group tombstone without the records that created the group",
                     "member tombstone without the member record"}


def test_cleaner_model_on_a_hand_built_log():
    def commit(partition, offset=None):
        return LogRec(1, {"group": "g", "topic": "t", "partition": partition},
                      None if offset is None else 3,
                      None if offset is None else {"offset": offset, "metadata": "", "commitTimestamp": 1})

    def data(offset, rec, producer_id=-1):
        return Batch(offset, 1, [(offset, rec)], producer_id, 0, producer_id >= 0)

    log = [data(0, commit(1, 10)), data(1, commit(2, 10)), data(2, commit(1, 99), 7),
           Batch(3, 1, [], 7, 0, True, ABORT), data(4, commit(2)), data(5, commit(3, 5), 8),
           Batch(6, 1, [], 8, 0, True, COMMIT), data(7, commit(1, 20)), data(8, commit(4, 1), 9),
           data(9, commit(3, 6))]

    def offsets(batches):
        return sorted(_entries(batches))

    # aborted data and superseded records go; the tombstone and both markers stay (no horizon
    # yet); partition 3's record at 5 is its latest below E although 9 supersedes it later
    first = clean(log, CleaningPass(8, 9, 0))
    assert offsets(first) == [3, 4, 5, 6, 7, 8, 9]
    # the delete horizon passed: the tombstone and the ABORT marker (no data left) go
    second = clean(first, CleaningPass(8, 10, 8))
    assert offsets(second) == [5, 6, 7, 8, 9]
    # producer 9 commits; cleaning up to the end: 5 is superseded, so the COMMIT at 6 goes
    committed = [*second, Batch(10, 1, [], 9, 0, True, COMMIT)]
    assert offsets(clean(committed, CleaningPass(10, 11, 8))) == [7, 8, 9, 10]
    # ... unless producer 8 is still active: its last batch stays, empty, and so does nothing else
    kept = clean(committed, CleaningPass(10, 11, 8, frozenset({8})))
    assert [(b.base_offset, b.records, b.end_offset) for b in kept if b.producer_id == 8] == [(5, [], 6)]


# ---- shrinking and saved cases -------------------------------------------------------------

ORDERS_0 = (default_topic_id("orders"), 0)


def owns_orders_0_and_has_a_member(log) -> bool:
    records = [rec for _, _, _, rec in log.records() if rec.value is not None]
    return any(rec.record_type == 5 for rec in records) and any(
        rec.record_type == 8 and any((tp["topicId"], p) == ORDERS_0
                                     for tp in rec.value["assignedPartitions"]
                                     for p in tp["partitions"]) for rec in records)


def test_shrink_reaches_the_two_records_the_predicate_needs(logs):
    seeds = [s for s, log in logs.items() if owns_orders_0_and_has_a_member(log)
             and log.record_count > 60]
    assert seeds
    calls = []

    def predicate(log):
        calls.append(1)
        return owns_orders_0_and_has_a_member(log)

    small = shrink(logs[seeds[0]], predicate)
    kept = [rec for _, _, _, rec in small.records()]
    assert sorted(rec.record_type for rec in kept) == [5, 8] and owns_orders_0_and_has_a_member(small)
    assert not any(b.control_type for bs in small.partitions.values() for b in bs)
    assert len(calls) < 4 * logs[seeds[0]].record_count
    original = {(p, o): rec for p, _, o, rec in logs[seeds[0]].records()}
    assert all(original[(p, o)] == rec for p, _, o, rec in small.records())   # offsets kept


def test_shrink_drops_other_partitions(logs):
    seed = next(s for s, log in logs.items() if len(log.partitions) > 1)
    log = logs[seed]
    target = max(log.partitions, key=lambda p: len(log.partitions[p]))
    small = shrink(log, lambda candidate: any(
        p == target for p, _, _, _ in candidate.records()))
    assert list(small.partitions) == [target] and small.record_count == 1


def test_saved_case_round_trips_to_the_same_bytes(logs, tmp_path):
    seeds = [s for s, log in logs.items() if any(
        rec.unknown_tags or rec.layout or decode_expectation(rec) != KNOWN
        for _, _, _, rec in log.records())][:20]
    for seed in seeds + [0, 1, 2]:
        path = save_case(logs[seed], tmp_path / f"{seed}.json", {"oracle": {"4.0": "fails"}})
        loaded, expectation = load_case(path)
        assert expectation == {"oracle": {"4.0": "fails"}}
        assert loaded.segment_bytes() == logs[seed].segment_bytes()
        assert _record_lines(loaded) == _record_lines(logs[seed])


def _record_lines(log) -> list[str]:
    return [line for line in log.describe().splitlines() if line[:6].strip().isdigit()]


def test_describe_has_one_line_per_record_and_marker(logs):
    log = logs[5]
    markers = sum(b.control_type is not None for bs in log.partitions.values() for b in bs)
    assert len(_record_lines(log)) >= log.record_count + markers

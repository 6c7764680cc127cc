"""A series of snapshots of one broker's ``__consumer_offsets`` taken while the log cleaner
compacts it (tests/integration/compaction_series.py), read back with the pure segment reader
(:mod:`decoders.log`) and the record codec.

What must hold between consecutive snapshots, and which of the workload's own records show it:

* new records are appended: every partition's log end moves, and each step's commits are there,
  beyond the previous snapshot's end, with the offsets committed;
* compaction removes: the commit a step made for a key a later step committed again is gone;
  below its active segment each snapshot holds every key once (the cleaner had cleaned up to it);
* tombstones expire: every tombstone of a snapshot carries a delete horizon the next step waited
  past, and is gone from the next snapshot; the group deleted in a step is all tombstones in that
  step's snapshot and has no record left in the next one;
* compaction only removes: a (partition, offset) present in two snapshots holds the same key,
  value and timestamp; no record reappears (a record of snapshot i below snapshot i-1's log end
  is in snapshot i-1); a batch keeps its base and last offset when records leave it (its CRC
  changes: each step's three-record ledger batch keeps only its middle record in the next
  snapshot), and a batch that lost nothing and got no horizon is byte-for-byte the same;
* every snapshot's meta.properties carries the broker's cluster id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from decoders import decode_record
from decoders.log import RecordBatch, iter_segment, list_segments

from .compaction_series import (EXPECTED_TOPIC_CONFIGS, LEDGER,
                                META_PROPERTIES, TOPIC, TOPIC_PARTITIONS, CompactionSeries,
                                committed_offset, ledger_partitions, offsets_partition)
from .kafka_broker import OFFSETS_PARTITIONS

pytestmark = pytest.mark.integration

COUNT = 6


@dataclass
class Snapshot:
    """One snapshot as the segment reader sees it."""
    path: Path
    records: dict[tuple[int, int], object] = field(default_factory=dict)     # (p, offset) -> LogRecord
    batches: dict[tuple[int, int], RecordBatch] = field(default_factory=dict)  # (p, base offset)
    end: dict[int, int] = field(default_factory=dict)          # partition -> next offset
    active_base: dict[int, int] = field(default_factory=dict)  # partition -> newest segment's base
    meta: dict[str, str] = field(default_factory=dict)
    keys: dict[tuple[int, int], object] = field(default_factory=dict)  # decoded keys

    def decoded(self, where: tuple[int, int]):
        record = self.records[where]
        return decode_record(record.key, record.value)

    def find(self, **wanted) -> list[tuple[int, int]]:
        """(partition, offset) of the records whose decoded key has these fields, in order."""
        return sorted(where for where, k in self.keys.items()
                      if all(k.key.get(name) == v for name, v in wanted.items()))

    def group_records(self, group: str) -> list[tuple[int, int]]:
        return sorted(where for where, k in self.keys.items() if k.group_id == group)


def read_snapshot(path: Path) -> Snapshot:
    """Every batch of every ``__consumer_offsets-N`` dir of ``path``; a copy of a quiet broker
    holds no damaged batch and no partial tail, so anything else fails here."""
    snap = Snapshot(path)
    segments = list_segments(path)
    assert sorted({s.partition for s in segments}) == list(range(OFFSETS_PARTITIONS)), segments
    for seg in segments:
        snap.active_base[seg.partition] = max(snap.active_base.get(seg.partition, -1), seg.base_offset)
        for item in iter_segment(seg.path):
            assert isinstance(item, RecordBatch), f"{seg.path}: {item!r}"
            key = (seg.partition, item.base_offset)
            assert key not in snap.batches, f"batch {key} twice in {path}"
            snap.batches[key] = item
            snap.end[seg.partition] = max(snap.end.get(seg.partition, 0), item.last_offset + 1)
            for record in item.records:
                assert (seg.partition, record.offset) not in snap.records
                snap.records[(seg.partition, record.offset)] = record
                snap.keys[(seg.partition, record.offset)] = decode_record(record.key, None)
    meta = path / META_PROPERTIES
    snap.meta = dict(line.split("=", 1) for line in meta.read_text().splitlines()
                     if "=" in line and not line.startswith("#"))
    return snap


@pytest.fixture(scope="module")
def series(compaction_series) -> CompactionSeries:
    assert len(compaction_series.snapshots) == COUNT
    return compaction_series


@pytest.fixture(scope="module")
def snapshots(series) -> list[Snapshot]:
    return [read_snapshot(path) for path in series.snapshots]


def pairs(snapshots):
    return list(zip(range(1, len(snapshots)), snapshots, snapshots[1:]))


def commit_record(snap: Snapshot, group: str, partition: int,
                  topic: str = TOPIC) -> tuple[int, int] | None:
    """Where snapshot ``snap`` holds the newest offset commit of (group, topic, partition)."""
    found = snap.find(group=group, topic=topic, partition=partition)
    return found[-1] if found else None


def batch_of(snap: Snapshot, where: tuple[int, int]) -> RecordBatch:
    """The batch of ``snap`` that holds the record at ``where``."""
    p, offset = where
    found = [b for (q, _), b in snap.batches.items()
             if q == p and b.base_offset <= offset <= b.last_offset]
    assert len(found) == 1, (where, found)
    return found[0]


def test_the_cleaner_compacted_the_offsets_topic(series, snapshots):
    assert len(series.snapshots) == COUNT
    assert {k: series.topic_configs.get(k) for k in EXPECTED_TOPIC_CONFIGS} == EXPECTED_TOPIC_CONFIGS
    log = series.server_log.read_text(errors="replace")
    cleaner_lines = "\n".join(line for line in log.splitlines() if "cleaned log" in line)
    for step, snap in zip(series.steps, snapshots):
        assert snap.active_base == step.active_base
        for p in range(OFFSETS_PARTITIONS):
            # the checkpoint the series waited for, and a pass the broker logged ending there
            assert step.cleaner_checkpoint[p] >= step.active_base[p]
            assert any(to == step.active_base[p] for _, to in series.cleaner_passes[p]), (
                f"no LogCleaner pass of __consumer_offsets-{p} up to {step.active_base[p]} "
                f"(step {step.index}); the broker logged:\n{cleaner_lines}")
        # below the active segment compaction is complete: each key once per partition
        for p in range(OFFSETS_PARTITIONS):
            keys = [r.key for (q, o), r in sorted(snap.records.items())
                    if q == p and o < snap.active_base[p]]
            assert len(keys) == len(set(keys)), f"snapshot {step.index} partition {p}: a key twice"
        assert step.copy_attempts >= 1


def test_every_snapshot_carries_the_cluster_id(series, snapshots):
    assert series.cluster_id
    for snap in snapshots:
        assert snap.meta.get("cluster.id") == series.cluster_id, (snap.path, snap.meta)
        assert snap.meta.get("node.id") == snapshots[0].meta.get("node.id")


def test_each_snapshot_appends_the_steps_commits(series, snapshots):
    for i, before, after in pairs(snapshots):
        step = series.steps[i]
        for p in range(OFFSETS_PARTITIONS):
            assert after.end[p] > before.end[p], (i, p, before.end, after.end)
        for (group, topic, partition), committed in {**step.commits, **step.roll_commits}.items():
            p = offsets_partition(group)
            where = commit_record(after, group, partition, topic)
            assert where is not None, f"snapshot {i} lacks the commit {group} {topic}-{partition}"
            assert where[0] == p and where[1] >= before.end[p], (group, where, before.end)
            rec = after.decoded(where)
            assert (rec.type_name, rec.value["offset"]) == ("OffsetCommit", committed), rec


def test_compaction_removes_the_commits_a_later_step_replaced(series, snapshots):
    for i, before, after in pairs(snapshots):
        gone = [w for w in before.records if w not in after.records]
        assert gone, f"nothing of snapshot {i - 1} was compacted away in snapshot {i}"
        first, kept, last = ledger_partitions(i - 1)
        for p, group in series.steady_groups.items():
            for partition in (first, last):       # committed again by step i
                old = commit_record(before, group, partition, LEDGER)
                new = commit_record(after, group, partition, LEDGER)
                assert old[0] == new[0] == p and new[1] > old[1], (group, partition, old, new)
                assert old not in after.records, f"{group} {LEDGER}-{partition}: {old} survived {new}"
                assert after.decoded(new).value["offset"] == committed_offset(i, partition)
            # committed by step i-1 and by no later step: it stays where it was, in every
            # snapshot from i-1 on
            where = commit_record(before, group, kept, LEDGER)
            assert all(commit_record(later, group, kept, LEDGER) == where
                       for later in snapshots[i - 1:]), (group, kept, where)
            assert before.decoded(where).value["offset"] == committed_offset(i - 1, kept)


def test_tombstones_are_gone_once_their_horizon_passed(series, snapshots):
    for i, before, after in pairs(snapshots):
        tombstones = [w for w, r in before.records.items() if r.value is None]
        assert tombstones, f"snapshot {i - 1} holds no tombstone"
        horizons = {}
        for (p, _), batch in before.batches.items():
            for r in batch.records:
                horizons[(p, r.offset)] = batch.delete_horizon_ms
        for w in tombstones:
            # the cleaner stamped it when it first kept it, and step i rolled after that
            assert horizons[w] is not None, f"tombstone {w} of snapshot {i - 1} has no horizon"
            assert horizons[w] <= series.steps[i].rolled_at_ms, (w, horizons[w], series.steps[i])
            assert w not in after.records, f"tombstone {w} of snapshot {i - 1} is in snapshot {i}"
    # the groups deleted: tombstones only in the deleting step's snapshot, nothing after it
    deleted = [(step.index, g) for step in series.steps for g in step.deleted_groups]
    assert len(deleted) == COUNT - 1
    for index, group in deleted:
        created = snapshots[index - 1].group_records(group)
        assert len([w for w in created if snapshots[index - 1].records[w].value is not None]) \
            >= TOPIC_PARTITIONS, (group, created)
        now = snapshots[index].group_records(group)
        assert now and all(snapshots[index].records[w].value is None for w in now), (group, now)
        assert len(now) >= TOPIC_PARTITIONS + 1   # its offsets' tombstones and the group's
        assert not set(created) & set(now)
        if index + 1 < COUNT:
            assert snapshots[index + 1].group_records(group) == [], group


def test_records_in_two_snapshots_are_byte_identical(snapshots):
    shared = 0
    for i, a in enumerate(snapshots):
        for b in snapshots[i + 1:]:
            for where in a.records.keys() & b.records.keys():
                ra, rb = a.records[where], b.records[where]
                assert (ra.key, ra.value, ra.headers, ra.timestamp) == \
                    (rb.key, rb.value, rb.headers, rb.timestamp), where
                shared += 1
    assert shared > 0


def test_no_record_reappears(snapshots):
    for i, before, after in pairs(snapshots):
        for (p, offset) in after.records:
            if offset < before.end[p]:
                assert (p, offset) in before.records, \
                    f"({p}, {offset}) is in snapshot {i} but not in snapshot {i - 1}"
        # the cleaner never moves a batch boundary below the previous log end
        for (p, base) in after.batches:
            if base < before.end[p]:
                assert (p, base) in before.batches, (i, p, base)


def test_compacted_batches_keep_their_offsets(series, snapshots):
    trimmed = []
    for i, before, after in pairs(snapshots):
        for where, new in after.batches.items():
            old = before.batches.get(where)
            if old is None:
                continue
            assert (new.base_offset, new.last_offset) == (old.base_offset, old.last_offset), where
            old_offsets = [r.offset for r in old.records]
            new_offsets = [r.offset for r in new.records]
            assert set(new_offsets) <= set(old_offsets), where
            if new_offsets != old_offsets:
                assert new.crc != old.crc, where
                trimmed.append((i, where, old_offsets, new_offsets))
            elif new.delete_horizon_ms == old.delete_horizon_ms:
                assert (new.crc, new.batch_length, new.base_timestamp) == \
                    (old.crc, old.batch_length, old.base_timestamp), where
            else:
                assert old.delete_horizon_ms is None and new.crc != old.crc, where
    # each step's ledger batch of each steady group loses its first and last record in the next
    # snapshot: the batch keeps its base and last offset around its middle record
    for i, before, after in pairs(snapshots):
        first, kept, last = ledger_partitions(i - 1)
        for group in series.steady_groups.values():
            where = commit_record(before, group, kept, LEDGER)
            batch = batch_of(before, where)
            offsets = [r.offset for r in batch.records]
            assert offsets == [where[1] - 1, where[1], where[1] + 1], (group, offsets)
            assert [before.keys[(where[0], o)].key["partition"] for o in offsets] == \
                [first, kept, last]
            compacted = after.batches[(where[0], batch.base_offset)]
            assert [r.offset for r in compacted.records] == [where[1]]
            assert (compacted.base_offset, compacted.last_offset, compacted.records_count) == \
                (batch.base_offset, batch.last_offset, 1)
            assert compacted.crc != batch.crc
            assert (i, (where[0], batch.base_offset), offsets, [where[1]]) in trimmed


def test_the_fixture_gives_up_on_a_child_that_is_done_but_does_not_exit(tmp_path, monkeypatch):
    """A child that wrote the series and said so has EXIT_GRACE_S to exit (then it is killed
    and the series kept); one that did not say so waits until the deadline; an exit gives its
    code. No broker: the child is a stand-in process."""
    import subprocess
    import sys
    import time

    from . import compaction_series as cs

    monkeypatch.setattr(cs, "EXIT_GRACE_S", 1.0)
    done, silent = tmp_path / "done", tmp_path / "silent"
    for out in (done, silent):
        out.mkdir()
        (out / cs.SERIES_JSON).write_text("{}")
    (done / "series.log").write_text(f"snapshot 5: ...\n{cs.DONE_LINE}abc; 12.8 s; x\n")
    (silent / "series.log").write_text("snapshot 5: ...\n")
    for out, wait_s in ((done, 1.0), (silent, 3.0)):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        began = time.monotonic()
        try:
            assert cs._wait_for_child(child, out, began + 3.0) is None
            assert wait_s <= time.monotonic() - began < wait_s + 2.0, out.name
        finally:
            child.kill()
            child.wait()
    exits = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    assert cs._wait_for_child(exits, silent, time.monotonic() + 60) == 3

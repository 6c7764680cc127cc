"""bench.series: later snapshots of the bench's log, read back with the pure segment reader.

Each step must hold the previous step's batches that compaction kept, byte for byte, then its
new records at the offsets after the previous end; a removed batch holds only records a later
record of the same key supersedes in that step (not transactional, not a marker, not a
segment's last batch); a segment file that did not change is a hard link to the previous one.
"""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import pytest

from bench.series import STEPS, SeriesError, ensure_series, series_info, step_dirs
from bench.snapshot import ensure_snapshot, generate
from decoders.log import RecordBatch, iter_segment, list_segments

RECORDS = 20_000


def read_step(step: Path) -> dict[int, list[dict]]:
    """Per partition, its segments in order, each with its batches (and their raw bytes)."""
    out: dict[int, list[dict]] = {}
    for segment in list_segments(str(step)):
        data = Path(segment.path).read_bytes()
        batches = []
        for item in iter_segment(segment.path):
            assert isinstance(item, RecordBatch), item
            batches.append({
                "base": item.base_offset, "last": item.last_offset,
                "raw": data[item.file_position:item.file_position + item.batch_length],
                "transactional": item.is_transactional, "control": item.is_control,
                "producer": item.producer_id,
                "commit": item.is_control and item.records[0].control_type == 1,
                "records": [(r.offset, r.key) for r in item.records]})
        assert sum(len(b["raw"]) for b in batches) == len(data)
        out.setdefault(segment.partition, []).append(
            {"path": segment.path, "name": Path(segment.path).name,
             "base": segment.base_offset, "batches": batches})
    return out


def test_each_step_is_the_previous_compacted_plus_new_records(tmp_path):
    root = ensure_series(RECORDS, tmp_path, progress=io.StringIO())
    info = series_info(root)
    steps = step_dirs(root)
    assert [p.name for p in steps] == [f"step-{k:02d}" for k in range(STEPS + 1)]

    base = ensure_snapshot(RECORDS, tmp_path)
    base_files = list_segments(str(base))
    step0_files = list_segments(str(steps[0]))
    assert len(base_files) == len(step0_files) == 12
    for mine, theirs in zip(step0_files, base_files):
        assert os.path.samefile(mine.path, theirs.path)

    removed_total = 0
    previous = read_step(steps[0])
    for k in range(1, STEPS + 1):
        current = read_step(steps[k])
        assert set(current) == set(previous)
        added = batches_removed = records_removed = 0
        for part, segments in current.items():
            before = previous[part]
            before_batches = {b["base"]: b for s in before for b in s["batches"]}
            last_of_segment = {s["batches"][-1]["base"] for s in before}
            end = max(b["last"] for b in before_batches.values()) + 1

            # The old segments: the previous step's batches, less removals, byte for byte.
            assert [s["name"] for s in segments[:-1]] == [s["name"] for s in before]
            kept = set()
            for old, new in zip(before, segments[:-1]):
                bases = [b["base"] for b in new["batches"]]
                assert bases == [b["base"] for b in old["batches"] if b["base"] in set(bases)]
                for b in new["batches"]:
                    assert b["raw"] == before_batches[b["base"]]["raw"]
                    kept.add(b["base"])
                if [b["raw"] for b in old["batches"]] == [b["raw"] for b in new["batches"]]:
                    assert os.path.samefile(old["path"], new["path"]), new["path"]
                else:
                    assert not os.path.samefile(old["path"], new["path"])

            # The new segment: named by its base offset, offsets contiguous after the old end.
            fresh = segments[-1]
            assert fresh["base"] == end and fresh["name"] == f"{end:020d}.log"
            expected = end
            for b in fresh["batches"]:
                assert b["base"] == expected
                if not b["control"]:
                    assert [o for o, _ in b["records"]] == list(range(b["base"], b["last"] + 1))
                expected = b["last"] + 1
            added += expected - end

            # Removed batches: plain data batches, every record superseded in this step.
            committed = {b["producer"] for s in segments for b in s["batches"] if b["commit"]}
            latest: dict[bytes, int] = {}
            for s in segments:
                for b in s["batches"]:
                    if b["control"] or (b["transactional"] and b["producer"] not in committed):
                        continue
                    for offset, key in b["records"]:
                        latest[key] = max(latest.get(key, -1), offset)
            for gone in set(before_batches) - kept:
                batch = before_batches[gone]
                assert not batch["transactional"] and not batch["control"]
                assert gone not in last_of_segment
                for offset, key in batch["records"]:
                    assert latest.get(key, -1) > offset, (k, part, offset)
                batches_removed += 1
                records_removed += len(batch["records"])
        row = info["steps"][k]
        assert (row["records_added"], row["batches_removed"], row["records_removed"]) == (
            added, batches_removed, records_removed)
        removed_total += batches_removed
        previous = current
    assert removed_total > 0, "the series compacted nothing: the removal checks ran on nothing"


def test_a_cached_base_the_generator_does_not_write_is_refused(tmp_path):
    base = ensure_snapshot(RECORDS, tmp_path)
    segment = base / "__consumer_offsets-3" / f"{0:020d}.log"
    segment.write_bytes(segment.read_bytes()[:-1])
    with pytest.raises(SeriesError, match="partition 3"):
        ensure_series(RECORDS, tmp_path, progress=io.StringIO())


def test_the_generator_still_writes_the_cached_v1_snapshots(tmp_path):
    """The bytes the cached ``-v1`` snapshots were written with (the hash of the generator before
    it was made resumable): a change here invalidates every cached snapshot and series."""
    generate(tmp_path / "snap", 20_000)
    digest = hashlib.sha256()
    for path in sorted((tmp_path / "snap").rglob("*.log"),
                       key=lambda p: str(p.relative_to(tmp_path / "snap"))):
        digest.update(str(path.relative_to(tmp_path / "snap")).encode())
        digest.update(path.read_bytes())
    assert digest.hexdigest() == "6479223ba6df7ee0849b3b41b94a88bbfc640b42efdcb6a9c264de0a35b4d16c"

"""Later snapshots of the bench's log (:mod:`bench.snapshot`), cached between runs: the input of
``python -m bench``'s ``incremental`` part (an incremental lake fed one snapshot after another).

Step 0 is the bench snapshot of N records itself (its files hard-linked, not copied). Each step
1..10 is the previous step's log, then

* about 1% of N new records (``NEW_SHARE``, at least one batch per partition): every
  partition's generator (:class:`bench.snapshot.PartitionStream`) continued where the previous
  step stopped, so the same groups go on committing, their offsets, epochs and timestamps go on
  from where they were, and each partition's offsets go on after its last one; the new batches
  are a new segment file per partition named by its base offset (20 digits), as Kafka rolls one;
* compaction of old batches: from the step's older segments (every one but its new one),
  batches all of whose records are superseded by a later record of the same key in the step's
  log are removed, oldest first, until about as many records are gone as the step added (the
  base was never compacted: removing all of it at once would make the first step a full replay),
  except transactional batches, transaction markers and the last batch of a segment.
  A record supersedes an earlier one when it is not transactional or its transaction was
  committed (a marker in the log); an aborted or still open transaction supersedes nothing.

That is a log Kafka's cleaner could leave: it only removes records whose key has a later value,
keeps transaction markers and open transactions, and a segment it rewrites keeps its name and
its last batch. A batch is removed whole or kept whole, and a kept one is copied byte for byte
(same base offset, checksum and length); a segment nothing was removed from is a hard link to
the previous step's file, so the series costs the new segments plus the rewritten ones.

To continue a partition its stream is generated again from the start, and every batch of it
compared with the cached snapshot's bytes: if the generator no longer writes exactly the cached
``-v1`` files, the series fails here (:class:`SeriesError`) instead of continuing another log.

``series.json`` beside the steps says, per step: records and batches added, batches and records
removed, the groups those touch, and what the step holds (records, batches, segment bytes).

    root = ensure_series(2_000_000, Path(".cache"))   # .cache/bench/series-2000000-v1/
    step_dirs(root)                                  # [root/step-00, ..., root/step-10]
    series_info(root)["steps"][1]["records_removed"]

    python -m bench.series --records 2000000          # generate it (if not cached), print the info
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench.snapshot import (SEED, VERSION, Batch, PartitionStream, ensure_snapshot,
                            partition_budget, partition_streams)

SERIES_VERSION = "v2"
STEPS = 10
NEW_SHARE = 0.01
INFO = "series.json"
COMMIT = 1
BASE_SEGMENT = f"{0:020d}.log"


class SeriesError(RuntimeError):
    """The series cannot be made (the cached base snapshot is not what the generator writes)."""


def series_root(records: int, cache: Path) -> Path:
    return Path(cache) / "bench" / f"series-{records}-{SERIES_VERSION}"


def step_dirs(root: Path) -> list[Path]:
    """The series' snapshot directories, step 0 (the base snapshot) first."""
    return sorted(p for p in Path(root).iterdir() if p.is_dir() and p.name.startswith("step-"))


def series_info(root: Path) -> dict:
    return json.loads((Path(root) / INFO).read_text())


def ensure_series(records: int, cache: Path, progress=sys.stderr) -> Path:
    """The cached series of ``records`` records (the bench snapshot of that size, then
    ``STEPS`` later ones), generated on first use."""
    root = series_root(records, cache)
    if not (root / INFO).is_file():
        base = ensure_snapshot(records, Path(cache))
        generate_series(root, base, records, progress=progress)
    return root


@dataclass(slots=True, eq=False)
class _Entry:
    """One batch of a partition's log across the steps."""
    segment: int              # the step that wrote it (index of its segment)
    base_offset: int
    records: int
    data: bytes | None        # None once removed
    plain: bool               # neither transactional nor a marker: compaction may remove it
    group: str | None
    live: int = 0             # its records no later record of the same key supersedes


class _PartitionLog:
    """One partition's log as the steps change it: its batches, its segments, and for each key
    the record that holds its latest value (the only one of the key not superseded)."""

    def __init__(self, part: int):
        self.part = part
        self.entries: list[_Entry] = []
        self.segments: list[tuple[int, list[int]]] = []   # (base offset, entries), oldest first
        self.last: set[int] = set()                        # each segment's last entry
        self.holder: dict[bytes, tuple[int, int]] = {}     # key: (offset, entry)
        self.pending: dict[int, list[tuple[bytes, int, int]]] = {}  # producer: open txn records
        self.dead: set[int] = set()                        # plain entries with live == 0

    def append(self, segment: int, data: bytes, batch: Batch) -> _Entry:
        index = len(self.entries)
        plain = batch.control is None and not batch.transactional
        entry = _Entry(segment, batch.base_offset, len(batch.keys) or 1, data, plain, batch.group)
        self.entries.append(entry)
        if batch.control is not None:
            done = self.pending.pop(batch.producer_id, [])
            if batch.control == COMMIT:
                for key, offset, owner in done:
                    self._hold(key, offset, owner)
        elif batch.transactional:
            self.pending[batch.producer_id] = [(key, batch.base_offset + i, index)
                                               for i, key in enumerate(batch.keys)]
        else:
            for i, key in enumerate(batch.keys):
                self._hold(key, batch.base_offset + i, index)
        return entry

    def _hold(self, key: bytes, offset: int, index: int) -> None:
        """The record at ``offset`` (of entry ``index``) supersedes the key's holder, if later."""
        before = self.holder.get(key)
        if before is not None:
            if before[0] > offset:
                return
            loser = self.entries[before[1]]
            loser.live -= 1
            if loser.live == 0 and loser.plain:
                self.dead.add(before[1])
        self.holder[key] = (offset, index)
        self.entries[index].live += 1

    def add_segment(self, segment: int, indexes: list[int]) -> None:
        if indexes:
            self.segments.append((self.entries[indexes[0]].base_offset, indexes))
            self.last.add(indexes[-1])

    def compact(self, step: int, limit: int) -> list[int]:
        """Remove batches of the older segments that compaction may remove (module docstring),
        oldest first, until about ``limit`` records are gone (a cleaner that catches up a
        little each time: the base snapshot was never compacted, and removing all of it at the
        first step would make that step a full replay); returns them."""
        entries = self.entries
        candidates = sorted(i for i in self.dead if entries[i].live == 0
                            and entries[i].segment < step and i not in self.last)
        gone, removed = [], 0
        for i in candidates:
            if removed >= limit:
                break
            gone.append(i)
            removed += entries[i].records
        for i in gone:
            entries[i].data = None
        self.dead.difference_update(gone)
        self.dead.difference_update(self.last)
        return gone

    def write(self, directory: Path, previous: Path | None, changed: set[int]) -> dict:
        """The partition's segment files: the changed segments written, the others hard-linked
        to ``previous`` (the previous step's partition directory)."""
        directory.mkdir(parents=True)
        written = linked = 0
        for s, (base, indexes) in enumerate(self.segments):
            path = directory / f"{base:020d}.log"
            if s in changed or previous is None:
                kept = [i for i in indexes if self.entries[i].data is not None]
                self.segments[s] = (base, kept)
                with open(path, "wb") as out:
                    for i in kept:
                        out.write(self.entries[i].data)
                written += 1
            else:
                _link(previous / path.name, path)
                linked += 1
        return {"files_written": written, "files_linked": linked}


def _link(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:       # another file system: a copy holds the same bytes
        shutil.copyfile(source, target)


def _verified_base(log: _PartitionLog, stream: PartitionStream, budget: int, cached: Path) -> None:
    """The base of the partition generated again into ``log``, each batch compared with the
    cached snapshot's file (so the continuation starts where that file ends)."""
    on_disk = cached.read_bytes()
    view = memoryview(on_disk)
    position = 0
    indexes = []
    for data, batch in stream.take(budget):
        end = position + len(data)
        if view[position:end] != data:
            raise SeriesError(
                f"bench.series: partition {log.part}: the generator's batch at offset "
                f"{batch.base_offset} differs from the cached {cached} at byte {position}: "
                f"bench.snapshot no longer writes the cached {VERSION} snapshot; regenerate it "
                f"(remove {cached.parent.parent}) or bump bench.snapshot.VERSION")
        log.append(0, data, batch)
        indexes.append(len(log.entries) - 1)
        position = end
    if position != len(on_disk):
        raise SeriesError(
            f"bench.series: partition {log.part}: the generator ends at byte {position}, the "
            f"cached {cached} at byte {len(on_disk)}: bench.snapshot no longer writes the cached "
            f"{VERSION} snapshot; regenerate it (remove {cached.parent.parent})")
    log.add_segment(0, indexes)


def _partition_series(part: int, stream: PartitionStream, records: int, base: Path, tmp: Path,
                      steps: int) -> list[dict]:
    """Every step of one partition, written under ``tmp``; per step, what changed."""
    name = f"__consumer_offsets-{part}"
    budget = partition_budget(records, part)
    add = partition_budget(max(1, round(records * NEW_SHARE)), part)
    log = _PartitionLog(part)
    _verified_base(log, stream, budget, base / name / BASE_SEGMENT)
    (tmp / "step-00" / name).mkdir(parents=True)
    _link(base / name / BASE_SEGMENT, tmp / "step-00" / name / BASE_SEGMENT)
    out = [{"records_added": stream.offset, "batches_added": len(log.entries),
            "batches_removed": 0, "records_removed": 0,
            "groups_changed": {e.group for e in log.entries} - {None},
            "files_written": 0, "files_linked": 1}]
    for step in range(1, steps + 1):
        start, first = stream.offset, len(log.entries)
        for data, batch in stream.take(max(budget + step * add, stream.written + 1)):
            log.append(step, data, batch)
        log.add_segment(step, list(range(first, len(log.entries))))
        gone = log.compact(step, add)
        changed = {len(log.segments) - 1} | {
            s for s, (_, indexes) in enumerate(log.segments)
            if any(log.entries[i].data is None for i in indexes)}
        groups = {log.entries[i].group for i in gone}
        groups |= {e.group for e in log.entries[first:] if e.group is not None}
        files = log.write(tmp / f"step-{step:02d}" / name, tmp / f"step-{step - 1:02d}" / name,
                          changed)
        out.append({"records_added": stream.offset - start,
                    "batches_added": len(log.entries) - first, "batches_removed": len(gone),
                    "records_removed": sum(log.entries[i].records for i in gone),
                    "groups_changed": groups - {None}, **files})
    return out


def _held(step_dir: Path) -> dict:
    files = sorted(step_dir.glob("__consumer_offsets-*/*.log"))
    return {"segment_files": len(files), "bytes": sum(f.stat().st_size for f in files)}


def generate_series(root: Path, base: Path, records: int, steps: int = STEPS,
                    progress=sys.stderr) -> Path:
    """Write the series (module docstring) of the snapshot ``base`` (``ensure_snapshot(records)``)
    to ``root``, via ``root.tmp``."""
    started = time.perf_counter()
    tmp = root.with_name(root.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    per_step: list[dict] = [{} for _ in range(steps + 1)]
    for part, stream in enumerate(partition_streams(SEED)):
        for step, found in enumerate(_partition_series(part, stream, records, base, tmp, steps)):
            total = per_step[step]
            for key, value in found.items():
                if isinstance(value, set):
                    total[key] = total.get(key, set()) | value
                else:
                    total[key] = total.get(key, 0) + value
        print(f"bench.series: partition {part}: base verified, {steps} steps written "
              f"({time.perf_counter() - started:.0f}s)", file=progress)
    held_records = 0
    rows = []
    for step, total in enumerate(per_step):
        held_records += total["records_added"] - total["records_removed"]
        rows.append({"step": step, "dir": f"step-{step:02d}",
                     "records_added": total["records_added"],
                     "batches_added": total["batches_added"],
                     "batches_removed": total["batches_removed"],
                     "records_removed": total["records_removed"],
                     "groups_changed": len(total["groups_changed"]),
                     "records": held_records, **_held(tmp / f"step-{step:02d}"),
                     "files_written": total["files_written"],
                     "files_linked": total["files_linked"]})
    info = {"records": records, "version": SERIES_VERSION, "seed": SEED, "new_share": NEW_SHARE,
            "base_snapshot": str(base),
            "generation_seconds": round(time.perf_counter() - started, 1), "steps": rows}
    (tmp / INFO).write_text(json.dumps(info, indent=2) + "\n")
    shutil.rmtree(root, ignore_errors=True)
    tmp.rename(root)
    return root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.series", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--cache", type=Path, default=Path(__file__).resolve().parents[1] / ".cache")
    args = parser.parse_args(argv)
    print(json.dumps(series_info(ensure_series(args.records, args.cache)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

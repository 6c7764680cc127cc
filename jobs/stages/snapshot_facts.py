"""The snapshot-wide facts of an incremental lake's snapshot, found without a scan of what the
snapshot holds: the lake's ``gaps`` (offsets no snapshot held a record at), the snapshot's
compaction ranges from them, and its newest timestamp. The fencing audit reads both facts
(:func:`jobs.stages.audit.audit_snapshot`); a scan of a 10M-record snapshot for them would cost
more than the rest of a step.

A snapshot's new records come after the lake's newest one in each partition (compaction only
removes records), so the offsets the lake never held are the gaps between its newest record and
each snapshot's new ones (:func:`find_gaps`, written to ``gaps`` by the snapshot that found
them). An offset up to the lake's newest is then either never held (a gap), removed by some
snapshot up to S (``record_removals``), or held by S; so the ranges S lacks between its records,
which the fencing audit reads (:func:`jobs.stages.audit.compacted_ranges`), are the runs of gaps
and removals (:func:`decoders.log.gaps.held_runs`): a cost of what compaction removed, not of
the snapshot's size. A partition where a snapshot brought records below the lake's newest
(``late_records``: an earlier snapshot missed them) has gaps that are not all gaps any more: the
snapshot's ranges are then found by the scan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from decoders.log.gaps import Range, gaps_after, held_runs
from jobs.lake.delta import read_snapshot, read_snapshots
from jobs.lake.increments import GAPS, RECORD_REMOVALS, SNAPSHOT_PARTITIONS


@dataclass
class Gaps:
    """What a snapshot's new records say of the offsets the lake has held."""
    rows: list[tuple[int, int, int]] = field(default_factory=list)   # partition, start, end
    last_held: dict[int, int] = field(default_factory=dict)            # partition -> offset
    late: dict[int, int] = field(default_factory=dict)                 # partition -> records


def offsets_by_partition(table) -> dict[int, np.ndarray]:
    """An Arrow table of (partition, offset) as sorted offsets per partition."""
    partitions = table.column("partition").to_numpy(zero_copy_only=False)
    offsets = table.column("offset").to_numpy(zero_copy_only=False).astype(np.int64)
    order = np.lexsort((offsets, partitions))
    partitions, offsets = partitions[order], offsets[order]
    cuts = np.flatnonzero(np.diff(partitions)) + 1
    return {int(part[0]): offs for part, offs in zip(np.split(partitions, cuts),
                                                      np.split(offsets, cuts)) if len(part)}


def find_gaps(spark, lake: Path, earlier: list[str], new_keys) -> Gaps:
    """The gaps a snapshot's new records (``new_keys``: partition, offset) open after the
    lake's newest record of each partition, and the newest one after it."""
    before: dict[int, int] = {}
    if earlier:
        before = {r[0]: r[1] for r in read_snapshot(spark, lake, SNAPSHOT_PARTITIONS, earlier[-1])
                  .select("partition", "last_held_offset").collect() if r[1] is not None}
    found = Gaps(last_held=dict(before))
    for partition, offsets in offsets_by_partition(new_keys.toArrow()).items():
        last = before.get(partition, -1)
        later = offsets[offsets > last]
        found.late[partition] = int(len(offsets) - len(later))
        found.rows += [(partition, s, e) for s, e in gaps_after(last, later)]
        if len(later):
            found.last_held[partition] = int(later[-1])
    return found


def compaction_ranges(spark, lake: Path, earlier: list[str], gaps: Gaps,
                      removed, removals: bool = True) -> dict[int, list[Range]] | None:
    """The ranges the snapshot lacks between its records, per partition (as
    :func:`jobs.stages.audit.compacted_ranges` finds them by a scan), from the lake's gaps and
    every removal up to it (``removed``: this snapshot's ``record_removals`` rows). Without
    ``removals``, the ranges the lake lacks (its gaps alone: the offsets no snapshot up to it
    held). None when a partition ever had late records: the caller scans."""
    from pyspark.sql import functions as F

    if any(gaps.late.values()):
        return None
    ranges: dict[int, list[Range]] = {}
    wanted, removals = removals, removed.select("partition", "offset")
    if earlier:
        late = (read_snapshots(spark, lake, SNAPSHOT_PARTITIONS, earlier)
                .where(F.col("late_records") > 0).limit(1).collect())
        if late:
            return None
        for row in (read_snapshots(spark, lake, GAPS, earlier)
                    .select("partition", "start_offset", "end_offset").collect()):
            ranges.setdefault(row[0], []).append((row[1], row[2]))
        if wanted:
            removals = removals.unionByName(read_snapshots(spark, lake, RECORD_REMOVALS, earlier)
                                            .select("partition", "offset"))
    for partition, start, end in gaps.rows:
        ranges.setdefault(partition, []).append((start, end))
    points = offsets_by_partition(removals.toArrow()) if wanted else {}
    found = {}
    for partition, last in sorted(gaps.last_held.items()):
        runs = held_runs(ranges.get(partition, []), points.get(partition, np.array([], np.int64)),
                         last)
        if runs:
            found[partition] = runs
    return found


def newest_timestamp(spark, lake: Path, inc) -> int | None:
    """The newest record timestamp the snapshot (``inc``: :class:`jobs.stages.increment.Increment`)
    holds, exactly, without a scan of it: what it read is all held; of the rest, it holds nothing
    the previous snapshot did not, so nothing newer than the previous snapshot's newest
    (``snapshots.newest_timestamp``), which it still holds unless compaction removed every
    record of that time (then, rarely, a scan)."""
    from pyspark.sql import functions as F

    from jobs.lake.increments import SNAPSHOTS
    from jobs.stages.ingest import raw_records_rows

    keys = ["partition", "offset"]
    read = raw_records_rows(inc.staged.rows).agg(F.max("timestamp")).collect()[0][0]
    if not inc.earlier:
        return read
    rows = read_snapshot(spark, lake, SNAPSHOTS, inc.earlier[-1]).select("newest_timestamp").collect()
    before = rows[0][0] if rows else None
    if before is None or (read is not None and read >= before):
        return read
    at = [tuple(r) for r in inc.lake_rows.where(F.col("timestamp") == before).select(*keys)
          .collect()]
    if at:
        removed = {tuple(r) for r in inc.gone.join(
            F.broadcast(spark.createDataFrame(at, "partition int, offset bigint")), keys,
            "left_semi").collect()}
        if set(at) - removed:
            return before
    held = inc.present(inc.lake_rows.select(*keys, "timestamp")).agg(F.max("timestamp"))
    known = [t for t in (read, held.collect()[0][0]) if t is not None]
    return max(known) if known else None

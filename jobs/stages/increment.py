"""Incremental ingest: a snapshot into a lake that keeps each record once (docs/lake.md, "Across
snapshots").

The snapshot's segment files are indexed by a header walk (:mod:`decoders.log.index`); a batch
the lake already holds with the same identity (partition, base offset, checksum, length) is
skipped, and only the rest is read, by the ingest's own range reader, as byte spans. What was
read is checked against the lake: a record at a (partition, offset) the lake holds must carry
the same bytes (a rewritten batch holds a subset of the records it replaced), else the snapshot
is refused (:class:`LakeConflict`), not merged. Then:

* ``raw_records`` gets the records the lake did not hold, under this snapshot's id;
* ``record_removals`` the records the previous snapshot held that this one does not: the lake's
  records of a batch the snapshot no longer holds unchanged, and not read again in its rewrite;
* ``batches``, ``snapshot_partitions`` and, last, ``snapshots`` (a snapshot listed there is
  complete: every table is replaced per snapshot, so a rerun after a crash writes it again).

A capture has no batches: all of it is read, and the same checks sort it into held and new.
"""

from __future__ import annotations

import shutil
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from decoders.log import list_segments, plan_ranges
from decoders.log.index import BatchRef, Unindexed, index_segments, spans
from jobs.lake import QUARANTINE, RAW_RECORDS, RECORDS, replace_snapshot
from jobs.lake.delta import logged_snapshot_ids, read_snapshot, read_snapshots
from jobs.lake.snapshot_views import LakeConflict, LakeOrder, holds_full_runs, is_incremental
from jobs.lake.increments import (BATCHES, BATCHES_COLUMNS, GAPS, GAPS_COLUMNS,
                                  LARGEST_RECORDS, LARGEST_RECORDS_COLUMNS,
                                  RAW_NON_COMMIT_RECORDS, RAW_NON_COMMIT_RECORDS_COLUMNS,
                                  RECORD_REMOVALS, SNAPSHOT_PARTITIONS, SNAPSHOT_PARTITIONS_COLUMNS, SNAPSHOTS,
                                  SNAPSHOTS_COLUMNS)
from jobs.runtime.config import DEFAULT_RANGE_MB, load_config
from jobs.stages.frames import hold
from jobs.stages.snapshot_facts import Gaps, find_gaps, newest_timestamp
from jobs.stages.ingest import (COLUMNAR_CONF, INGEST_STAGES, capture_manifest,
                                ingest_quarantine_rows, raw_records_rows, resolve_snapshot_id,
                                stage_snapshot, staging_dir)
from jobs.stages.segment_rows import RangeTask, ReadLimits


@dataclass
class IncrementPlan:
    """What to read of a snapshot's segment files, and what it holds that the lake has."""
    held: list[BatchRef]                      # skipped: the lake holds them unchanged
    read: list[BatchRef | Unindexed]          # new or rewritten batches, damage
    tasks: list[RangeTask]
    files: int
    bytes_total: int
    ends: dict[int | None, tuple[int, int]] = field(default_factory=dict)  # partition: start, end

    @property
    def bytes_read(self) -> int:
        return sum(item.length for item in self.read)


def plan_increment(segments, held_identities: set, range_bytes: int) -> IncrementPlan:
    """Sort the snapshot's entries into held (identity in ``held_identities``) and to read; the
    spans to read cut into tasks of at most ``range_bytes`` (a cut inside an entry is fine: a
    task reads the entries that start in it)."""
    held, read, ends, files, total = [], [], {}, 0, 0
    for segment in segments:
        files, total = files + 1, total + segment.size
        for item in index_segments([segment]):
            if isinstance(item, BatchRef):
                start, end = ends.get(item.partition, (item.base_offset, item.last_offset + 1))
                ends[item.partition] = (min(start, item.base_offset),
                                        max(end, item.last_offset + 1))
                if item.identity in held_identities:
                    held.append(item)
                    continue
            read.append(item)
    tasks = [RangeTask(path, partition, start + a, start + b)
             for path, partition, start, end in spans(read)
             for a, b in plan_ranges(end - start, range_bytes)]
    return IncrementPlan(held, read, tasks, files, total, ends)


def cluster_id(paths: list[str]) -> str | None:
    """The cluster the snapshot comes from: a capture's manifest, else ``cluster.id`` of a
    ``meta.properties`` in a snapshot directory (beside the partition directories, as in a
    broker's log dir) or above a partition directory given alone."""
    manifest = capture_manifest(paths)
    if manifest is not None:
        return manifest.get("cluster_id")
    for path in map(Path, paths):
        for candidate in (path / "meta.properties", path.parent / "meta.properties"):
            if candidate.is_file():
                for line in candidate.read_text().splitlines():
                    key, _, value = line.partition("=")
                    if key.strip() == "cluster.id":
                        return value.strip()
    return None


def _frame(spark, rows: list[tuple], columns) -> object:
    """A DataFrame of ``rows`` (tuples our code built, typed as ``columns`` declares), not
    checked row by row (the 143k held batches of a 10M step: about 1 s in the driver)."""
    return spark.createDataFrame(rows, ", ".join(f"`{n}` {t}" for n, t, _ in columns),
                                 verifySchema=False)


@dataclass
class IncrementReport:
    snapshot_id: str
    seq: int
    records: int
    new_records: int
    removed_records: int
    batches_skipped: int
    bytes_total: int
    bytes_read: int
    rows_quarantined: int
    seconds: float

    def summary(self) -> str:
        return (f"snapshot {self.snapshot_id} (#{self.seq} of the lake): {self.records} records, "
                f"{self.new_records} new, {self.removed_records} removed since the previous "
                f"snapshot; {self.batches_skipped} batches held unchanged skipped, "
                f"{self.bytes_read}/{self.bytes_total} segment bytes read, "
                f"{self.rows_quarantined} unit(s) quarantined ({self.seconds:.1f}s)")


BACKFILL_HINT = ("; to keep it beside the lake's snapshots without changing them, run it with "
                 "--backfill (docs/lake.md, 'Backfills')")


def check_cluster(order: LakeOrder, snapshot_id: str, cluster: str | None) -> None:
    """Refuse a snapshot of another cluster than the lake's (when both say which)."""
    clusters = {c for _, _, c in order.rows if c is not None}
    if cluster is not None and clusters and cluster not in clusters:
        raise LakeConflict(f"snapshot {snapshot_id!r} is of cluster {cluster!r}; the lake holds "
                           f"cluster {sorted(clusters)[0]!r}: use another lake")


def _check_order(order: LakeOrder, snapshot_id: str, cluster: str | None, ends: dict,
                 newest_ends: dict, rewritten: list[BatchRef]) -> None:
    check_cluster(order, snapshot_id, cluster)
    behind = sorted(p for p, (_, end) in ends.items() if end < newest_ends.get(p, end))
    if behind:
        raise LakeConflict(f"snapshot {snapshot_id!r} is older than the lake's newest: "
                           f"partition(s) {behind} end before the newest snapshot's end"
                           + BACKFILL_HINT)
    if rewritten:
        raise LakeConflict(f"snapshot {snapshot_id!r} is older than the lake's newest: it holds "
                           f"{len(rewritten)} batch(es) as they were before the log cleaner "
                           "rewrote them (" + ", ".join(
                               f"partition {b.partition} base offset {b.base_offset}"
                               for b in rewritten[:3]) + ")" + BACKFILL_HINT)


def _held_batches(spark, lake: Path, order: LakeOrder, earlier: list[str]) -> tuple[set, set]:
    """``(held, superseded)``: the identities of the batches the earlier snapshots read, and
    those of them a later one read another version of (the same partition and base offset: the
    log cleaner rewrote it). A snapshot holding a superseded batch was taken before the rewrite."""
    if not earlier:
        return set(), set()
    seqs = {sid: seq for sid, seq, _ in order.rows}
    held, latest = set(), {}
    # through Arrow: a lake of 10M records holds about 150k batches, 1.8 s collected as Rows
    batches = (read_snapshots(spark, lake, BATCHES, earlier)
               .select("snapshot_id", "partition", "base_offset", "crc", "length").toArrow())
    for sid, *identity in zip(*(column.to_pylist() for column in batches.columns)):
        identity = tuple(identity)
        held.add(identity)
        place = latest.get(identity[:2])
        if place is None or seqs[sid] > place[0]:
            latest[identity[:2]] = (seqs[sid], identity)
    return held, held - {identity for _, identity in latest.values()}


def _newest_partitions(spark, lake: Path, earlier: list[str]) -> dict:
    """partition -> (log end offset, records) of the newest of ``earlier`` (none: {})."""
    if not earlier:
        return {}
    return {r[0]: (r[1], r[2]) for r in read_snapshot(spark, lake, SNAPSHOT_PARTITIONS, earlier[-1])
            .select("partition", "log_end_offset", "records").collect()}


def known_largest(spark, lake: Path, earlier: list[str]) -> dict[str, int]:
    """Snapshot id -> the raw key and value bytes of the largest record it read, for each of
    ``earlier`` whose figure ``largest_records`` gives (not a capture's, none of a lake written
    before the table)."""
    from jobs.lake.delta import has_table

    if not earlier or not has_table(lake, LARGEST_RECORDS):
        return {}
    return {r[0]: r[1] for r in read_snapshots(spark, lake, LARGEST_RECORDS, earlier).collect()
            if r[1] is not None}


def largest_row(spark, lake: Path, earlier: list[str], sizes: dict | None = None) -> int | None:
    """Raw key and value bytes of the largest record ``earlier`` (snapshot ids) read, which is
    the largest row of theirs the lake holds; None when a snapshot's is not known (a capture, or
    a snapshot written before ``largest_records``) and 0 for no snapshot. ``sizes``: the
    figures by snapshot id, when the caller has them (:func:`known_largest`, with what
    :func:`fill_largest` read)."""
    if not earlier:
        return 0
    sizes = known_largest(spark, lake, earlier) if sizes is None else sizes
    known = [sizes.get(sid) for sid in earlier]
    return None if None in known else max(known)


def fill_largest(spark, lake: Path, earlier: list[str], progress,
                 known: dict | None = None) -> dict[str, int]:
    """Snapshot id -> the largest record's raw key and value bytes, for each of ``earlier``
    whose figure is not ``known`` (:func:`known_largest`), read from the ``raw_records`` rows
    it was the first to hold (0 for none). That is not always the largest it read (it may have
    read again a larger record an earlier snapshot held), but the largest over the lake's
    snapshots is the lake's largest row either way, which is all :func:`columnar_rows` reads.
    One scan of those rows, row by row, once: the run writes the figures
    (:func:`write_filled`) and the lake's next run knows them."""
    from pyspark.sql import functions as F

    known = known_largest(spark, lake, earlier) if known is None else known
    missing = [sid for sid in earlier if sid not in known]
    if not missing:
        return {}
    print(f"ingest: largest_records does not give the largest record of {len(missing)} "
          "earlier snapshot(s) (a lake written before the table, or a capture): read from "
          "their raw_records once, so this run and the next read the lake a batch at a time "
          "when it allows", file=progress)
    size = F.coalesce(F.length("key"), F.lit(0)) + F.coalesce(F.length("value"), F.lit(0))
    found = {r[0]: r[1] for r in read_snapshots(spark, lake, RAW_RECORDS, missing)
             .groupBy("snapshot_id").agg(F.max(size)).collect()}
    return {sid: int(found.get(sid) or 0) for sid in missing}


def write_filled(spark, lake: Path, filled: dict[str, int]) -> None:
    """The figures :func:`fill_largest` read, each replacing its snapshot's row of
    ``largest_records`` (one commit)."""
    from jobs.lake.delta import replace_snapshots

    if filled:
        replace_snapshots(_frame(spark, sorted(filled.items()), LARGEST_RECORDS_COLUMNS), lake,
                          LARGEST_RECORDS, sorted(filled))


def columnar_rows(spark, lake: Path, earlier: list[str], staged, budget: int,
                  sizes: dict | None = None) -> int | None:
    """Rows per vectorized Parquet batch for a run's reads of the lake and of the snapshot's
    ``staged`` rows: :func:`jobs.stages.ingest.columnar_batch_rows` of ``budget`` bytes for the
    largest row the ``earlier`` snapshots and this one read (``sizes``: as
    :func:`largest_row` takes them); None (row by row) when one of them is not known."""
    from jobs.stages.ingest import columnar_batch_rows

    held = largest_row(spark, lake, earlier, sizes)
    if held is None or staged.largest_row_bytes is None:
        return None
    return columnar_batch_rows(max(held, staged.largest_row_bytes), budget)


@contextmanager
def columnar_reads(spark, rows: int | None):
    """Within it, ``spark`` reads Parquet ``rows`` rows at a time (Spark's vectorized reader, a
    batch of every column), as a run reads the staged rows of a snapshot whose largest row allows
    it (:func:`jobs.stages.ingest.read_back`); ``rows`` None: as it was (row by row, as
    ``conf/offsetlake.yaml`` sets it). The settings are restored on the way out. A wide scan of
    a 10M-record lake's ``records`` takes about half the time a batch at a time. (A query plans
    its scans with whole-stage code generation only: a short job's session reads row by row.)"""
    if rows is None:
        yield
        return
    saved = {k: spark.conf.get(k, None) for k in COLUMNAR_CONF}
    spark.conf.set(COLUMNAR_CONF[0], "true")
    spark.conf.set(COLUMNAR_CONF[1], str(rows))
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def _newest_ends(spark, lake: Path, earlier: list[str]) -> dict:
    return {p: end for p, (end, _) in _newest_partitions(spark, lake, earlier).items()}


def older_than(spark, lake: Path, order: LakeOrder, segments) -> bool:
    """Whether a snapshot of ``segments`` was taken before the lake's newest: some partition
    ends before the newest's end, or it holds a batch the log cleaner has rewritten since."""
    held, superseded = _held_batches(spark, lake, order, order.ids)
    plan = plan_increment(segments, held, DEFAULT_RANGE_MB << 20)
    ends = _newest_ends(spark, lake, order.ids)
    return (any(end < ends.get(p, end) for p, (_, end) in plan.ends.items())
            or any(b.identity in superseded for b in plan.held))


def conflicting_rows(read_rows, held):
    """Rows read at a (partition, offset) the lake holds whose bytes differ from the lake's."""
    from pyspark.sql import functions as F

    compared = ("key", "value", "timestamp", "is_control", "producer_id")
    mine = read_rows.select("partition", "offset", *[F.col(c).alias(f"read_{c}") for c in compared])
    joined = mine.join(held.select("partition", "offset", *compared), ["partition", "offset"])
    same = F.lit(True)
    for c in compared:
        same = same & F.col(f"read_{c}").eqNullSafe(F.col(c))
    return joined.where(~same).select("partition", "offset")


@dataclass
class Increment:
    """A snapshot prepared to join the lake: read where the lake does not hold it, checked, and
    sorted into held and new rows (staged under ``staging`` until the run ends).

    Only the batches the snapshot does not hold unchanged can hold a removed or a new record, so
    every frame of what changed is computed from those (``unheld``) and held once, small: a
    step costs what changed, not the lake's size."""
    snapshot_id: str
    seq: int
    earlier: list[str]          # the lake's snapshots before it, oldest first
    cluster: str | None
    plan: IncrementPlan | None  # None for a capture
    staged: object              # jobs.stages.ingest.Staged: the rows read (and decoded)
    staging: Path
    lake_rows: object           # raw_records of the earlier snapshots
    new_keys: object            # (partition, offset) of the records the lake did not hold
    removed: object             # record_removals rows of this snapshot
    gone: object                # (partition, offset) of every record removed up to this one
    before: dict                # partition -> records the previous snapshot held
    gaps: Gaps                  # what its new records say of the offsets the lake held
    new_count: int = 0
    removed_count: int = 0
    newest: int | None = None   # the newest record timestamp it holds (newest_timestamp)
    columnar_rows: int | None = None   # rows per vectorized Parquet batch (columnar_rows)
    filled_largest: dict = field(default_factory=dict)   # fill_largest's, for write_filled
    non_commits: object = None  # lake_rows' rows that are not offset commits (non_commit_rows)
    _markers: object = field(default=None, repr=False)   # markers(), once read

    @property
    def held_batches(self) -> int:
        return len(self.plan.held) if self.plan else 0

    def new_rows(self):
        """The staged rows (records, quarantine units) of what the lake did not hold."""
        from pyspark.sql import functions as F

        if not self.earlier:
            return self.staged.rows
        record = F.col("row_kind") == "record"
        return self.staged.rows.where(~record).unionByName(
            self.staged.rows.where(record).join(small(self.new_keys, self.new_count),
                                                ["partition", "offset"], "left_semi"))

    def markers(self):
        """The lake's transaction markers (its control records, held by the earlier snapshots,
        present now or not), read once per run: a few rows, but every use of them scanned all
        of ``raw_records``."""
        if self._markers is None:
            self._markers = hold(self.non_commits.sparkSession,
                                 self.non_commits.where("is_control"), self.staging,
                                 "lake_markers", local=False)
        return self._markers

    def present(self, frame):
        """The rows of ``frame`` (lake rows: ``partition``, ``offset``) the snapshot holds."""
        return frame.join(self.gone, ["partition", "offset"], "left_anti")


# The staged positions of every record removed up to the snapshot (``Increment.gone``).
GONE = "gone"

# A frame of up to this many rows is sent whole to every task as a join's small side; a
# larger one (a first snapshot's new keys, a compaction burst's removals) is joined by a shuffle.
BROADCAST_ROWS = 1_000_000


def small(frame, rows: int):
    """``frame`` (of ``rows`` rows) marked for a broadcast join when it is small enough."""
    from pyspark.sql import functions as F

    return F.broadcast(frame) if rows <= BROADCAST_ROWS else frame


def among(frame, keys, rows: int):
    """The rows of ``frame`` at the positions of ``keys`` (``partition``, ``offset``; ``rows``
    of them): a semi-join, after a filter on each partition's span of ``keys``, which Parquet
    pushes down and which spares the join every row outside it (a compaction's removals are a
    partition's oldest records: the filter keeps a few percent of the lake)."""
    from functools import reduce

    from pyspark.sql import functions as F

    spans = keys.groupBy("partition").agg(F.min("offset"), F.max("offset")).collect()
    if not spans:
        return frame.limit(0)
    within = reduce(lambda a, b: a | b, [
        (F.col("partition") == p) & F.col("offset").between(low, high) for p, low, high in spans])
    return frame.where(within).join(small(keys, rows), ["partition", "offset"], "left_semi")


def prepare_increment(spark, lake: Path, paths: list[str], snapshot_id: str | None = None,
                      range_bytes: int = DEFAULT_RANGE_MB << 20, progress=None,
                      limits=None, decode: bool = False) -> Increment:
    """Read what the lake does not hold of the snapshot and check it against the lake; raises
    :class:`LakeConflict` (nothing written, nothing staged) when it cannot join. The caller
    removes ``staging`` when done (:func:`ingest_increment`)."""
    progress = sys.stderr if progress is None else progress  # now, not at import
    limits = limits or ReadLimits.from_settings(load_config().ingest)
    snapshot_id = resolve_snapshot_id(paths, snapshot_id)
    if holds_full_runs(lake):
        full = logged_snapshot_ids(lake, RAW_RECORDS) or []
        raise LakeConflict(f"the lake {lake} holds snapshots ingested in full "
                           f"({', '.join(full)}): an incremental lake keeps each record "
                           "once; use another lake")
    if not is_incremental(lake):
        # The lake is incremental from now on, even if this first run dies: a rerun then
        # takes the rows it left for a crashed increment's, as it does later on.
        replace_snapshot(_frame(spark, [], SNAPSHOTS_COLUMNS), lake, SNAPSHOTS, snapshot_id)
    order = LakeOrder.read(spark, lake)
    seq = order.seq_for(snapshot_id)
    earlier = order.before(seq)
    cluster = cluster_id(paths)
    held_ids, superseded = _held_batches(spark, lake, order, earlier)
    plan = (None if capture_manifest(paths) is not None
            else plan_increment(list_segments(paths), held_ids, range_bytes))
    previous = _newest_partitions(spark, lake, earlier)
    _check_order(order, snapshot_id, cluster, plan.ends if plan else {},
                 {p: end for p, (end, _) in previous.items()},
                 [b for b in plan.held if b.identity in superseded] if plan else [])
    if plan is not None:
        print(f"ingest: {len(plan.held)} batch(es) the lake holds skipped, {len(plan.read)} "
              f"entr(ies) to read: {plan.bytes_read} of {plan.bytes_total} bytes", file=progress)
    staging = staging_dir(lake, snapshot_id)
    try:
        staged = stage_snapshot(spark, paths, snapshot_id, staging, decode=decode,
                                range_bytes=range_bytes, progress=progress, limits=limits,
                                plan=None if plan is None else (plan.tasks, plan.files,
                                                                plan.bytes_read))
        known = known_largest(spark, lake, earlier)
        # a capture's own rows are read row by row: the lake's figures can wait for a run
        # that reads them
        filled = (fill_largest(spark, lake, earlier, progress, known)
                  if staged.largest_row_bytes is not None else {})
        rows = columnar_rows(spark, lake, earlier, staged, limits.columnar_batch_bytes,
                             {**known, **filled})
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    with columnar_reads(spark, rows):   # the lake's rows and the new ones, when their size allows
        inc = _against_lake(spark, lake, snapshot_id, seq, earlier, cluster, plan, staged,
                            staging, previous)
    inc.columnar_rows, inc.filled_largest = rows, filled
    return inc


def _against_lake(spark, lake: Path, snapshot_id: str, seq: int, earlier: list[str],
                  cluster: str | None, plan: IncrementPlan | None, staged, staging: Path,
                  previous: dict) -> Increment:
    """The staged snapshot checked against the lake and sorted into held and new rows
    (:func:`prepare_increment`); removes ``staging`` when it cannot join."""
    from pyspark.sql import functions as F

    try:
        read_rows = raw_records_rows(staged.rows)
        lake_rows = (read_snapshots(spark, lake, RAW_RECORDS, earlier)
                     if earlier else read_rows.limit(0))
        unheld = _unheld(spark, lake_rows, plan, staging, staged.local)
        bad = _conflicts(spark, read_rows, lake_rows, unheld, staging, staged.local) \
            if earlier else []
        if bad:
            raise LakeConflict(
                f"snapshot {snapshot_id!r} disagrees with the lake at "
                + ", ".join(f"partition {r[0]} offset {r[1]}" for r in bad)
                + ": the same (partition, offset) with other bytes (another cluster, or a log "
                  "truncated and written again); nothing was written")
        keys = ["partition", "offset"]
        gone_before = (read_snapshots(spark, lake, RECORD_REMOVALS, earlier)
                       .select(*keys) if earlier else read_rows.select(*keys).limit(0))
        removed = hold(spark, unheld.select(*keys).join(gone_before, keys, "left_anti")
                       .join(read_rows.select(*keys), keys, "left_anti")
                       .select(F.lit(snapshot_id).alias("snapshot_id"), *keys),
                       staging, "removed", staged.local)
        new_keys = hold(spark, read_rows.select(*keys).join(unheld.select(*keys), keys, "left_anti"),
                        staging, "new_keys", staged.local)
        # every use of the snapshot's view of the lake (present) anti-joins these: held once,
        # not a scan of every earlier snapshot's removals each time
        gone = (hold(spark, gone_before.unionByName(removed.select(*keys)), staging, GONE,
                     local=False) if earlier else removed.select(*keys))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    before = {p: records for p, (_, records) in previous.items()}
    inc = Increment(snapshot_id, seq, earlier, cluster, plan, staged, staging, lake_rows,
                    new_keys, removed, gone, before,
                    find_gaps(spark, lake, earlier, new_keys), new_keys.count(), removed.count())
    inc.newest = newest_timestamp(spark, lake, inc)
    inc.non_commits = non_commit_rows(spark, lake, earlier) if earlier else lake_rows
    return inc


def is_non_commit():
    """True for a ``raw_records`` row that is not an offset commit: a transaction marker, or a
    data record whose key's type (its first two bytes) is neither 0 nor 1, or is missing."""
    from pyspark.sql import functions as F

    return F.coalesce(F.col("is_control") | ~F.hex(F.substring("key", 1, 2)).isin("0000", "0001"),
                      F.lit(True))


def non_commit_frame(spark, snapshot_id: str, raw):
    """The snapshot's ``raw_non_commit_records`` rows: those of ``raw`` (its ``raw_records``
    rows) that are not offset commits, and its one row null but for ``snapshot_id``."""
    from pyspark.sql import functions as F

    nulls = spark.createDataFrame([(snapshot_id,)], "snapshot_id string").select(*[
        F.col(name) if name == "snapshot_id" else F.lit(None).cast(dtype).alias(name)
        for name, dtype, _ in RAW_NON_COMMIT_RECORDS_COLUMNS])
    return raw.where(is_non_commit()).unionByName(nulls)


def non_commit_rows(spark, lake: Path, earlier: list[str]):
    """The ``raw_records`` rows of the ``earlier`` snapshots that are not offset commits (the
    replay decodes the held membership records again; the fencing audit reads the markers):
    from ``raw_non_commit_records`` (about 1% of the lake's records, its rows of nulls left out)
    for every snapshot it lists, from ``raw_records`` for those written before it."""
    from functools import reduce

    from pyspark.sql import functions as F

    from jobs.lake.delta import split_logged

    kept, older = split_logged(lake, RAW_NON_COMMIT_RECORDS, earlier)
    parts = []
    if kept:
        parts.append(read_snapshots(spark, lake, RAW_NON_COMMIT_RECORDS, kept)
                     .where(F.col("partition").isNotNull()))
    if older:
        parts.append(read_snapshots(spark, lake, RAW_RECORDS, older).where(is_non_commit()))
    columns = [name for name, _, _ in RAW_NON_COMMIT_RECORDS_COLUMNS]
    return reduce(lambda a, b: a.unionByName(b), [p.select(*columns) for p in parts])


def _unheld(spark, lake_rows, plan: IncrementPlan | None, staging: Path, local: bool):
    """The positions (``partition``, ``offset``) of the lake's rows of the batches the snapshot
    does not hold unchanged (rewritten by the cleaner, removed whole, or read again), held once:
    every new or removed record, and every record read that the lake holds, is among them. A
    capture has no batches: all lake rows. Positions only: a scan of the lake's rows that reads
    their bytes costs about four times one that does not (10M records: 26 s against 6 s)."""
    from pyspark.sql import functions as F

    keys = lake_rows.select("partition", "offset", "batch_base_offset")
    if plan is not None:
        held_bases = _frame(spark, sorted({(b.partition, b.base_offset) for b in plan.held}),
                            (("partition", "int", ""), ("batch_base_offset", "bigint", "")))
        keys = keys.join(F.broadcast(held_bases), ["partition", "batch_base_offset"], "left_anti")
    return hold(spark, keys.select("partition", "offset"), staging, "unheld", local)


def _conflicts(spark, read_rows, lake_rows, unheld, staging: Path, local: bool) -> list:
    """Up to five positions the snapshot read whose bytes differ from the lake's: the lake's
    bytes are read only at the positions both hold outside the batches the snapshot holds
    unchanged (the records of batches the cleaner rewrote; none when it only removed batches
    whole or the snapshot only adds)."""
    keys = ["partition", "offset"]
    both = hold(spark, read_rows.select(*keys).join(unheld, keys, "left_semi"), staging,
                "read_again", local)
    count = both.count()
    if not count:
        return []
    held = among(lake_rows, both, count)
    return conflicting_rows(read_rows, held).limit(5).collect()


def bronze_frames(spark, inc: Increment, decode: bool) -> dict:
    """What the snapshot writes of its records, by table: ``raw_records`` and
    ``raw_non_commit_records`` (and, decoded, ``records``, ``record_facts``) of the new records,
    its ``quarantine`` units (decoded: with the new records that did not decode),
    ``record_removals``, ``batches`` and ``largest_records``."""
    from pyspark.sql import functions as F

    from jobs.lake.downgrade import RECORD_FACTS
    from jobs.stages.decode import quarantine_columns, record_facts_columns, records_columns

    new_rows = inc.new_rows()
    frames = {RAW_RECORDS: raw_records_rows(new_rows),
              QUARANTINE: ingest_quarantine_rows(inc.staged.rows)}
    frames[RAW_NON_COMMIT_RECORDS] = non_commit_frame(spark, inc.snapshot_id, frames[RAW_RECORDS])
    if decode:
        data = new_rows.where((F.col("row_kind") == "record") & ~F.col("is_control"))
        ok = F.col("error_reason").isNull()
        frames[RECORDS] = data.where(ok).select(*records_columns())
        frames[RECORD_FACTS] = data.select(*record_facts_columns())
        frames[QUARANTINE] = frames[QUARANTINE].unionByName(quarantine_columns(data.where(~ok)))
    frames[RECORD_REMOVALS] = inc.removed
    frames[LARGEST_RECORDS] = _frame(spark, [(inc.snapshot_id, inc.staged.largest_row_bytes)],
                                     LARGEST_RECORDS_COLUMNS)
    frames[GAPS] = _frame(spark, [(inc.snapshot_id, *row) for row in inc.gaps.rows], GAPS_COLUMNS)
    batches = [(inc.snapshot_id, b.partition, b.base_offset, b.last_offset, b.crc, b.length,
                b.magic, b.records)
               for b in (inc.plan.read if inc.plan else []) if isinstance(b, BatchRef)]
    frames[BATCHES] = _frame(spark, batches, BATCHES_COLUMNS)
    return frames


def write_bronze(spark, lake: Path, inc: Increment) -> None:
    """:func:`bronze_frames` undecoded, each replacing the snapshot's rows of its table (the
    ingest's own quarantine rows only: a run's decode rows stay)."""
    for table, frame in bronze_frames(spark, inc, decode=False).items():
        replace_snapshot(frame, lake, table, inc.snapshot_id,
                         only=INGEST_STAGES if table == QUARANTINE else None)


def write_listing(spark, lake: Path, inc: Increment) -> IncrementReport:
    """``snapshot_partitions`` and, last, the snapshot's row of ``snapshots``: from then on the
    lake lists it as complete."""
    read_rows = raw_records_rows(inc.staged.rows)
    new_rows = read_rows.join(inc.new_keys, ["partition", "offset"], "left_semi")
    counts = _partition_counts(inc.before, inc.removed, new_rows, read_rows)
    ends = inc.plan.ends if inc.plan else counts["ends"]
    parts = [(inc.snapshot_id, p, *ends.get(p, (None, None)), *counts["partitions"][p],
              inc.gaps.last_held.get(p), inc.gaps.late.get(p, 0))
             for p in sorted(counts["partitions"])]
    replace_snapshot(_frame(spark, parts, SNAPSHOT_PARTITIONS_COLUMNS), lake,
                     SNAPSHOT_PARTITIONS, inc.snapshot_id)
    total, new, gone = (sum(c[i] for c in counts["partitions"].values()) for i in range(3))
    report = IncrementReport(inc.snapshot_id, inc.seq, total, new, gone, inc.held_batches,
                             inc.plan.bytes_total if inc.plan else 0,
                             inc.plan.bytes_read if inc.plan else 0,
                             inc.staged.units_quarantined, 0.0)
    replace_snapshot(_frame(spark, [(inc.snapshot_id, inc.seq, inc.cluster, inc.staged.source,
                                     total, new, gone, report.batches_skipped,
                                     report.bytes_read, inc.newest)], SNAPSHOTS_COLUMNS),
                     lake, SNAPSHOTS, inc.snapshot_id)
    return report


def ingest_increment(spark, lake: Path, paths: list[str], snapshot_id: str | None = None,
                     range_bytes: int = DEFAULT_RANGE_MB << 20, progress=None,
                     limits=None) -> IncrementReport:
    """Ingest a snapshot into an incremental lake (``offsetlake ingest --incremental``): only
    what the lake does not hold is read and written (module docstring), undecoded (an
    incremental run decodes the new records as it reads them: :mod:`jobs.stages.increment_run`).
    Raises :class:`LakeConflict` before writing anything when the snapshot cannot join the lake.

    >>> ingest_increment(spark, Path("lake"), ["/data/snap-0600"]).new_records  # doctest: +SKIP
    41230
    """
    progress = sys.stderr if progress is None else progress  # now, not at import
    started = time.monotonic()
    inc = prepare_increment(spark, lake, paths, snapshot_id, range_bytes, progress, limits)
    try:
        write_filled(spark, lake, inc.filled_largest)
        write_bronze(spark, lake, inc)
        report = write_listing(spark, lake, inc)
    finally:
        shutil.rmtree(inc.staging, ignore_errors=True)
    report.seconds = time.monotonic() - started
    return report


def _partition_counts(before: dict, removed, new_rows, read_rows) -> dict:
    """Per partition: (records held, new, removed), from the previous snapshot's counts
    (``before``); and, from what was read, each partition's offsets (a capture's log start and
    end, which it has no batches for)."""
    from pyspark.sql import functions as F

    def by_partition(frame) -> dict:
        return {r[0]: r[1] for r in frame.groupBy("partition").count().collect()}

    gone, new = by_partition(removed), by_partition(new_rows)
    parts = {p: (before.get(p, 0) - gone.get(p, 0) + new.get(p, 0), new.get(p, 0), gone.get(p, 0))
             for p in set(before) | set(new) | set(gone)}
    ends = {r[0]: (r[1], r[2] + 1) for r in read_rows.groupBy("partition")
            .agg(F.min("offset"), F.max("offset")).collect()}
    return {"partitions": parts, "ends": ends}

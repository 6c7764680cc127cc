"""``offsetlake run`` on an incremental lake: ingest what is new (:mod:`jobs.stages.increment`),
then replay only the groups the snapshot changed (docs/lake.md, "Across snapshots").

A group's replay depends on its own records alone (and on the transaction markers of its
transactional commits), so a group none of whose records is new, or ended by a new or removed
marker of its producer, and of which compaction removed nothing its state rests on
(:func:`touched_groups`), replays to exactly what it replayed to at the previous snapshot: its
state rows are not written again. The groups the snapshot did change are replayed from every
record the lake holds of them as of the snapshot (held offset commits typed from ``records``,
held membership records decoded again from their bytes, the new ones as the ingest decoded
them; of a group whose fencing audit resumes a fold, not the superseded offset commits the fold
covers: :func:`replay_rows`), by the same stage as a full run
(:func:`jobs.stages.pipeline.replay`). Their fencing audit reads their history: those records
and the ones compaction removed (:func:`removed_rows`), partial only across the lake's gaps, with
the snapshot's regime and time and the topic names the lake knows.

What is written for the snapshot:

* per-group state (groups, members, assignments, offsets, fencing findings): the rows of the
  replayed groups, and ``replayed_groups`` naming them;
* history (offset_commits, epochs, transactions, violations): the rows of the records the
  snapshot was the first to hold;
* lag and broker_configs (a capture's), over the offsets as of the snapshot; fencing_audits.
"""

from __future__ import annotations

import shutil
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from jobs.lake import RECORDS
from jobs.lake.delta import read_snapshot, read_snapshots
from jobs.lake.findings import FENCING_AUDITS, FENCING_FINDINGS
from jobs.lake.increments import (COMMIT_TOPIC_IDS, FENCING_FOLDS, GROUP_STATE_TABLES,
                                  GROUP_TOPIC_NAMES, HISTORY_TABLES, REPLAYED_GROUPS)
from jobs.lake.tables import TABLES
from jobs.runtime.config import DEFAULT_RANGE_MB
from jobs.stages.frames import hold, local_frame
from jobs.stages.increment import (Increment, IncrementReport, among, prepare_increment, small,
                                   write_listing)
from jobs.stages.progress import Progress

KEYS = ["partition", "offset"]
# Replayed in the driver when the groups' records come to at most this many (as a full run
# replays a driver-held snapshot). Above it two Python workers win even on 2 cores: three steps
# of a 2M-record lake whose rows fell under 200k took 69-94 s replayed in the driver, 52-74 s in
# Spark.
LOCAL_ROWS = 20_000


class Capture:
    """The writer interface of :class:`jobs.stages.pipeline.Writer`, keeping each frame instead
    of writing it: the incremental run decides what of each is written."""

    def __init__(self, snapshot_id: str):
        self.snapshot_id = snapshot_id
        self.frames: dict = {}

    def submit(self, table: str, df) -> None:
        self.frames[table] = df


@dataclass
class IncrementRunReport:
    ingest: IncrementReport
    groups_replayed: int
    table_rows: dict[str, int]
    seconds: float = 0.0

    def summary(self) -> str:
        return "\n".join([self.ingest.summary(),
                          f"replay: {self.groups_replayed} group(s) the snapshot changed replayed; "
                          "rows written: " + ", ".join(f"{t} {n}" for t, n in self.table_rows.items()),
                          f"total {self.seconds:.1f}s"])


def _held_records(spark, lake: Path, inc: Increment):
    """``records`` of the earlier snapshots (present now or not)."""
    return read_snapshots(spark, lake, RECORDS, inc.earlier)


def touched_groups(spark, lake: Path, inc: Increment, new_rows) -> list[str]:
    """The groups whose state the snapshot can change: a new record; a transactional commit
    whose producer got a new transaction marker in its partition or lost one (a marker decides
    the outcome of its producer's commits alone); or a removed record the group's
    state rests on (:func:`_state_removals`). A group compaction only removed superseded offset
    commits of is left alone: the newest record of each key is what its state rows come from,
    and its fencing findings audit every record the lake held, removed or not."""
    from pyspark.sql import functions as F

    is_data = (F.col("row_kind") == "record") & ~F.col("is_control")
    found = new_rows.where(is_data & F.col("group_id").isNotNull()).select("group_id")
    # a marker ends the transaction of its producer in its partition, no other's
    ended = new_rows.where(F.col("row_kind") == "record").where("is_control").select(
        "partition", "producer_id")
    if inc.earlier:
        held_records = _held_records(spark, lake, inc)
        removed = inc.removed.select(*KEYS)
        # the removed records, few, read once: every rule of _state_removals reads them
        gone = local_frame(spark, among(held_records, removed, inc.removed_count).select(
            "group_id", *KEYS, "record_type", "is_tombstone", "topic", "topic_partition",
            "topic_id").toArrow())
        found = found.unionByName(_state_removals(spark, lake, inc, gone))
        ended = ended.unionByName(among(inc.markers(), removed,
                                        inc.removed_count).select("partition", "producer_id"))
        transactional = (held_records.where("is_transactional")
                         .join(F.broadcast(ended.distinct()), ["partition", "producer_id"],
                               "left_semi"))
        found = found.unionByName(inc.present(transactional).select("group_id"))
    return sorted(r[0] for r in found.where(F.col("group_id").isNotNull()).distinct().collect())


def _state_removals(spark, lake: Path, inc: Increment, removed_records):
    """``group_id`` of the groups whose state a removal of ``removed_records`` (``records`` rows
    the snapshot no longer holds) can change. Compaction keeps each key's newest record, which
    the state rows come from; an offset commit changes the group's state beyond its key's entry
    only as the replay's first commit after a group tombstone (it creates a simple group: the
    group's row then rests on it) or its first naming a topic id (the group learns the pair).
    So a group counts for a removed membership record (an older one can name topics the newer
    one does not) or tombstone; for a removed commit its ``groups`` row rests on; and for a
    removed commit naming a topic id unless a later commit of the same key the snapshot holds
    names the same id (then the group still learns the pair), or when the group's pairs give
    one topic name two ids (a recreated topic: which id a name looks up depends on which the
    group learned first)."""
    from pyspark.sql import functions as F

    from jobs.lake.delta import has_table
    from jobs.lake.snapshot_views import group_state
    from jobs.stages.decode import OFFSET_COMMIT_TYPES

    removed = removed_records.select("group_id", "partition", "offset", "record_type",
                                     "is_tombstone", "topic", "topic_partition", "topic_id")
    is_commit = F.col("record_type").isin(*OFFSET_COMMIT_TYPES)
    kinds = removed.where(~is_commit | F.col("is_tombstone")).select("group_id")
    commits = removed.where(is_commit & ~F.col("is_tombstone"))
    previous = inc.earlier[-1]
    rows = group_state(spark, lake, "groups", previous).select(
        "group_id", F.col("log_partition").alias("partition"), F.col("log_offset").alias("offset"))
    resting = commits.join(rows, ["group_id", "partition", "offset"], "left_semi").select(
        "group_id")
    names_id = F.col("topic_id").isNotNull() & (F.hex("topic_id") != F.lit("0" * 32))
    named = commits.where(names_id).select("group_id", "topic", "topic_partition", "topic_id",
                                           F.col("offset").alias("removed_offset"))
    key = ["group_id", "topic", "topic_partition", "topic_id"]
    found = kinds.unionByName(resting)
    if named.count():   # a local frame (the removed records): counted in the driver
        # the newest commit of each such key (and id) the snapshot holds: one row per key, held
        # by the driver, not every later commit joined to the removed ones
        newest = local_frame(spark, inc.present(
            _held_records(spark, lake, inc).where(is_commit & names_id)
            .select("partition", "offset", *key)
            .join(F.broadcast(named.select(*key).distinct()), key, "left_semi"))
            .groupBy(*key).agg(F.max("offset").alias("newest_offset")).toArrow())
        found = found.unionByName(
            named.join(newest, key, "left")
            .where(F.coalesce(F.col("newest_offset") <= F.col("removed_offset"), F.lit(True)))
            .select("group_id"))
    if has_table(lake, GROUP_TOPIC_NAMES):
        twice = (group_state(spark, lake, GROUP_TOPIC_NAMES, previous)
                 .groupBy("group_id", "topic_name").agg(F.countDistinct("topic_id").alias("ids"))
                 .where(F.col("ids") > 1).select("group_id"))
        found = found.unionByName(named.select("group_id").join(twice, ["group_id"], "left_semi"))
    return found


def _as_staged_rows(raw, decoded=None):
    """``raw_records`` rows in the staged row schema (what the ingest's reader stages); with
    ``decoded``, the decoded columns too (named as the decode stage stages them), taken from
    ``raw`` where it has them and null elsewhere."""
    from pyspark.sql import functions as F

    from jobs.stages.frames import from_arrow_type
    from jobs.stages.segment_rows import RECORD, ROW_SCHEMA

    fields = list(ROW_SCHEMA) + list(decoded or [])
    return raw.select(*[
        F.lit(RECORD).alias(f.name) if f.name == "row_kind"
        else F.col(f.name).cast(from_arrow_type(f.type)).alias(f.name) if f.name in raw.columns
        else F.lit(None).cast(from_arrow_type(f.type)).alias(f.name) for f in fields])


def replay_rows(spark, lake: Path, inc: Increment, groups, new_rows, staging: Path,
                until=None):
    """The staged rows the replay of ``groups`` reads: every record the lake holds of them as of
    the snapshot, every transaction marker it holds, and the snapshot's new rows. Of the held
    ones only membership records are decoded again from their bytes (the lake keeps no decoded
    form of them the group replay can read); offset commits, most of a group's records, come
    typed from ``records`` (:func:`_held_commits`), and markers have nothing to decode.

    ``until`` (``group_id, folded_until``): groups whose fencing audit reads none of their
    records at or before ``folded_until``; of those the held offset commits no other row of the
    replay depends on are left out (:func:`jobs.stages.offsets.without_superseded`): most of a
    group's history is commits its key's newer commits superseded."""
    from pyspark.sql import functions as F

    from jobs.stages import offsets as sql
    from jobs.stages.decode import OFFSET_COMMIT_TYPES, decode_frame, decoded_fields
    from jobs.stages.segment_rows import ROW_SCHEMA

    if not inc.earlier:
        return new_rows
    of_groups = inc.present(_held_records(spark, lake, inc)
                            .join(F.broadcast(groups), ["group_id"], "left_semi"))
    is_commit = F.col("record_type").isin(*OFFSET_COMMIT_TYPES)
    # their membership records' positions, and which are tombstones (the commits' intervals)
    held_membership = hold(spark, of_groups.where(~is_commit).select(*KEYS, "group_id",
                                                                       "is_tombstone"),
                           staging, "membership_keys", local=False)
    keys = held_membership.select(*KEYS)
    membership = inc.non_commits.join(small(keys, keys.count()), KEYS, "left_semi")
    decoded = decode_frame(_as_staged_rows(membership), ROW_SCHEMA)
    # markers have nothing to decode (the decode stage leaves a control record's columns null)
    markers = _as_staged_rows(inc.present(inc.markers()), decoded_fields())
    columns = [f.name for f in ROW_SCHEMA] + [f.name for f in decoded_fields()]
    held = of_groups.where(is_commit)
    if until is not None:
        tombstones = held_membership.where("is_tombstone").select("partition", "group_id",
                                                                  "offset")
        held = sql.without_superseded(held, tombstones if tombstones.count() else None, until)
    commits = _held_commits(held).select(*columns)
    return new_rows.unionByName(decoded).unionByName(markers).unionByName(commits)


def removed_rows(spark, lake: Path, inc: Increment, groups, staging: Path, after=None):
    """The records of ``groups`` the lake held and the snapshot no longer holds (compaction
    removed them), for the fencing audit of the groups' history, which reads every record the
    lake held (docs/lake.md, "Fencing findings of history"): ``(records, membership, commits)``,
    as the replay's ``records`` rows, its staged decoded membership rows and its resolved
    ``offset_commits`` rows of them (their outcome is not read by the audit). ``after``
    (partition -> offset), when every group's audit resumes a fold: only the removed records
    past the offset of their partition are read (the audit reads none of a group at or before
    its fold). None when there are none."""
    from pyspark.sql import functions as F

    from jobs.replay import TABLE_COLUMNS
    from jobs.stages import offsets as sql
    from jobs.stages.decode import OFFSET_COMMIT_TYPES, decode_frame
    from jobs.stages.segment_rows import ROW_SCHEMA

    if not inc.earlier:
        return None
    gone = inc.gone   # staged once (prepare_increment)
    if after is not None:
        if not after:
            return None
        since = spark.createDataFrame(sorted(after.items()), "partition int, folded_until bigint")
        gone = (gone.join(F.broadcast(since), ["partition"])
                .where(F.col("offset") > F.col("folded_until")).select(*KEYS))
    count = gone.count()
    if not count:
        return None
    of_groups = hold(spark, among(_held_records(spark, lake, inc)
                                  .join(F.broadcast(groups), ["group_id"], "left_semi"),
                                  gone, count), staging, "removed_rows", local=False)
    is_commit = F.col("record_type").isin(*OFFSET_COMMIT_TYPES)
    keys = of_groups.where(~is_commit).select(*KEYS)
    membership = decode_frame(_as_staged_rows(among(inc.non_commits, keys, keys.count())),
                              ROW_SCHEMA)
    commits = _held_commits(of_groups.where(is_commit))
    no_markers = spark.createDataFrame(
        [], "partition int, offset bigint, producer_id bigint, control_type string")
    resolved = sql.resolve_commits(commits, no_markers).select(
        F.lit(inc.snapshot_id).alias("snapshot_id"),
        *[name for name, _ in TABLE_COLUMNS["offset_commits"]])
    return of_groups, membership.where(F.col("error_reason").isNull()), resolved


def _held_commits(records):
    """Held offset commits (``records`` rows) as staged decoded rows: typed from ``records``,
    which keeps every column the replay and the fencing audit read of them, so they are not
    decoded again (their bytes, batch columns and JSON value, which nothing after the decode
    reads of a held record, are left null)."""
    from pyspark.sql import functions as F

    from jobs.stages.decode import decoded_fields

    commits = records.drop("value").withColumn("is_control", F.lit(False))
    return _as_staged_rows(commits, decoded_fields())


def snapshot_raw(inc: Increment, new_rows):
    """``raw_records`` as the snapshot holds them (held and new): the snapshot-wide facts of the
    fencing audit (its time, compaction's gaps, the markers) come from all of it."""
    from jobs.stages.ingest import raw_records_rows

    return inc.present(inc.lake_rows).unionByName(raw_records_rows(new_rows))


def _snapshot_regime(spark, lake: Path, inc: Increment, new_rows) -> str:
    """The snapshot's fencing regime (:func:`jobs.stages.audit.snapshot_regime` over the
    records it holds), from its new records when that decides it: a type of group counts once
    a record it holds proves the release, and it holds no record the previous snapshot did not
    but its new ones. So with a previous regime that nothing proved (strict), or new records
    that prove the most (relaxed), the held records are not read."""
    from pyspark.sql import functions as F

    from jobs.audits.validators import combine_regimes
    from jobs.lake.delta import has_table
    from jobs.stages.audit import snapshot_regime
    from jobs.stages.decode import records_columns

    new = new_rows.where((F.col("row_kind") == "record") & ~F.col("is_control")
                         & F.col("error_reason").isNull()).select(*records_columns())
    regime = snapshot_regime(new)
    if not inc.earlier or regime == combine_regimes(True, True):
        return regime
    before = (read_snapshot(spark, lake, FENCING_AUDITS, inc.earlier[-1]).select("regime").collect()
              if has_table(lake, FENCING_AUDITS) else [])
    if before and before[0][0] == combine_regimes(False, False):
        return regime
    held = inc.present(_held_records(spark, lake, inc))
    return snapshot_regime(held.unionByName(new.select(*held.columns)))


def _topic_names(spark, lake: Path, frames: dict, earlier: list[str]) -> dict[str, str]:
    """Topic id -> name for the topic ids of the replayed groups' tables, as the snapshot's
    tables name them: a topic id names one topic for good, so the lake's rows of the earlier
    snapshots name those ids as the snapshot's own would (only their rows are read; a backfill's
    are not: it does not change the snapshots after it). Their offset commits' pairs come from
    ``commit_topic_ids`` (:func:`_commit_pairs`)."""
    from functools import reduce

    from pyspark.sql import functions as F

    from jobs.lake.delta import has_table
    from jobs.stages.audit import NAME_TABLES, lake_topic_names

    ids = reduce(lambda a, b: a.unionByName(b),
                 [frames[t].where(F.col("topic_id").isNotNull()).select("topic_id")
                  for t, _ in NAME_TABLES]).distinct()
    ids = F.broadcast(local_frame(spark, ids.toArrow()))
    tables = {}
    for table, column in NAME_TABLES:
        frame = frames[table]
        if table == "offset_commits":
            frame = frame.select("topic_id", column)
            held = _commit_pairs(spark, lake, earlier)
            if held is not None:
                frame = frame.unionByName(held.join(ids, ["topic_id"], "left_semi"))
        elif has_table(lake, table):
            frame = frame.unionByName(read_snapshots(spark, lake, table, earlier)
                                      .select(*frame.columns)
                                      .join(ids, ["topic_id"], "left_semi"))
        tables[table] = frame
    return lake_topic_names(tables)


def _commit_pairs(spark, lake: Path, earlier: list[str]):
    """``topic_id, topic`` of the offset commits of the ``earlier`` snapshots (as their
    ``offset_commits`` rows give them, repeats aside): ``commit_topic_ids`` of the snapshots it
    holds (a few rows each), ``offset_commits`` of those written before it; None when the lake
    has neither."""
    from functools import reduce

    from pyspark.sql import functions as F

    from jobs.lake.delta import has_table, split_logged
    from jobs.lake.increments import COMMIT_TOPIC_IDS

    paired, older = split_logged(lake, COMMIT_TOPIC_IDS, earlier)
    parts = []
    if paired:
        parts.append(read_snapshots(spark, lake, COMMIT_TOPIC_IDS, paired)
                     .where(F.col("topic_id").isNotNull()).select("topic_id", "topic"))
    if older and has_table(lake, "offset_commits"):
        parts.append(read_snapshots(spark, lake, "offset_commits", older)
                     .select("topic_id", "topic"))
    return reduce(lambda a, b: a.unionByName(b), parts) if parts else None


def commit_topic_ids(spark, snapshot_id: str, commits):
    """The snapshot's ``commit_topic_ids`` rows: the distinct topic id -> name pairs of its
    ``commits`` (the ``offset_commits`` rows of its new records) and its one row of nulls."""
    from pyspark.sql import functions as F

    pairs = (commits.where(F.col("topic_id").isNotNull() & F.col("topic").isNotNull())
             .select("topic_id", "topic").distinct()
             .unionByName(spark.createDataFrame([(None, None)], "topic_id string, topic string")))
    return pairs.select(F.lit(snapshot_id).alias("snapshot_id"), "topic_id", "topic")


def _fencing(spark, lake: Path, inc: Increment, frames: dict, new_rows, local: bool,
             regime: str, groups, names: list[str], staging: Path, progress, topic_names: dict,
             resuming: tuple):
    """The replayed groups' fencing audit over their history (every record of them the lake
    has held: the snapshot's, and the ones compaction removed, :func:`removed_rows`) under the
    snapshot-wide facts: ``(audits, findings, windows, folds)``, windows as
    :func:`jobs.stages.audit.windows_of` gives them, folds as
    :func:`jobs.stages.audit.folds_of`. ``topic_names`` are :func:`_topic_names`'; a group of
    ``resuming`` (:func:`_resumed_folds`: the folds, and their groups) reads only its records
    after its fold. The ranges where evidence is partial are the lake's gaps (offsets no snapshot
    held), the snapshot's newest timestamp comes from the previous one's
    (:mod:`jobs.stages.snapshot_facts`); the audit reads every marker the lake held, not its
    other records."""
    from pyspark.sql import functions as F

    from jobs.stages.audit import (audit_rows, compacted_ranges, findings_of, folds_of,
                                   windows_of)
    from jobs.stages.ingest import raw_records_rows
    from jobs.stages.snapshot_facts import compaction_ranges

    folds, resumed = resuming
    whole = sum(g not in resumed for g in names)
    if resumed:
        print(f"fencing audit: {len(resumed)} group(s) resume the audit an earlier snapshot kept "
              f"(only their records after it are read), {whole} audited from their first record",
              file=progress)
    # a resumed group reads the removed records after its fold: a fold kept a few snapshots ago
    # has not read what compaction removed since
    removed = removed_rows(spark, lake, inc, groups, staging,
                           after=None if whole or folds is None else _fold_ends(folds))
    rows = frames["_rows"].where((F.col("row_kind") == "record") & ~F.col("is_control")
                                 & F.col("error_reason").isNull())
    membership = rows.where(~F.col("record_type").isin(0, 1))
    records, commits = frames[RECORDS], frames["offset_commits"]
    if removed is not None:
        held, gone_membership, gone_commits = removed
        records = records.unionByName(held.select(*records.columns))
        membership = membership.unionByName(gone_membership.select(*membership.columns))
        commits = commits.unionByName(gone_commits.select(*commits.columns))
    new_raw = raw_records_rows(new_rows)
    gaps = compaction_ranges(spark, lake, inc.earlier, inc.gaps, inc.removed, removals=False)
    if gaps is None:   # late records filled gaps: the held offsets are scanned
        gaps = compacted_ranges(inc.lake_rows.select("partition", "offset").unionByName(
            new_raw.select("partition", "offset")))
    markers = inc.markers().unionByName(new_raw.where("is_control"))
    audited = audit_rows(records, markers, commits, regime=regime, topic_names=topic_names,
                         here=local, membership=membership, gaps=gaps, snapshot_time=inc.newest,
                         folds=folds, keep_folds=True).localCheckpoint(eager=True)
    found = findings_of(audited, inc.snapshot_id)
    audits = spark.createDataFrame([(inc.snapshot_id, regime, found.count())],
                                   TABLES[FENCING_AUDITS].ddl())
    return audits, found, windows_of(audited), folds_of(audited)


def _fold_ends(folds) -> dict[int, int]:
    """Partition -> the earliest ``folded_until`` of the kept folds there: the audit of a group
    that resumes a fold reads none of its records at or before it."""
    from pyspark.sql import functions as F

    return {r[0]: r[1] for r in folds.groupBy("partition").agg(F.min("folded_until")).collect()}


def _fold_candidates(spark, lake: Path, inc: Increment, groups, regime: str) -> dict:
    """Group id -> the row (``fencing_folds``: ``snapshot_id, group_id, log_partition,
    folded_until, topic_reads``) of the latest fold of the earlier snapshots the audit of that
    group may resume, as far as is known before the replay: kept under the same regime by code
    of this version, in a partition where no late record has filled a gap since. Whether the
    topic names it looked up answer alike is known once the replay has named them
    (:func:`_resumed_folds`)."""
    from pyspark.sql import functions as F

    from jobs.audits.engine import fold_version
    from jobs.lake.delta import has_table
    from jobs.lake.increments import SNAPSHOT_PARTITIONS

    if not inc.earlier or not has_table(lake, FENCING_FOLDS):
        return {}
    seq = {sid: i for i, sid in enumerate(inc.earlier)}
    late: dict[int, int] = {p: len(seq) for p, n in inc.gaps.late.items() if n}
    for r in (read_snapshots(spark, lake, SNAPSHOT_PARTITIONS, inc.earlier)
              .where(F.col("late_records") > 0).select("snapshot_id", "partition").collect()):
        late[r.partition] = max(late.get(r.partition, -1), seq[r.snapshot_id])
    kept = read_snapshots(spark, lake, FENCING_FOLDS, inc.earlier).join(
        F.broadcast(groups), ["group_id"], "left_semi")
    latest = {}   # group id -> its fold's row of the newest snapshot
    for r in kept.select("snapshot_id", "group_id", "log_partition", "folded_until", "regime",
                         "code_version", "topic_reads").collect():
        if r.group_id not in latest or seq[r.snapshot_id] > seq[latest[r.group_id].snapshot_id]:
            latest[r.group_id] = r
    version = fold_version()
    return {g: r for g, r in latest.items()
            if r.regime == regime and r.code_version == version
            and late.get(r.log_partition, -1) <= seq[r.snapshot_id]}


def _resumed_folds(spark, lake: Path, inc: Increment, candidates: dict, names: dict[str, str]):
    """The kept folds (``partition, group_id, folded_until, open_producers, fold``) the audit
    resumes, and the ids of their groups: each of the ``candidates`` (:func:`_fold_candidates`)
    whose topic names answer what it looked up alike (:func:`jobs.audits.engine.resumable`).
    A fold of every record is the same audit, but reads the group's whole history.
    ``(None, set())`` when no group resumes."""
    import json

    from pyspark.sql import functions as F

    from jobs.audits.engine import resumable

    resumed = {g: r.snapshot_id for g, r in candidates.items()
               if resumable(json.loads(r.topic_reads), names)}
    if not resumed:
        return None, set()
    chosen = spark.createDataFrame(sorted(resumed.items()), "group_id string, snapshot_id string")
    folds = (read_snapshots(spark, lake, FENCING_FOLDS, inc.earlier)
             .join(F.broadcast(chosen), ["group_id", "snapshot_id"], "left_semi").select(
                 F.col("log_partition").alias("partition"), "group_id", "folded_until",
                 "open_producers", "fold"))
    return folds, set(resumed)


def audit_again(spark, lake: Path, inc: Increment, regime: str) -> list[str]:
    """The groups whose fencing findings may differ from the previous snapshot's although the
    snapshot did not change their records (so :func:`touched_groups` does not name them): a
    group's audit also reads snapshot-wide facts. Every group when the regime changed; else
    each group whose findings, as ``replayed_groups`` records it, hold for snapshot times that
    exclude this snapshot's; and in a partition where late records filled a gap, each group
    with a finding past the first of them (a partial finding can become whole). Compaction's
    removals change no group's findings: they audit every record the lake held."""
    from pyspark.sql import functions as F

    from jobs.lake.delta import has_table
    from jobs.lake.snapshot_views import group_state

    if not inc.earlier:
        return []
    previous = inc.earlier[-1]
    before = (read_snapshot(spark, lake, FENCING_AUDITS, previous).select("regime").collect()
              if has_table(lake, FENCING_AUDITS) else [])
    if not before or before[0][0] != regime:
        return _held_groups(spark, lake, inc)
    latest = group_state(spark, lake, REPLAYED_GROUPS, previous)   # each group's last replay
    now = inc.newest
    outside = F.lit(False) if now is None else F.coalesce(
        (F.col("findings_valid_from") > now) | (F.col("findings_valid_until") <= now), F.lit(False))
    again = {r[0] for r in latest.where(outside).select("group_id").collect()}
    late = {p for p, n in inc.gaps.late.items() if n}
    if late:
        first = {r[0]: r[1] for r in inc.new_keys.where(F.col("partition").isin(*late))
                 .groupBy("partition").agg(F.min("offset")).collect()}
        reach = F.greatest("log_offset", F.coalesce(F.array_max("evidence_log_offsets"),
                                                     F.col("log_offset")))
        past = F.lit(False)
        for p, offset in first.items():
            past = past | ((F.col("log_partition") == p) & (reach > offset))
        findings = group_state(spark, lake, FENCING_FINDINGS, previous)
        again |= {r[0] for r in findings.where(past & F.col("group_id").isNotNull())
                  .select("group_id").distinct().collect()}
    return sorted(again)


def _held_groups(spark, lake: Path, inc: Increment) -> list[str]:
    """Every group the lake holds a record of from the earlier snapshots (removed by compaction
    since or not: a group's fencing findings audit its history)."""
    from pyspark.sql import functions as F

    held = _held_records(spark, lake, inc).where(F.col("group_id").isNotNull())
    return sorted(r[0] for r in held.select("group_id").distinct().collect())


def _pairs_before(spark, lake: Path, inc: Increment):
    """Every group's topic id -> name pairs (``group_topic_names``) as of the previous snapshot;
    ``None`` in a new lake (every group is replayed) and in a lake written before the table
    (its groups' pairs unknown: the caller replays every group)."""
    from jobs.lake.delta import has_table
    from jobs.lake.snapshot_views import group_state

    if not inc.earlier or not has_table(lake, GROUP_TOPIC_NAMES):
        return None
    return group_state(spark, lake, GROUP_TOPIC_NAMES, inc.earlier[-1]).drop("snapshot_id")


def _renamed_groups(spark, lake: Path, inc: Increment, before, learned, pairs,
                    replayed: list[str]) -> list[str]:
    """The groups not replayed whose rows the snapshot's topic names change: a topic id's name is
    the smallest any group's own records give it (:func:`jobs.stages.replay.table_rows`), so a
    replayed group that learned or lost a pair renames the assignment rows of every group that
    does not name the id itself, and what the fencing audit of such a group reads. Each group
    whose previous rows hold an id named otherwise now (or a name such an id had or has) is
    returned, to be replayed and audited with the others."""
    from pyspark.sql import functions as F

    from jobs.lake.snapshot_views import group_state
    from jobs.stages.replay import names_by_id

    now = learned.select("topic_id", "topic_name").unionByName(pairs.select("topic_id", "topic_name"))
    changed = (names_by_id(before, "then").join(names_by_id(now, "now"), ["topic_id"], "full_outer")
               .where(~F.col("then").eqNullSafe(F.col("now"))).collect())
    if not changed:
        return []
    ids = sorted({r.topic_id for r in changed})
    topics = sorted({n for r in changed for n in (r.then, r.now) if n is not None})
    previous = inc.earlier[-1]
    found = [group_state(spark, lake, t, previous).where(F.col("topic_id").isin(*ids))
             .select("group_id") for t in ("member_assignments", "target_assignments")]
    found.append(group_state(spark, lake, "offsets", previous)
                 .where(F.col("topic_id").isin(*ids) | F.col("topic").isin(*topics))
                 .select("group_id"))
    groups = {r[0] for f in found for r in f.distinct().collect()}
    return sorted(groups - set(replayed))


def _offsets_as_of(spark, lake: Path, inc: Increment, replayed, groups):
    """``offsets`` of every group as of the snapshot: the replayed groups' rows, the others' as
    the previous snapshot left them."""
    from pyspark.sql import functions as F

    from jobs.lake.snapshot_views import group_state

    if not inc.earlier:
        return replayed
    before = (group_state(spark, lake, "offsets", inc.earlier[-1])
              .join(groups, ["group_id"], "left_anti")
              .withColumn("snapshot_id", F.lit(inc.snapshot_id)))
    return replayed.unionByName(before)


def _held_once(spark, rows, staging: Path, in_driver: bool):
    """The replay's rows computed once (held membership records are decoded in Python workers:
    every later use would decode them again), staged as Parquet; then held by the driver when
    few (``in_driver``: the snapshot was read in the driver) so the replay runs there. Returns the
    rows and whether the driver holds them."""
    rows = hold(spark, rows, staging, "replay_rows", local=False)
    if in_driver and rows.count() <= LOCAL_ROWS:
        return local_frame(spark, rows.toArrow()), True
    return rows, False


def run_increment(spark, lake: Path, paths: list[str], snapshot_id: str | None = None,
                  range_bytes: int = DEFAULT_RANGE_MB << 20, progress=None,
                  limits=None) -> IncrementRunReport:
    """Ingest the snapshot into the incremental lake and replay the groups it changed (module
    docstring). Raises :class:`jobs.lake.snapshot_views.LakeConflict` before writing anything
    when the snapshot cannot join the lake. Tables are written a few at a time (as a full run
    writes them); ``snapshots`` last, once every other table of the snapshot is.

    >>> run_increment(spark, Path("lake"), ["/data/snap-0700"]).groups_replayed  # doctest: +SKIP
    812
    """
    progress = sys.stderr if progress is None else progress  # now, not at import
    from jobs.stages.increment import bronze_frames, columnar_reads, write_filled
    from jobs.stages.pipeline import Writer, bronze, replay

    started = time.monotonic()
    inc = prepare_increment(spark, lake, paths, snapshot_id, range_bytes, progress, limits,
                            decode=True)
    meter = Progress(spark, progress)
    writer = Writer(spark, lake, inc.snapshot_id)
    try:
        write_filled(spark, lake, inc.filled_largest)
        # every table is written inside it (written waits for the writes)
        with meter, columnar_reads(spark, inc.columnar_rows):
            meter.stage("ingest: writing the new records")
            for table, frame in bronze_frames(spark, inc, decode=True).items():
                writer.submit(table, frame)
            new_rows = inc.new_rows()
            names = touched_groups(spark, lake, inc, new_rows)
            regime = _snapshot_regime(spark, lake, inc, new_rows)
            again = sorted(set(audit_again(spark, lake, inc, regime)) - set(names))
            print(f"replay: {len(names)} group(s) changed by snapshot {inc.snapshot_id}"
                  + (f", and {len(again)} whose fencing audit depends on what else it changed "
                     "(regime, time, gaps)" if again else ""), file=progress)
            names = sorted(names + again)
            before = _pairs_before(spark, lake, inc)
            if before is None and inc.earlier:   # a lake from before group_topic_names
                names = sorted(set(names) | set(_held_groups(spark, lake, inc)))
            every = False   # True: the held commits the audit was to skip are replayed too
            while True:
                for attempt in ("", "renamed"):
                    groups = spark.createDataFrame([(g,) for g in names], "group_id string")
                    learned = (None if before is None else
                               before.join(groups, ["group_id"], "left_anti").localCheckpoint())
                    staging = inc.staging / f"{'every-' if every else ''}{attempt}"
                    candidates = _fold_candidates(spark, lake, inc, groups, regime)
                    until = None if every or not candidates else spark.createDataFrame(
                        sorted((g, r.folded_until) for g, r in candidates.items()),
                        "group_id string, folded_until bigint")
                    rows = replay_rows(spark, lake, inc, groups, new_rows, staging, until)
                    if inc.earlier:
                        rows, local = _held_once(spark, rows, staging, inc.staged.local)
                    else:   # all of it is new: the staged rows, as a full run replays them
                        local = inc.staged.local
                    staged = replace(inc.staged, rows=rows, local=local)
                    capture = Capture(inc.snapshot_id)
                    bronze(capture, staged)
                    pairs = replay(spark, capture, staged, staging, meter, audit=False,
                                   learned=learned)
                    more = [] if attempt or before is None else _renamed_groups(
                        spark, lake, inc, before, learned, pairs, names)
                    if not more:
                        break
                    print(f"replay: {len(more)} more group(s) whose assignments name a topic "
                          "id the snapshot named otherwise than the previous one", file=progress)
                    names = sorted(set(names) | set(more))
                topic_names = _topic_names(spark, lake, capture.frames, inc.earlier)
                resuming = _resumed_folds(spark, lake, inc, candidates, topic_names)
                if until is None or set(candidates) <= resuming[1]:
                    break
                print(f"replay: {len(set(candidates) - resuming[1])} group(s) whose audit cannot "
                      "resume its fold (topic names changed): replayed again with every held "
                      "commit", file=progress)
                every = True
            capture.frames[GROUP_TOPIC_NAMES] = pairs
            capture.frames["_rows"] = rows
            meter.stage("replay: fencing audit (Python)")
            audits, found, windows, folds = _fencing(spark, lake, inc, capture.frames,
                                                     new_rows, local, regime, groups, names,
                                                     staging, progress, topic_names, resuming)
            for table, frame in _replay_frames(inc, capture.frames, groups, found, audits,
                                               windows, folds, regime).items():
                writer.submit(table, frame)
            _lag_and_configs(spark, lake, inc, writer, capture.frames["offsets"], groups, paths)
            written = {t: writer.rows(t) for t in writer.pending}
            report = write_listing(spark, lake, inc)
    finally:
        writer.close()
        shutil.rmtree(inc.staging, ignore_errors=True)
    result = IncrementRunReport(report, len(names), written)
    result.seconds = report.seconds = time.monotonic() - started
    return result


def _replay_frames(inc: Increment, frames: dict, groups, found, audits, windows, folds,
                   regime: str) -> dict:
    """Per-group state of the replayed groups, history rows of the new records, the fencing
    audit with the folds it kept, and ``replayed_groups`` (with the window of each group's
    findings), by table."""
    from pyspark.sql import functions as F

    from jobs.audits.engine import fold_version

    new_positions = inc.new_keys.select(F.col("partition").alias("log_partition"),
                                        F.col("offset").alias("log_offset"))
    out = {t: frames[t] for t in GROUP_STATE_TABLES if t != FENCING_FINDINGS}
    out[FENCING_FINDINGS] = found
    out[GROUP_TOPIC_NAMES] = frames[GROUP_TOPIC_NAMES].select(
        F.lit(inc.snapshot_id).alias("snapshot_id"), "group_id", "topic_id", "topic_name")
    for table in HISTORY_TABLES:
        out[table] = (frames[table].join(new_positions, ["log_partition", "log_offset"],
                                         "left_semi").select(*frames[table].columns))
    out[COMMIT_TOPIC_IDS] = commit_topic_ids(new_positions.sparkSession, inc.snapshot_id,
                                             out["offset_commits"])
    out[FENCING_AUDITS] = audits
    out[FENCING_FOLDS] = folds.select(
        F.lit(inc.snapshot_id).alias("snapshot_id"), "group_id", "log_partition", "folded_until",
        "open_producers", F.lit(regime).alias("regime"), F.lit(fold_version()).alias("code_version"),
        "topic_reads", "fold")
    out[REPLAYED_GROUPS] = groups.join(windows, ["group_id"], "left").select(
        F.lit(inc.snapshot_id).alias("snapshot_id"), "group_id",
        F.col("valid_from").alias("findings_valid_from"),
        F.col("valid_until").alias("findings_valid_until"),
        "evidence_partition", "evidence_from", "evidence_until")
    return out


def _lag_and_configs(spark, lake: Path, inc: Increment, writer, replayed, groups,
                     paths: list[str]) -> None:
    """A capture's ``lag`` (over every group's offsets as of the snapshot) and
    ``broker_configs``, through the run's writer."""
    from jobs.stages.broker_configs import submit_broker_configs
    from jobs.stages.lag import submit_lag

    out = Capture(inc.snapshot_id)
    out.frames["offsets"] = _offsets_as_of(spark, lake, inc, replayed, groups)
    submit_lag(spark, out, paths)
    submit_broker_configs(spark, out, paths)
    for table, frame in out.frames.items():
        if table != "offsets":
            writer.submit(table, frame)

"""Reading an incremental lake as of one snapshot (docs/lake.md, "Across snapshots").

* record-keyed tables (``raw_records``, ``records``, ``record_facts``): the rows first seen by the
  snapshot or an earlier one, less those compaction had removed by then (:func:`present_rows`);
* per-group state (:data:`jobs.lake.increments.GROUP_STATE_TABLES`): each group's rows at the
  latest snapshot up to it that replayed the group (:func:`group_state`);
* history (:data:`jobs.lake.increments.HISTORY_TABLES`): every row written up to it
  (:func:`history_rows`).

A snapshot the lake does not list in ``snapshots`` (a backfill, ``backfills``: stored whole
beside them; or one whose run has not ended) is read as a lake of full runs reads it: its own
rows, by its id.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from jobs.lake.delta import has_table, read_snapshots, read_table, table_stamp
from jobs.lake.increments import BACKFILLS, RECORD_REMOVALS, REPLAYED_GROUPS, SNAPSHOTS


class LakeConflict(ValueError):
    """The snapshot cannot join the lake: another cluster, older than the lake's newest, or bytes
    that disagree with the lake's at the same (partition, offset)."""


def is_incremental(lake: Path) -> bool:
    """Whether ``lake`` is an incremental lake (it lists its snapshots in ``snapshots``)."""
    return has_table(lake, SNAPSHOTS)


def holds_full_runs(lake: Path) -> bool:
    """Whether ``lake`` is a lake of full runs: ``raw_records`` without ``snapshots`` (the one
    test every command applies; a lake with neither is new)."""
    from jobs.lake.delta import RAW_RECORDS

    return not is_incremental(lake) and has_table(lake, RAW_RECORDS)


@dataclass
class LakeOrder:
    """The snapshots an incremental lake lists (``snapshots``), as ``(id, seq, cluster)``."""
    rows: list[tuple[str, int, str | None]]

    @classmethod
    def read(cls, spark, lake: Path) -> LakeOrder:
        if not is_incremental(lake):
            return cls([])
        def read() -> list:
            rows = read_table(spark, lake, SNAPSHOTS).select("snapshot_id", "seq", "cluster_id")
            return sorted(((r[0], r[1], r[2]) for r in rows.collect()), key=lambda r: r[1])
        return cls(list(_once(lake, SNAPSHOTS, read)))

    @property
    def ids(self) -> list[str]:
        return [sid for sid, _, _ in self.rows]

    def seq_for(self, snapshot_id: str) -> int:
        """The snapshot's place: its own on a rerun of the newest, else after the newest."""
        for sid, seq, _ in self.rows:
            if sid == snapshot_id:
                if seq != self.rows[-1][1]:
                    raise LakeConflict(
                        f"snapshot {snapshot_id!r} is not the lake's newest "
                        f"({self.rows[-1][0]!r}): ingesting it again would change the history "
                        f"of the snapshots after it (--backfill with another --snapshot-id keeps "
                        f"a copy beside them)")
                return seq
        return self.rows[-1][1] + 1 if self.rows else 1

    def before(self, seq: int) -> list[str]:
        return [sid for sid, s, _ in self.rows if s < seq]

    def upto(self, snapshot_id: str) -> list[str]:
        """The snapshot and those before it; KeyError if the lake does not list it."""
        seqs = {sid: seq for sid, seq, _ in self.rows}
        if snapshot_id not in seqs:
            raise KeyError(f"the lake lists no snapshot {snapshot_id!r} (snapshots: "
                           f"{list(seqs)})")
        return self.before(seqs[snapshot_id] + 1)


_READS: dict[tuple, object] = {}


def _once(lake: Path, table: str, read, *more):
    """``read()`` of one of the lake's small listing tables, once per version of the table
    (:func:`jobs.lake.delta.table_stamp`): every as-of view asks for them. ``more``: the rest of
    what the value depends on."""
    key = (str(Path(lake).resolve()), table, *table_stamp(lake, table), *more)
    if key not in _READS:
        _READS[key] = read()
    return _READS[key]


def _listed(spark, lake: Path, table: str, order_by: str) -> list[str]:
    """The snapshot ids of a listing table (``backfills``, ``vacuums``) ordered by ``order_by``."""
    if not has_table(lake, table):
        return []

    def read() -> list[str]:
        rows = read_table(spark, lake, table).select("snapshot_id", order_by).collect()
        return [r[0] for r in sorted(rows, key=lambda r: (r[1], r[0]))]
    return list(_once(lake, table, read))


def backfills(spark, lake: Path) -> list[str]:
    """The snapshots run into the lake with ``--backfill`` (``backfills``), in the order they
    were; each is stored whole under its id and read by it."""
    return _listed(spark, lake, BACKFILLS, "backfilled_at")


def in_ids(column: str, ids: list[str]):
    from pyspark.sql import functions as F

    return F.col(column).isin(ids) if ids else F.lit(False)


def snapshot_rows(spark, lake: Path, table: str, snapshot_id: str):
    """The rows of a record-keyed table (``raw_records``) the snapshot held, as a full ingest of
    it would have them under its id: the rows first seen by it or an earlier snapshot, less
    those removed by then. ``source_file`` and ``file_position`` say where a record was first
    read."""
    from pyspark.sql import functions as F

    upto = LakeOrder.read(spark, lake).upto(snapshot_id)
    removed = read_snapshots(spark, lake, RECORD_REMOVALS, upto).select("partition", "offset")
    rows = read_snapshots(spark, lake, table, upto)
    return (rows.join(removed, ["partition", "offset"], "left_anti")
            .withColumn("snapshot_id", F.lit(snapshot_id)).select(*rows.columns))




def group_state(spark, lake: Path, table: str, snapshot_id: str):
    """A per-group state table as of the snapshot: each group's rows at the latest snapshot up to
    it that replayed the group (a group replayed with no rows left has none)."""
    from pyspark.sql import functions as F

    order = LakeOrder.read(spark, lake)
    upto = order.upto(snapshot_id)
    _not_vacuumed(spark, lake, snapshot_id)
    latest = _latest_replays(spark, lake, order, snapshot_id)
    pairs = spark.createDataFrame(latest, "group_id string, snapshot_id string")
    rows = read_snapshots(spark, lake, table, upto)
    return (rows.join(F.broadcast(pairs) if latest.num_rows <= BROADCAST_GROUPS else pairs,
                      ["group_id", "snapshot_id"], "left_semi")
            .withColumn("snapshot_id", F.lit(snapshot_id)).select(*rows.columns))


# Up to this many groups, the (group, snapshot of its latest replay) pairs of group_state reach
# the table's rows by broadcast; more by a shuffle join.
BROADCAST_GROUPS = 200_000


def _latest_replays(spark, lake: Path, order: LakeOrder, snapshot_id: str):
    """Each group's latest replay up to the snapshot, ``(group_id, snapshot_id)`` as an Arrow
    table in one chunk, aggregated once per version of ``replayed_groups`` and ``snapshots``
    (an incremental run reads several per-group tables as of its previous snapshot, a report
    every one: each used to aggregate ``replayed_groups`` again, a Spark job of its own)."""
    def read():
        from pyspark.sql import functions as F

        seq = F.create_map(*[x for sid, s, _ in order.rows for x in (F.lit(sid), F.lit(s))])
        latest = (read_snapshots(spark, lake, REPLAYED_GROUPS, order.upto(snapshot_id))
                  .groupBy("group_id").agg(F.max_by("snapshot_id", seq[F.col("snapshot_id")])
                                           .alias("snapshot_id")))
        return latest.toArrow().combine_chunks()
    return _once(lake, REPLAYED_GROUPS, read, snapshot_id, *table_stamp(lake, SNAPSHOTS))


def _not_vacuumed(spark, lake: Path, snapshot_id: str) -> None:
    """KeyError when ``offsetlake vacuum`` dropped the snapshot's per-group state."""
    if snapshot_id in vacuumed(spark, lake):
        raise KeyError(f"snapshot {snapshot_id!r} was vacuumed (offsetlake vacuum): its "
                       "per-group state is gone; its records and history stay")


def vacuumed(spark, lake: Path) -> set[str]:
    """The snapshots ``offsetlake vacuum`` dropped the per-snapshot state of."""
    from jobs.lake.increments import VACUUMS

    return set(_listed(spark, lake, VACUUMS, "vacuumed_at"))


def history_rows(spark, lake: Path, table: str, snapshot_id: str):
    """A history table as of the snapshot: every row written by it or an earlier snapshot
    (under the snapshot's id, as the other views)."""
    from pyspark.sql import functions as F

    rows = read_snapshots(spark, lake, table, LakeOrder.read(spark, lake).upto(snapshot_id))
    return rows.withColumn("snapshot_id", F.lit(snapshot_id)).select(*rows.columns)


RECORD_TABLES = ("raw_records", "records", "record_facts")


def as_of(spark, lake: Path, table: str, snapshot_id: str):
    """``table`` as of the snapshot in an incremental lake, by the kind of table (module
    docstring); None for a table written whole per snapshot, for a snapshot the lake does not
    list in order (a backfill), and for the lake's first snapshot, whose rows are all its own
    (every group replayed, no record removed before it): read it filtered by its id."""
    from jobs.lake.increments import GROUP_STATE_TABLES, HISTORY_TABLES

    ids = LakeOrder.read(spark, lake).ids
    if snapshot_id not in ids:
        return None
    if snapshot_id == ids[0]:
        if table in GROUP_STATE_TABLES:
            _not_vacuumed(spark, lake, snapshot_id)
        return None
    if table in RECORD_TABLES:
        return snapshot_rows(spark, lake, table, snapshot_id)
    if table in GROUP_STATE_TABLES:
        return group_state(spark, lake, table, snapshot_id)
    if table in HISTORY_TABLES:
        return history_rows(spark, lake, table, snapshot_id)
    return None


def read_as_of(spark, lake: Path, table: str, snapshot_id: str):
    """The snapshot's rows of ``table`` under its id, whichever kind of lake: as of the
    snapshot in an incremental lake (:func:`as_of`), its own rows in a lake of full runs."""
    from jobs.lake.delta import read_snapshot

    if is_incremental(lake):
        df = as_of(spark, lake, table, snapshot_id)
        if df is not None:
            return df
    return read_snapshot(spark, lake, table, snapshot_id)

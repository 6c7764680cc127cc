"""``offsetlake run --backfill``: a snapshot older than an incremental lake's newest, stored beside
the snapshots the lake keeps in order, which it leaves as they were (docs/lake.md, "Backfills").

An incremental lake's snapshots form one order (``snapshots.seq``): a snapshot's view is the
records first held up to it less compaction's removals, and its group state carries on from the
previous snapshot's. A snapshot taken before the newest cannot join that order without changing
the views and the history of every snapshot after it. A backfill therefore runs as a full run
does: every table holds the snapshot's rows whole under its id (records the lake holds too), read
by that id as a lake of full runs reads a snapshot (:mod:`jobs.lake.snapshot_views`). The ordered
snapshots, their views, their history and the history audit do not see it. ``backfills`` lists
it, written last: a backfill listed there is complete; a rerun of the same id replaces it.

Refused (:class:`LakeConflict`) before anything is written: a lake that is not incremental, one
that lists no snapshot yet, an id the lake lists in order, a snapshot of another cluster, and a
snapshot of segment files that is not older than the newest (it joins the order: run it without
``--backfill``). After its run, one whose bytes disagree with the lake's at a (partition, offset)
both hold is refused too: its rows are removed again, and ``backfills`` never lists it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from decoders.log import list_segments
from jobs.lake import RAW_RECORDS, read_table, replace_snapshot
from jobs.lake.increments import BACKFILLS, BACKFILLS_COLUMNS
from jobs.lake.snapshot_views import LakeConflict, LakeOrder, in_ids, is_incremental
from jobs.stages.increment import check_cluster, cluster_id, conflicting_rows, older_than
from jobs.stages.ingest import capture_manifest, resolve_snapshot_id


def check_backfill(spark, lake: Path, paths: list[str], snapshot_id: str) -> str:
    """The lake's newest snapshot, when ``paths`` may be backfilled into ``lake`` under
    ``snapshot_id``; raises :class:`LakeConflict`, in words, when it may not."""
    if not is_incremental(lake):
        raise LakeConflict(f"{lake} is not an incremental lake: --backfill stores an older "
                           "snapshot beside an incremental lake's (a lake of full runs takes any "
                           "snapshot as it is: --full)")
    order = LakeOrder.read(spark, lake)
    if not order.rows:
        raise LakeConflict(f"{lake} lists no snapshot yet: run {snapshot_id!r} without "
                           "--backfill")
    newest = order.ids[-1]
    if snapshot_id in order.ids:
        raise LakeConflict(f"{snapshot_id!r} is one of the lake's snapshots in order: give the "
                           "backfill an id of its own (--snapshot-id)")
    check_cluster(order, snapshot_id, cluster_id(paths))
    if capture_manifest(paths) is None and not older_than(spark, lake, order,
                                                          list_segments(paths)):
        raise LakeConflict(f"snapshot {snapshot_id!r} is not older than the lake's newest "
                           f"({newest!r}): run it without --backfill, to add it to the lake's "
                           "snapshots in order")
    return newest


def run_backfill(spark, lake: Path, paths: list[str], snapshot_id: str | None = None,
                 progress=None, then=None):
    """Run an older snapshot into an incremental lake beside its ordered snapshots (module
    docstring): :func:`jobs.stages.pipeline.run_pipeline` under its id, then checked against the
    lake's records and listed in ``backfills``. ``then`` as for ``run_pipeline``, once the check
    passed. Returns the run's :class:`jobs.stages.pipeline.PipelineReport`.

    >>> run_backfill(spark, Path("lake"), ["/data/snap-0300"]).snapshot_id  # doctest: +SKIP
    'snap-0300'
    """
    from jobs.stages.pipeline import run_pipeline

    progress = sys.stderr if progress is None else progress  # now, not at import
    snapshot_id = resolve_snapshot_id(paths, snapshot_id)
    newest = check_backfill(spark, lake, paths, snapshot_id)
    print(f"backfill: snapshot {snapshot_id} is older than the lake's newest ({newest}): stored "
          "whole beside the lake's snapshots, which stay as they are", file=progress)
    order = LakeOrder.read(spark, lake)

    def checked(sid: str, frames: dict) -> None:
        bad = disagreements(spark, lake, order.ids, frames[RAW_RECORDS])
        if bad:
            _remove(spark, lake, sid)
            raise LakeConflict(
                f"snapshot {sid!r} disagrees with the lake at "
                + ", ".join(f"partition {p} offset {o}" for p, o in bad)
                + ": the same (partition, offset) with other bytes (another cluster, or a log "
                  "truncated and written again); its rows were removed again")
        if then is not None:
            then(sid, frames)

    report = run_pipeline(spark, lake, paths, snapshot_id, progress, then=checked)
    row = (snapshot_id, cluster_id(paths), newest, report.ingest.records_read,
           int(time.time() * 1000))
    replace_snapshot(spark.createDataFrame([row], ", ".join(
        f"`{n}` {t}" for n, t, _ in BACKFILLS_COLUMNS)), lake, BACKFILLS, snapshot_id)
    return report


def disagreements(spark, lake: Path, ordered: list[str], rows, limit: int = 5) -> list[tuple]:
    """Up to ``limit`` (partition, offset) where ``rows`` (``raw_records`` rows) and the lake's
    records of its ordered snapshots hold other bytes."""
    held = read_table(spark, lake, RAW_RECORDS).where(in_ids("snapshot_id", ordered))
    return [(r[0], r[1]) for r in conflicting_rows(rows, held).limit(limit).collect()]


def _remove(spark, lake: Path, snapshot_id: str) -> None:
    """Delete ``snapshot_id``'s rows from every table of the lake."""
    from jobs.lake.views import lake_tables

    for table in lake_tables(lake):
        rows = read_table(spark, lake, table)
        if "snapshot_id" in rows.columns:
            replace_snapshot(rows.limit(0), lake, table, snapshot_id)

"""Incremental ingest (jobs.stages.increment): each record once, compaction's removals kept, only
new batches read, and a snapshot that cannot join the lake refused before anything is written.

The snapshots are written byte-exactly with decoders.log.writer as a broker's log cleaner leaves
them: the second snapshot has partition 0's first batch rewritten (the same base and last
offset, two of its three records removed, so another checksum), two batches unchanged, a new
segment with two new records, and partition 1 unchanged.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from decoders.log.directory import list_segments
from decoders.log.index import BatchRef, index_segments
from decoders.log.types import LogRecord
from decoders.log.writer import encode_batch, write_segment
from jobs.lake import RAW_RECORDS, read_table
from jobs.lake.delta import table_version
from jobs.lake.increments import BATCHES, RECORD_REMOVALS, SNAPSHOT_PARTITIONS, SNAPSHOTS
from jobs.lake.snapshot_views import snapshot_rows
from jobs.stages.increment import LakeConflict, ingest_increment
from jobs.stages.ingest import ingest

CLUSTER = "vUq5oPZxQ3GQkZ6pT1x2Yw"
T = 1_700_000_000_000


def _rec(offset: int, key: str, value: str | None) -> LogRecord:
    return LogRecord(offset, T + offset, key.encode(), None if value is None else value.encode())


B0 = [_rec(0, "k0", "a"), _rec(1, "k1", "b"), _rec(2, "k2", "c")]
B1 = [_rec(3, "k0", "d"), _rec(4, "k3", "e")]
B2 = [_rec(5, "k1", None)]
B3 = [_rec(6, "k3", "f"), _rec(7, "k4", "g")]
P1 = [_rec(0, "x0", "p"), _rec(1, "x1", "q")]


def _snapshot(root: Path, partitions: dict[int, dict[int, list[bytes]]],
              cluster: str | None = CLUSTER) -> Path:
    for partition, segments in partitions.items():
        directory = root / f"__consumer_offsets-{partition}"
        directory.mkdir(parents=True)
        for base, batches in segments.items():
            write_segment(directory / f"{base:020d}.log", batches)
    if cluster:
        (root / "meta.properties").write_text(f"version=1\ncluster.id={cluster}\nnode.id=1\n")
    return root


def _batch(records, **kw) -> bytes:
    return encode_batch(records, base_offset=records[0].offset if records else 0, **kw)


@pytest.fixture
def series(tmp_path):
    s1 = _snapshot(tmp_path / "s1", {0: {0: [_batch(B0), _batch(B1), _batch(B2)]},
                                     1: {0: [_batch(P1)]}})
    rewritten = encode_batch([B0[2]], base_offset=0, last_offset=2)
    s2 = _snapshot(tmp_path / "s2", {0: {0: [rewritten, _batch(B1), _batch(B2)], 6: [_batch(B3)]},
                                     1: {0: [_batch(P1)]}})
    return tmp_path, s1, s2


def _rows(frame, *columns) -> set[tuple]:
    return {tuple(r) for r in frame.select(*columns).collect()}


def _incremental_and_full(paths: dict, tmp_path: Path) -> tuple[Path, Path]:
    """Each snapshot of ``paths`` (id -> directory, in order) run into an incremental lake and,
    with ``--full``, into another; returns both lakes."""
    from jobs.cli import main as offsetlake

    lake, full = tmp_path / "lake", tmp_path / "full"
    for sid, path in paths.items():
        assert offsetlake(["run", str(path), "--lake", str(lake), "--snapshot-id", sid]) == 0
        assert offsetlake(["run", str(path), "--lake", str(full), "--snapshot-id", sid,
                           "--full"]) == 0
    return lake, full


def _replayed_groups(spark, lake: Path) -> dict[str, set[str]]:
    """Snapshot id -> the groups its incremental run replayed (``replayed_groups``)."""
    replayed: dict[str, set[str]] = {}
    for r in read_table(spark, lake, "replayed_groups").collect():
        replayed.setdefault(r.snapshot_id, set()).add(r.group_id)
    return replayed


def _assert_state_as_full(spark, lake: Path, full: Path, snapshot_ids, tables) -> None:
    """As of each snapshot, the incremental lake's per-group state tables equal the full run's."""
    from jobs.lake.snapshot_views import group_state

    for sid in snapshot_ids:
        for table in tables:
            expected = read_table(spark, full, table).where(f"snapshot_id = '{sid}'")
            assert (sorted(map(str, group_state(spark, lake, table, sid).collect()))
                    == sorted(map(str, expected.collect()))), (sid, table)


def test_the_index_keeps_a_rewritten_batch_s_offsets_and_changes_its_checksum(series):
    _, s1, s2 = series
    first = [b for b in index_segments(list_segments([s1])) if b.partition == 0]
    second = [b for b in index_segments(list_segments([s2])) if b.partition == 0]
    assert all(isinstance(b, BatchRef) for b in first + second)
    assert [(b.base_offset, b.last_offset, b.records) for b in first] == [(0, 2, 3), (3, 4, 2),
                                                                         (5, 5, 1)]
    assert [(b.base_offset, b.last_offset, b.records) for b in second] == [
        (0, 2, 1), (3, 4, 2), (5, 5, 1), (6, 7, 2)]
    assert first[0].crc != second[0].crc and first[0].length > second[0].length
    assert [b.identity for b in first[1:]] == [b.identity for b in second[1:3]]


def test_each_record_is_kept_once_and_compaction_s_removals_are_recorded(spark, series):
    root, s1, s2 = series
    lake = root / "lake"
    one = ingest_increment(spark, lake, [str(s1)], progress=io.StringIO())
    two = ingest_increment(spark, lake, [str(s2)], progress=io.StringIO())
    assert (one.seq, one.records, one.new_records, one.removed_records) == (1, 8, 8, 0)
    assert (two.seq, two.records, two.new_records, two.removed_records) == (2, 8, 2, 2)
    assert two.batches_skipped == 3      # B1, B2 and partition 1's batch, not read again
    assert two.bytes_read == len(encode_batch([B0[2]], base_offset=0, last_offset=2)) + len(
        _batch(B3))
    raw = read_table(spark, lake, RAW_RECORDS)
    assert sorted(_rows(raw, "snapshot_id", "partition", "offset", "key")) == sorted(
        [("s1", 0, r.offset, r.key) for r in B0 + B1 + B2]
        + [("s1", 1, r.offset, r.key) for r in P1]
        + [("s2", 0, r.offset, r.key) for r in B3])
    assert _rows(read_table(spark, lake, RECORD_REMOVALS), "snapshot_id", "partition",
                 "offset") == {("s2", 0, 0), ("s2", 0, 1)}
    assert _rows(read_table(spark, lake, SNAPSHOTS), "snapshot_id", "seq", "cluster_id",
                 "records", "new_records", "removed_records", "newest_timestamp") == {
        ("s1", 1, CLUSTER, 8, 8, 0, T + 5), ("s2", 2, CLUSTER, 8, 2, 2, T + 7)}
    assert _rows(read_table(spark, lake, SNAPSHOT_PARTITIONS).where("snapshot_id = 's2'"),
                 "partition", "log_start_offset", "log_end_offset", "records", "new_records",
                 "removed_records") == {(0, 0, 8, 6, 2, 2), (1, 0, 2, 2, 0, 0)}
    # the rewritten batch is a new version of base offset 0; the unchanged ones are listed once
    assert sorted(_rows(read_table(spark, lake, BATCHES), "snapshot_id", "partition",
                        "base_offset", "records")) == [
        ("s1", 0, 0, 3), ("s1", 0, 3, 2), ("s1", 0, 5, 1), ("s1", 1, 0, 2),
        ("s2", 0, 0, 1), ("s2", 0, 6, 2)]


def test_each_snapshot_s_view_is_what_a_full_ingest_of_it_reads(spark, series):
    root, s1, s2 = series
    lake, full = root / "lake", root / "full"
    quiet = io.StringIO()
    for snap in (s1, s2):
        ingest_increment(spark, lake, [str(snap)], progress=quiet)
        ingest(spark, full, [str(snap)], progress=quiet)
    columns = [c for c in read_table(spark, full, RAW_RECORDS).columns
               if c not in ("source_file", "file_position")]   # where the record was first read
    for sid in ("s1", "s2"):
        view = snapshot_rows(spark, lake, RAW_RECORDS, sid)
        expected = read_table(spark, full, RAW_RECORDS).where(f"snapshot_id = '{sid}'")
        assert sorted(_rows(view, *columns)) == sorted(_rows(expected, *columns)), sid
    assert sorted(r[0] for r in snapshot_rows(spark, lake, RAW_RECORDS, "s2")
                  .where("partition = 0").select("offset").collect()) == [2, 3, 4, 5, 6, 7]


def _versions(lake: Path) -> dict[str, int]:
    return {t: table_version(lake, t) for t in (RAW_RECORDS, RECORD_REMOVALS, BATCHES,
                                                SNAPSHOTS, SNAPSHOT_PARTITIONS)}


def test_a_snapshot_that_cannot_join_the_lake_is_refused_and_nothing_is_written(spark, series):
    root, s1, s2 = series
    lake, quiet = root / "lake", io.StringIO()
    ingest_increment(spark, lake, [str(s1)], progress=quiet)
    ingest_increment(spark, lake, [str(s2)], progress=quiet)
    before = _versions(lake)
    other_bytes = _snapshot(root / "s3", {0: {0: [_batch(B1)],
                                              6: [_batch([_rec(6, "k3", "other"), B3[1]])]}})
    with pytest.raises(LakeConflict, match=r"partition 0 offset 6: the same \(partition, offset\)"):
        ingest_increment(spark, lake, [str(other_bytes)], progress=quiet)
    older = _snapshot(root / "s0", {0: {0: [_batch(B0)]}, 1: {0: [_batch(P1)]}})
    with pytest.raises(LakeConflict, match=r"older than the lake's newest: partition\(s\) \[0\]"):
        ingest_increment(spark, lake, [str(older)], progress=quiet)
    elsewhere = _snapshot(root / "s4", {0: {0: [_batch(B0)]}}, cluster="another-cluster-id")
    with pytest.raises(LakeConflict, match="of cluster 'another-cluster-id'"):
        ingest_increment(spark, lake, [str(elsewhere)], progress=quiet)
    with pytest.raises(LakeConflict, match="'s1' is not the lake's newest"):
        ingest_increment(spark, lake, [str(s1)], progress=quiet)
    # Ends where s2 does, but holds partition 0's first batch as it was before the cleaner
    # rewrote it (taken between s1 and s2): older, and refused as such.
    between = _snapshot(root / "s1b", {0: {0: [_batch(B0), _batch(B1), _batch(B2)],
                                           6: [_batch(B3)]}, 1: {0: [_batch(P1)]}})
    with pytest.raises(LakeConflict, match=r"older than the lake's newest: it holds 1 batch\(es\) "
                                           r"as they were before the log cleaner rewrote them "
                                           r"\(partition 0 base offset 0\); .* --backfill"):
        ingest_increment(spark, lake, [str(between)], progress=quiet)
    assert _versions(lake) == before
    # Older, but with other bytes at an offset the lake holds: a backfill runs, finds it out,
    # and removes its rows again.
    from jobs.lake.views import lake_tables
    from jobs.stages.backfill import run_backfill

    forged = _snapshot(root / "s0x", {0: {0: [_batch([_rec(0, "k0", "forged"), *B0[1:]])]}})
    with pytest.raises(LakeConflict, match=r"'s0x' disagrees with the lake at partition 0 "
                                           r"offset 0: .* its rows were removed again"):
        run_backfill(spark, lake, [str(forged)], progress=quiet)
    for table in lake_tables(lake):
        frame = read_table(spark, lake, table)
        if "snapshot_id" in frame.columns:
            assert frame.where("snapshot_id = 's0x'").count() == 0, table
    full = root / "full"
    ingest(spark, full, [str(s1)], progress=quiet)
    with pytest.raises(LakeConflict, match=r"holds snapshots ingested in full \(s1\)"):
        ingest_increment(spark, full, [str(s2)], progress=quiet)


def test_the_newest_snapshot_ingested_again_leaves_the_same_tables(spark, series):
    root, s1, s2 = series
    lake, quiet = root / "lake", io.StringIO()
    ingest_increment(spark, lake, [str(s1)], progress=quiet)
    ingest_increment(spark, lake, [str(s2)], progress=quiet)

    def content():
        return {t: sorted(map(str, read_table(spark, lake, t).collect()))
                for t in (RAW_RECORDS, RECORD_REMOVALS, BATCHES, SNAPSHOTS, SNAPSHOT_PARTITIONS)}

    first = content()
    again = ingest_increment(spark, lake, [str(s2)], progress=quiet)
    assert (again.seq, again.new_records, again.removed_records) == (2, 2, 2)
    assert content() == first


def test_a_first_snapshot_s_run_writes_the_full_run_s_tables_and_an_unchanged_one_adds_nothing(
        spark, tmp_path, tmp_path_factory):
    from pyspark.sql import functions as F

    from jobs.lake import QUARANTINE, RECORDS
    from jobs.lake.downgrade import RECORD_FACTS
    from jobs.lake.increments import GROUP_STATE_TABLES, HISTORY_TABLES, REPLAYED_GROUPS
    from jobs.stages.increment_run import run_increment
    from support.lake_fixture import SAMPLE, sample_lake

    full = sample_lake(spark, tmp_path_factory)
    lake, quiet = tmp_path / "lake", io.StringIO()
    run = run_increment(spark, lake, [str(SAMPLE)], progress=quiet)
    first = run.ingest
    assert first.new_records == first.records > 0 and first.removed_records == 0
    groups = {r[0] for r in read_table(spark, full, "groups").select("group_id").collect()}
    assert {r[0] for r in read_table(spark, lake, REPLAYED_GROUPS).select("group_id")
            .collect()} >= groups and run.groups_replayed >= len(groups)

    def content(path, table):
        frame = read_table(spark, path, table)
        if "value" in frame.columns and table == RECORDS:
            frame = frame.withColumn("value", F.to_json("value"))
        return sorted(map(str, frame.collect()))

    for table in (RAW_RECORDS, RECORDS, RECORD_FACTS, QUARANTINE, *GROUP_STATE_TABLES,
                  *HISTORY_TABLES, "fencing_audits"):
        assert content(lake, table) == content(full, table), table
    rerun = run_increment(spark, lake, [str(SAMPLE)], "kafka-4.3.1-again", progress=quiet)
    again = rerun.ingest
    assert (again.seq, again.records, again.new_records, again.removed_records,
            again.bytes_read, rerun.groups_replayed) == (2, first.records, 0, 0, 0, 0)
    assert again.batches_skipped == len(read_table(spark, lake, BATCHES).collect())
    for table in (RAW_RECORDS, RECORDS, RECORD_FACTS, *GROUP_STATE_TABLES, *HISTORY_TABLES):
        assert read_table(spark, lake, table).where("snapshot_id = 'kafka-4.3.1-again'").count() == 0


def test_the_ingest_command_builds_an_incremental_lake_and_refuses_what_cannot_join(
        spark, series, capsys):
    from jobs.cli import main as offsetlake
    from jobs.commands.inputs import EXIT_LAKE_CONFLICT

    root, s1, s2 = series
    lake = str(root / "lake")
    assert offsetlake(["ingest", str(s1), "--lake", lake, "--incremental"]) == 0
    assert "snapshot s1 (#1 of the lake): 8 records, 8 new" in capsys.readouterr().out
    elsewhere = _snapshot(root / "s4", {0: {0: [_batch(B0)]}}, cluster="another-cluster-id")
    assert offsetlake(["ingest", str(elsewhere), "--lake", lake, "--incremental"]) == \
        EXIT_LAKE_CONFLICT
    assert "of cluster 'another-cluster-id'; the lake holds cluster" in capsys.readouterr().err
    for command in (["ingest", str(s2)], ["run", str(s2), "--full"]):
        assert offsetlake([*command, "--lake", lake]) == EXIT_LAKE_CONFLICT
        assert "is an incremental lake (it keeps each record once): " in capsys.readouterr().err
    assert offsetlake(["ingest", str(s2), "--lake", lake, "--incremental"]) == 0
    assert "snapshot s2 (#2 of the lake): 8 records, 2 new, 2 removed" in capsys.readouterr().out


def test_the_incremental_tables_are_documented_as_they_are_declared():
    import re

    doc = (Path(__file__).resolve().parents[1] / "docs" / "lake.md").read_text()
    from jobs.lake.increments import INCREMENT_TABLES

    for name, columns in INCREMENT_TABLES.items():
        section = doc.split(f"### `{name}`\n", 1)[1].split("\n#", 1)[0]
        assert re.findall(r"\| `(\w+)` \| ([^|]+) \|", section) == [
            (c, t) for c, t, _ in columns], name


@pytest.fixture(scope="module")
def of01(spark, tmp_path_factory):
    """OF-01: group g commits for a partition nobody owns, after a metadata change has superseded
    its first group-epoch record. An incremental lake (the run's default in a new lake) holds the
    log whole, then compacted. Returns (root, whole, compacted, lake, offset of the commit)."""
    from support.scenarios import Scenario

    from jobs.cli import main as offsetlake

    root = tmp_path_factory.mktemp("of01")
    s = (Scenario("g").consumer_join("A", ["foo", "bar"])
         .compute_target({"A": {"foo": [0, 1, 2]}}).converge("A").metadata_change())
    at = s.next_offset
    s.offset_commit({"foo": {5: 10}})
    whole, compacted = s.write(root / "whole"), s.compacted().write(root / "compacted")
    lake = root / "lake"
    for path in (whole, compacted):
        assert offsetlake(["run", str(path), "--lake", str(lake)]) == 0
    return root, whole, compacted, lake, at


def _of01(findings) -> list[tuple]:
    return [(f["group_id"], f["log_offset"], f["verdict"]) for f in findings
            if f["rule_id"] == "OF-01"]


def test_the_history_audit_keeps_what_compaction_removed_and_is_partial_across_gaps(
        spark, of01, capsys):
    """On the OF-01 lake (:func:`of01`): the audit of the compacted snapshot (as of it) can only
    call the commit partial, its evidence being removed; the history audit through it finds the
    violation, the lake having kept the removed record, and so does the run's fencing audit of
    the snapshot (``fencing_findings``: each group's history). A lake that never saw the log
    whole has those offsets as gaps: partial there too."""
    from jobs.cli import main as offsetlake
    from jobs.lake.increments import HISTORY_FINDINGS
    from jobs.lake.snapshot_views import group_state
    from jobs.stages.audit import audit_history, audit_lake

    root, whole, compacted, lake, at = of01
    assert _of01(audit_lake(spark, lake, "whole").findings) == [("g", at, "violation")]
    assert _of01(audit_lake(spark, lake, "compacted").findings) == [("g", at, "partial")]
    run = [r.asDict() for r in group_state(spark, lake, "fencing_findings", "compacted").collect()]
    assert _of01(run) == [("g", at, "violation")]
    capsys.readouterr()
    assert offsetlake(["audit", "--lake", str(lake), "--history", "--rule", "OF-01",
                       "--fail-on", "high"]) == 8
    assert "audit: history through snapshot compacted" in capsys.readouterr().err
    history = read_table(spark, lake, HISTORY_FINDINGS).where("rule_id = 'OF-01'").collect()
    assert [(r.snapshot_id, r.group_id, r.log_offset, r.verdict) for r in history] == [
        ("compacted", "g", at, "violation")]
    only = root / "only-compacted"
    assert offsetlake(["run", str(compacted), "--lake", str(only)]) == 0
    assert _of01(audit_history(spark, only).findings) == [("g", at, "partial")]
    assert offsetlake(["audit", "--lake", str(only), "--history", "--target-version", "4.0"]) == 2
    assert offsetlake(["audit", "--lake", str(root / "none"), "--history"]) == 5


def _as_of_rows(spark, lake: Path, snapshot_id: str) -> dict[str, list[str]]:
    """Every replay and record table as of the snapshot, its id left out, in a comparable form."""
    from pyspark.sql import functions as F

    from jobs.lake import RECORDS
    from jobs.lake.downgrade import RECORD_FACTS
    from jobs.lake.increments import GROUP_STATE_TABLES, HISTORY_TABLES
    from jobs.lake.snapshot_views import read_as_of

    out = {}
    for table in (RAW_RECORDS, RECORDS, RECORD_FACTS, *GROUP_STATE_TABLES, *HISTORY_TABLES):
        frame = read_as_of(spark, lake, table, snapshot_id).drop("snapshot_id")
        if table == RECORDS:
            frame = frame.withColumn("value", F.to_json("value"))
        out[table] = sorted(map(str, frame.collect()))
    return out


def test_an_older_snapshot_is_refused_or_backfilled_beside_the_lake_s_snapshots(
        spark, of01, capsys):
    """On the OF-01 lake (:func:`of01`: the log whole, then compacted): the whole log again
    (older: it holds a batch as it was before the cleaner rewrote it) is refused, and with
    --backfill kept whole beside them: its tables are the whole snapshot's, and the ordered
    snapshots' views, history and history audit are what they were."""
    from jobs.cli import main as offsetlake
    from jobs.commands.inputs import EXIT_LAKE_CONFLICT
    from jobs.lake.increments import BACKFILLS
    from jobs.lake.views import snapshot_ids
    from jobs.stages.audit import audit_history, audit_lake

    root, whole, compacted, lake, at = of01
    ordered = {sid: _as_of_rows(spark, lake, sid) for sid in ("whole", "compacted")}
    history = audit_history(spark, lake).findings
    records = read_table(spark, lake, SNAPSHOTS).where("snapshot_id = 'whole'").first().records
    capsys.readouterr()

    again = ["run", str(whole), "--lake", str(lake), "--snapshot-id", "whole-again"]
    assert offsetlake(again) == EXIT_LAKE_CONFLICT
    assert ("'whole-again' is older than the lake's newest: it holds 1 batch(es) as they were "
            "before the log cleaner rewrote them (partition 0 base offset 0); to keep it beside "
            "the lake's snapshots without changing them, run it with --backfill"
            in capsys.readouterr().err)
    for refused, says in (
            (["run", str(compacted), "--lake", str(lake), "--snapshot-id", "c2", "--backfill"],
             "'c2' is not older than the lake's newest ('compacted'): run it without --backfill"),
            (["run", str(whole), "--lake", str(lake), "--backfill"],
             "'whole' is one of the lake's snapshots in order: give the backfill an id of its "
             "own"),
            (["run", str(whole), "--lake", str(root / "new"), "--backfill"],
             "is not an incremental lake: --backfill keeps an older snapshot")):
        assert offsetlake(refused) == EXIT_LAKE_CONFLICT
        assert says in capsys.readouterr().err
    assert snapshot_ids(spark, lake) == ["whole", "compacted"]

    assert offsetlake([*again, "--backfill", "--audit", "--fail-on", "never"]) == 0
    assert ("backfill: snapshot whole-again is older than the lake's newest (compacted)"
            in capsys.readouterr().err)
    assert snapshot_ids(spark, lake) == ["whole-again", "whole", "compacted"]
    assert [(r.snapshot_id, r.newest_then, r.records) for r in
            read_table(spark, lake, BACKFILLS).collect()] == [("whole-again", "compacted",
                                                               records)]
    assert _as_of_rows(spark, lake, "whole-again") == ordered["whole"]
    for sid, rows in ordered.items():
        assert _as_of_rows(spark, lake, sid) == rows, sid
    assert audit_history(spark, lake).findings == history
    assert _of01(audit_lake(spark, lake, "whole-again").findings) == [("g", at, "violation")]


def test_an_unchanged_group_s_findings_follow_the_snapshot_s_time_and_regime_not_compaction(
        spark, tmp_path):
    """A group the snapshot did not change can still be audited otherwise than before: its
    fencing findings depend on the snapshot's time (an open transaction ages past the timeout:
    TX-01, whose age is in its details) and on the regime (a 4.3 writer's first
    AssignmentEpochs); not on what compaction removes, the lake keeping it (a record of another
    group compacted away before an OF-01 makes a full run's of that snapshot partial, not the
    lake's). One partition, groups g (OF-01), t (an open transaction) and o (commits, its first
    one compacted away), then k (joins with assignment epochs): every snapshot's
    ``fencing_findings`` as of it equal the history audit through it."""
    from support.scenarios import Scenario
    from support.scenarios.log import write_partition

    from jobs.cli import main as offsetlake
    from jobs.lake.snapshot_views import group_state
    from jobs.stages.audit import audit_history

    s = Scenario("o", assignment_epochs=False)
    s.offset_commit({"bar": {0: 1}})
    s.group("g").consumer_join("A", ["foo"]).compute_target({"A": {"foo": [0, 1, 2]}}).converge("A")
    s.offset_commit({"foo": {5: 10}})
    began = s.now_ms
    s.group("t").txn_offset_commit(7, {"baz": {0: 3}})
    s.group("o").offset_commit({"bar": {0: 2}})
    snapshots = {"s1": s.write(tmp_path / "s1")}
    # 20 minutes on, o commits again and the cleaner has removed o's first commit (offset 0)
    s.advance(20 * 60_000).group("o").offset_commit({"bar": {0: 3}})
    write_partition(s.batches[1:], tmp_path / "s2", s.partition)
    snapshots["s2"] = tmp_path / "s2"
    # then a member joins a new group k with a 4.3 coordinator: AssignmentEpochs (relaxed)
    s.assignment_epochs = True
    s.group("k").consumer_join("B", ["qux"]).compute_target({"B": {"qux": [0]}}).converge("B")
    write_partition(s.batches[1:], tmp_path / "s3", s.partition)
    snapshots["s3"] = tmp_path / "s3"

    lake, full = tmp_path / "lake", tmp_path / "full"
    for sid, path in snapshots.items():
        assert offsetlake(["run", str(path), "--lake", str(lake), "--snapshot-id", sid]) == 0
    assert offsetlake(["run", str(snapshots["s2"]), "--lake", str(full), "--snapshot-id", "s2",
                       "--full"]) == 0

    def found(rows) -> list[tuple]:
        return sorted((r["group_id"], r["rule_id"], r["log_offset"], r["verdict"], r["message"],
                       r["details"]) for r in rows)

    def run(sid: str) -> list[tuple]:
        return found(r.asDict() for r in group_state(spark, lake, "fencing_findings", sid)
                     .collect())

    def rules(rows) -> list[tuple]:
        return [(g, rule, verdict) for g, rule, _, verdict, _, _ in rows
                if rule in ("OF-01", "TX-01")]

    for sid in snapshots:
        assert run(sid) == found(audit_history(spark, lake, sid).findings), sid
    # the causes: TX-01 from s2 on (time), the relaxed regime in s3; OF-01 stays a violation,
    # where the full run of the compacted s2 can only call it partial
    assert rules(run("s1")) == [("g", "OF-01", "violation")]
    assert rules(run("s2")) == rules(run("s3")) == [("g", "OF-01", "violation"),
                                                    ("t", "TX-01", "violation")]
    assert rules(found(r.asDict() for r in read_table(spark, full, "fencing_findings")
                       .collect())) == [("g", "OF-01", "partial"), ("t", "TX-01", "violation")]
    regimes = read_table(spark, lake, "fencing_audits").orderBy("snapshot_id").collect()
    assert [r.regime for r in regimes] == ["strict", "strict", "relaxed"]
    # which groups each snapshot replayed, and why (replayed_groups keeps what the audit read):
    # o for its new commit, t for its deadline; in s3 every group (the regime)
    replayed = {(r.snapshot_id, r.group_id): r for r in
                read_table(spark, lake, "replayed_groups").collect()}
    assert sorted(k for k in replayed if k[0] != "s1") == [
        ("s2", "o"), ("s2", "t"), ("s3", "g"), ("s3", "k"), ("s3", "o"), ("s3", "t")]
    t1 = replayed[("s1", "t")]
    assert (t1.findings_valid_from, t1.evidence_partition) == (None, None)
    assert t1.findings_valid_until == began + 900_000 + 1   # past TX-01's deadline


def test_compaction_replays_a_group_only_where_its_state_rests_on_a_removed_record(
        spark, tmp_path):
    """Group c (a simple group: commits only) commits bar-0 three times, group d once, group e
    zz-0 and then qux-0 twice, the second time with a 4.0 client (v3: no topic id); then d commits
    again and the cleaner removes c's second commit (superseded, not the first, which created c,
    and its topic id named again by the key's later commit) and e's first commit of qux-0 (the
    only one naming qux's topic id): d and e are replayed, not c. Then the cleaner removes c's
    first commit too: c is replayed, its group row now resting on its last commit. As of each
    snapshot, the state tables are the full run's of it."""
    from support.scenarios import Scenario
    from support.scenarios.log import write_partition

    s = Scenario("c", assignment_epochs=False)
    for offset in (1, 2, 3):
        s.offset_commit({"bar": {0: offset}})
    s.group("d").offset_commit({"baz": {0: 1}})
    s.group("e").offset_commit({"zz": {0: 1}})
    s.offset_commit({"qux": {0: 1}})
    s.offset_commit_version = 3
    s.offset_commit({"qux": {0: 2}})
    paths = {"s1": s.write(tmp_path / "s1")}
    s.group("d").offset_commit({"baz": {0: 2}})
    first, second, third, d1, e1, e2, *rest = s.batches
    paths["s2"] = write_partition([first, third, d1, e1, *rest], tmp_path / "s2", s.partition)
    paths["s3"] = write_partition([third, d1, e1, *rest], tmp_path / "s3", s.partition)
    lake, full = _incremental_and_full(paths, tmp_path)
    assert _replayed_groups(spark, lake) == {"s1": {"c", "d", "e"}, "s2": {"d", "e"}, "s3": {"c"}}
    assert [r.offset for r in read_table(spark, lake, RECORD_REMOVALS)
            .orderBy("snapshot_id", "offset").collect()] == [
        second.base_offset, e2.base_offset, first.base_offset]
    _assert_state_as_full(spark, lake, full, paths,
                          ("groups", "members", "offsets", "fencing_findings"))
    created = {sid: read_table(spark, full, "groups").where(f"snapshot_id = '{sid}'")
               .where("group_id = 'c'").first().log_offset for sid in paths}
    assert created == {"s1": first.base_offset, "s2": first.base_offset,
                       "s3": third.base_offset}


def test_a_topic_name_one_group_learns_or_loses_renames_another_group_s_assignments(
        spark, tmp_path):
    """Group h (partition 0) is assigned foo and never commits: its assignment rows are named by
    the pair another group's records carry, g's 4.1+ offset commit (partition 1). Snapshot
    ``one``: no such commit, h's rows unnamed; ``two``: g commits, h's rows named although none
    of h's records changed; ``three``: g deleted and its commit compacted away, unnamed again.
    Each snapshot's assignment tables in the incremental lake are the full replay's of it (the
    pure replay, pairs learned in any partition naming every row), and the runs that renamed h
    replayed it."""
    import json

    from support.partition_dirs import events_from_partition_dir
    from support.scenarios import Scenario

    from jobs.cli import main as offsetlake
    from jobs.lake.delta import has_table, table_path
    from jobs.lake.increments import GROUP_TOPIC_NAMES, REPLAYED_GROUPS
    from jobs.lake.snapshot_views import read_as_of
    from jobs.replay import replay_partition
    from jobs.replay.topics import RESOLVED_TABLES, fill_topic_names, merge_topic_names
    from jobs.stages.increment_run import run_increment

    h = (Scenario("h").consumer_join("C", ["foo"]).compute_target({"C": {"foo": [3]}})
         .converge("C"))
    g = Scenario("g", partition=1, start_time_ms=1_700_000_100_000)
    g.offset_commit({"foo": {0: 10}})
    one = h.write(tmp_path / "one")   # partition 1 holds nothing yet
    two = g.write(h.write(tmp_path / "two"))
    three = g.delete_group().compacted().write(h.write(tmp_path / "three"))
    lake = tmp_path / "lake"

    def canon(rows):
        return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)

    def replayed(snap) -> dict[str, list[str]]:
        results = [replay_partition(events_from_partition_dir(d))
                   for d in sorted(snap.glob("__consumer_offsets-*"))]
        tables = {t: [row for r in results for row in r.tables[t]] for t in RESOLVED_TABLES}
        fill_topic_names(tables, merge_topic_names(r.topic_names for r in results))
        return {t: canon(rows) for t, rows in tables.items()}

    def as_of(sid) -> dict[str, list[str]]:
        return {t: canon(r.asDict(recursive=True) for r in read_as_of(spark, lake, t, sid)
                         .drop("snapshot_id").collect()) for t in RESOLVED_TABLES}

    for snap in (one, two, three):
        assert offsetlake(["run", str(snap), "--lake", str(lake)]) == 0, snap.name
        assert as_of(snap.name) == replayed(snap), snap.name
    named = {sid: sorted({(r.topic_name,) for r in read_as_of(
        spark, lake, "member_assignments", sid).where("group_id = 'h'").collect()})
             for sid in ("one", "two", "three")}
    assert named == {"one": [(None,)], "two": [("foo",)], "three": [(None,)]}
    runs = read_table(spark, lake, REPLAYED_GROUPS).where("group_id = 'h'")
    assert sorted(r.snapshot_id for r in runs.collect()) == ["one", "three", "two"]
    # a lake written before group_topic_names: the next run replays every group once
    shutil.rmtree(table_path(lake, GROUP_TOPIC_NAMES))
    again = run_increment(spark, lake, [str(three)], "three-again", progress=io.StringIO())
    assert again.groups_replayed == 2 and as_of("three-again") == replayed(three)
    assert has_table(lake, GROUP_TOPIC_NAMES)   # with no pair in it: the next run need not
    assert read_table(spark, lake, GROUP_TOPIC_NAMES).collect() == []


def test_a_resumed_audit_reads_what_compaction_removed_after_its_fold(spark, tmp_path, capsys):
    """Group t's audits at s2 and s3 resume the fold s1 kept (``fencing_folds``: a resumed audit
    that read few records keeps none) and equal the history audit. At s1 t's transactional commit
    (producer 7) is open; by s2 a later commit of the same key has superseded it, the cleaner
    removed it and producer 7's COMMIT marker came 20 minutes on: none of t's records the run
    reads names producer 7 any more, the fold's open transaction does (``open_producers``), so
    the marker ends it (a TX-02 skip) instead of leaving it open past the timeout (TX-01). s2's
    commit rewinds foo-0 (OF-03); by s3 a newer commit superseded it and the cleaner removed it,
    after s1's fold: s3 reads it among the removed records."""
    import json

    from support.scenarios import Scenario
    from support.scenarios.log import write_partition

    from jobs.cli import main as offsetlake
    from jobs.lake.snapshot_views import group_state
    from jobs.stages.audit import audit_history

    s = Scenario("t")
    s.offset_commit({"foo": {0: 10}})
    s.txn_offset_commit(7, {"baz": {0: 3}})
    s.offset_commit({"baz": {0: 4}})
    snapshots = {"s1": s.write(tmp_path / "s1")}
    s.advance(20 * 60_000).end_txn(7, "COMMIT")
    rewind = s.next_offset
    s.offset_commit({"foo": {0: 5}})
    write_partition([b for i, b in enumerate(s.batches) if i != 1], tmp_path / "s2", s.partition)
    s.offset_commit({"foo": {0: 7}})
    write_partition([b for i, b in enumerate(s.batches) if i not in (1, 4)], tmp_path / "s3",
                    s.partition)
    snapshots.update(s2=tmp_path / "s2", s3=tmp_path / "s3")

    lake = tmp_path / "lake"
    for sid, path in snapshots.items():
        assert offsetlake(["run", str(path), "--lake", str(lake), "--snapshot-id", sid]) == 0
    err = capsys.readouterr().err
    assert err.count("1 group(s) resume the audit an earlier snapshot kept") == 2

    def found(rows) -> list[tuple]:
        return sorted((r["group_id"], r["rule_id"], r["log_offset"], r["verdict"], r["message"],
                       r["details"]) for r in rows)

    for sid in snapshots:
        lake_rows = found(r.asDict() for r in group_state(spark, lake, "fencing_findings", sid)
                          .collect())
        assert lake_rows == found(audit_history(spark, lake, sid).findings), sid
    s3 = found(r.asDict() for r in group_state(spark, lake, "fencing_findings", "s3").collect())
    assert [(rule, offset) for _, rule, offset, *_ in s3] == [("OF-03", rewind), ("TX-02", 3)]
    folds = read_table(spark, lake, "fencing_folds").collect()
    assert [(f.snapshot_id, f.group_id, f.open_producers, f.folded_until) for f in folds] == [
        ("s1", "t", [7], 2)]
    assert json.loads(folds[0].topic_reads)["ambiguous"] is False


def test_a_marker_replays_the_groups_of_its_producer_s_transaction_not_its_partition_s(
        spark, tmp_path):
    """Groups a and b share a partition: a's transaction (producer 7) is committed in the first
    snapshot, b's (producer 8) still open. The second snapshot adds only producer 8's COMMIT
    marker: it decides b's pending offsets and nothing of a's, so b is replayed and a is not; as
    of each snapshot the state tables are the full run's (b's offsets installed by the marker)."""
    from support.scenarios import Scenario

    from jobs.lake.snapshot_views import group_state

    s = Scenario("a", assignment_epochs=False)
    s.offset_commit({"foo": {0: 1}})
    s.transactional_commit(7, {"foo": {0: 2}}, outcome="COMMIT")
    s.group("b").offset_commit({"bar": {0: 1}})
    s.txn_offset_commit(8, {"bar": {0: 5}})
    paths = {"s1": s.write(tmp_path / "s1")}
    s.end_txn(8, "COMMIT")
    paths["s2"] = s.write(tmp_path / "s2")
    lake, full = _incremental_and_full(paths, tmp_path)
    assert _replayed_groups(spark, lake) == {"s1": {"a", "b"}, "s2": {"b"}}
    _assert_state_as_full(spark, lake, full, paths, ("groups", "offsets", "fencing_findings"))
    assert {(r.group_id, r.committed_offset) for r in group_state(spark, lake, "offsets", "s2")
            .collect()} == {("a", 2), ("b", 5)}


def test_superseded_commits_a_fold_covers_are_left_out_and_read_again_when_it_cannot_resume(
        spark, tmp_path, capsys, monkeypatch):
    """Group t commits foo-0 at 10, rewinds it to 5 (OF-03), then 7 and 8; s2 and s3 each add a
    commit. At s2 t's audit resumes the fold s1 kept, so the replay leaves out the commits at 5
    and 7 (superseded by 8; 10 is t's first commit); at s3 the fold cannot resume (its topic
    names are made to disagree): the run replays t again with every commit, and the audit from
    t's first record finds the rewind. As of each snapshot the state tables (findings too) are
    the full run's."""
    from support.scenarios import Scenario

    import jobs.audits.engine as engine
    from jobs.stages import offsets

    s = Scenario("t", assignment_epochs=False)
    for offset in (10, 5, 7, 8):
        s.offset_commit({"foo": {0: offset}})
    rewind = s.batches[1].base_offset
    paths = {"s1": s.write(tmp_path / "s1")}
    s.offset_commit({"foo": {0: 9}})
    paths["s2"] = s.write(tmp_path / "s2")
    s.offset_commit({"foo": {0: 11}})
    paths["s3"] = s.write(tmp_path / "s3")

    left: list[list[int]] = []
    real = offsets.without_superseded

    def spied(commits, tombstones, until):
        kept = real(commits, tombstones, until)
        left.append(sorted({r.offset for r in commits.collect()}
                           - {r.offset for r in kept.collect()}))
        return kept

    monkeypatch.setattr(offsets, "without_superseded", spied)
    from jobs.cli import main as offsetlake

    lake, full = tmp_path / "lake", tmp_path / "full"
    for sid, path in paths.items():
        if sid == "s3":
            monkeypatch.setattr(engine, "resumable", lambda reads, names: False)
        assert offsetlake(["run", str(path), "--lake", str(lake), "--snapshot-id", sid]) == 0
        assert offsetlake(["run", str(path), "--lake", str(full), "--snapshot-id", sid,
                           "--full"]) == 0
    err = capsys.readouterr().err
    assert err.count("1 group(s) resume the audit an earlier snapshot kept") == 1
    assert ("1 group(s) whose audit cannot resume its fold (topic names changed): replayed "
            "again with every held commit") in err
    # s2 leaves out the rewind and 7 (8 is the key's last); s3 those and 8, then replays them
    assert left == [[rewind, rewind + 1], [rewind, rewind + 1, rewind + 2]]
    _assert_state_as_full(spark, lake, full, paths,
                          ("groups", "members", "offsets", "fencing_findings"))
    s3 = read_table(spark, full, "fencing_findings").where("snapshot_id = 's3'").collect()
    assert ("OF-03", rewind) in {(r.rule_id, r.log_offset) for r in s3}


def test_the_lake_is_read_a_batch_at_a_time_when_its_largest_record_allows_and_the_tables_agree(
        spark, tmp_path, monkeypatch):
    """Two snapshots of a consumer group and a simple group (the second adds records and the
    cleaner removes a superseded commit) run into two incremental lakes under whole-stage code
    generation (the vectorized reader needs it): one reads the lake's rows a batch at a time, as
    its largest record allows, the other row by row (its largest unknown). ``largest_records``
    holds each snapshot's largest key and value; the runs read ``records`` columnar (a
    ColumnarToRow in the plan) only in the first lake; every table of the two lakes is the same
    but ``snapshots`` (it holds run times)."""
    from support.scenarios import Scenario
    from support.scenarios.log import write_partition

    import jobs.stages.increment as increment
    import jobs.stages.increment_run as increment_run
    from jobs.stages.increment_run import run_increment

    s = Scenario("g", assignment_epochs=False)
    s.consumer_join("m1", ["foo"])
    s.compute_target({"m1": {"foo": [0, 1]}})
    s.heartbeat("m1")
    first = len(s.batches)
    for offset in (1, 2, 3):
        s.offset_commit({"foo": {0: offset, 1: offset}})
    s.group("c").offset_commit({"bar": {0: 1}}, metadata="x" * 3000)
    paths = {"s1": s.write(tmp_path / "s1")}
    s.group("g").consumer_join("m2", ["foo"])
    s.offset_commit({"foo": {0: 4}})
    s.group("c").offset_commit({"bar": {0: 2}})
    superseded = s.batches[first]     # g's first commit, superseded by the next
    paths["s2"] = write_partition([b for b in s.batches if b is not superseded],
                                  tmp_path / "s2", s.partition)

    plans: list[tuple[str, bool]] = []
    held_records = increment_run._held_records

    def seen(spark_, lake, inc):
        frame = held_records(spark_, lake, inc)
        plans.append((lake.name, "ColumnarToRow" in
                      frame._jdf.queryExecution().executedPlan().toString()))
        return frame

    monkeypatch.setattr(increment_run, "_held_records", seen)
    codegen = spark.conf.get("spark.sql.codegen.wholeStage")
    spark.conf.set("spark.sql.codegen.wholeStage", "true")
    try:
        for sid, path in paths.items():   # not the CLI: a small run's session has it off
            run_increment(spark, tmp_path / "batched", [str(path)], snapshot_id=sid)
        with monkeypatch.context() as unknown:
            unknown.setattr(increment, "largest_row", lambda *a: None)
            for sid, path in paths.items():
                run_increment(spark, tmp_path / "rows", [str(path)], snapshot_id=sid)
    finally:
        spark.conf.set("spark.sql.codegen.wholeStage", codegen)
    assert spark.conf.get("spark.sql.parquet.enableVectorizedReader") == "false"
    assert {lake for lake, columnar in plans if columnar} == {"batched"}
    assert {lake for lake, columnar in plans if not columnar} == {"rows"}

    from pyspark.sql import functions as F

    batched, rows = tmp_path / "batched", tmp_path / "rows"
    raw = read_table(spark, batched, RAW_RECORDS)
    largest = {r[0]: r[1] for r in raw.groupBy("snapshot_id").agg(F.max(
        F.coalesce(F.length("key"), F.lit(0)) + F.coalesce(F.length("value"), F.lit(0)))).collect()}
    sizes = {r.snapshot_id: r.largest_row_bytes
             for r in read_table(spark, batched, increment.LARGEST_RECORDS).collect()}
    assert sizes["s1"] == largest["s1"] > 3000          # group c's commit, read whole
    assert sizes["s2"] >= largest["s2"]
    assert increment.largest_row(spark, batched, ["s1", "s2"]) == max(sizes.values())
    assert increment.largest_row(spark, batched, []) == 0
    assert increment.largest_row(spark, batched, ["s1", "elsewhere"]) is None
    for table in sorted(p.name for p in batched.iterdir() if (p / "_delta_log").is_dir()):
        if table == SNAPSHOTS:
            continue
        a, b = read_table(spark, batched, table), read_table(spark, rows, table)
        assert sorted(map(str, a.collect())) == sorted(map(str, b.select(*a.columns).collect())), \
            table


def test_a_record_too_large_for_a_batch_of_64_rows_reads_the_lake_row_by_row(spark, tmp_path):
    """columnar_rows: the budget over the larger of the lake's and the snapshot's largest
    record, at most 4096 rows, row by row (None) under 64 or when either is unknown; and
    columnar_reads puts the session's settings back, unset ones unset."""
    from types import SimpleNamespace

    from jobs.lake.delta import replace_snapshot
    from jobs.stages.increment import (LARGEST_RECORDS, LARGEST_RECORDS_COLUMNS, _frame,
                                       columnar_reads, columnar_rows)
    from jobs.stages.ingest import COLUMNAR_CONF

    lake = tmp_path / "lake"
    for sid, size in (("s1", 1000), ("s2", 64 << 10), ("s3", None)):
        replace_snapshot(_frame(spark, [(sid, size)], LARGEST_RECORDS_COLUMNS), lake,
                         LARGEST_RECORDS, sid)
    small, huge = SimpleNamespace(largest_row_bytes=200), SimpleNamespace(largest_row_bytes=1 << 20)
    budget = 32 << 20
    assert columnar_rows(spark, lake, ["s1"], small, budget) == 4096
    assert columnar_rows(spark, lake, ["s1", "s2"], small, budget) == 512
    assert columnar_rows(spark, lake, ["s1"], huge, budget) is None          # 32 rows fit
    assert columnar_rows(spark, lake, ["s1", "s3"], small, budget) is None   # s3's unknown
    assert columnar_rows(spark, lake, ["s1"], SimpleNamespace(largest_row_bytes=None),
                         budget) is None
    assert columnar_rows(spark, tmp_path / "none", ["s1"], small, budget) is None
    assert columnar_rows(spark, lake, [], small, budget) == 4096

    spark.conf.unset(COLUMNAR_CONF[1])
    before = spark.conf.get(COLUMNAR_CONF[0])
    with columnar_reads(spark, 512):
        assert [spark.conf.get(k) for k in COLUMNAR_CONF] == ["true", "512"]
    assert spark.conf.get(COLUMNAR_CONF[0]) == before
    assert spark.conf.get(COLUMNAR_CONF[1]) == "4096"     # Spark's default: unset again
    with columnar_reads(spark, None):
        assert spark.conf.get(COLUMNAR_CONF[0]) == before


def test_a_lake_written_before_largest_records_gets_each_snapshots_figure_from_its_raw_records(
        spark, tmp_path):
    """A lake without ``largest_records`` (written before the table), or with a snapshot's figure
    null (a capture's), learns each missing figure on its next run from the ``raw_records`` rows
    the snapshot was the first to hold, writes it, and the run after that reads none of them
    again; the lake's largest is then known, so it can be read a batch at a time."""
    from types import SimpleNamespace

    from pyspark.sql import functions as F
    from support.scenarios import Scenario
    from support.scenarios.log import write_partition

    from jobs.lake.delta import replace_snapshot
    from jobs.stages.increment import (LARGEST_RECORDS, LARGEST_RECORDS_COLUMNS, _frame,
                                       columnar_rows, fill_largest, known_largest, largest_row)
    from jobs.stages.increment_run import run_increment

    s = Scenario("g", assignment_epochs=False)
    s.consumer_join("m1", ["foo"])
    s.offset_commit({"foo": {0: 1}})
    paths = {"s1": s.write(tmp_path / "s1")}
    s.group("c").offset_commit({"bar": {0: 1}}, metadata="y" * 5000)
    paths["s2"] = write_partition(list(s.batches), tmp_path / "s2", s.partition)
    s.group("g").offset_commit({"foo": {0: 2}})
    paths["s3"] = write_partition(list(s.batches), tmp_path / "s3", s.partition)
    s.group("g").offset_commit({"foo": {0: 3}})
    paths["s4"] = write_partition(list(s.batches), tmp_path / "s4", s.partition)

    lake = tmp_path / "lake"
    for sid in ("s1", "s2"):
        run_increment(spark, lake, [str(paths[sid])], snapshot_id=sid, progress=io.StringIO())
    shutil.rmtree(lake / LARGEST_RECORDS)          # as a lake written before the table
    assert known_largest(spark, lake, ["s1", "s2"]) == {}
    assert largest_row(spark, lake, ["s1", "s2"]) is None

    raw = read_table(spark, lake, RAW_RECORDS)
    expected = {r[0]: r[1] for r in raw.groupBy("snapshot_id").agg(F.max(
        F.length("key") + F.coalesce(F.length("value"), F.lit(0)))).collect()}
    assert expected["s2"] > 5000 > expected["s1"]

    said = io.StringIO()
    run_increment(spark, lake, [str(paths["s3"])], snapshot_id="s3", progress=said)
    assert "does not give the largest record of 2 earlier snapshot(s)" in said.getvalue()
    sizes = {r.snapshot_id: r.largest_row_bytes for r in read_table(spark, lake, LARGEST_RECORDS)
             .collect()}
    assert sizes["s1"] == expected["s1"] and sizes["s2"] == expected["s2"]
    assert sizes["s3"] >= 0 and len(sizes) == 3
    assert largest_row(spark, lake, ["s1", "s2", "s3"]) == expected["s2"]
    assert columnar_rows(spark, lake, ["s1", "s2", "s3"], SimpleNamespace(largest_row_bytes=100),
                         32 << 20) == 4096

    # a capture's null figure: filled on the next run, once
    replace_snapshot(_frame(spark, [("s2", None)], LARGEST_RECORDS_COLUMNS), lake,
                     LARGEST_RECORDS, "s2")
    assert set(known_largest(spark, lake, ["s1", "s2", "s3"])) == {"s1", "s3"}
    assert fill_largest(spark, lake, ["s1", "s2", "s3"], io.StringIO()) == {"s2": expected["s2"]}
    said = io.StringIO()
    run_increment(spark, lake, [str(paths["s4"])], snapshot_id="s4", progress=said)
    assert "does not give the largest record of 1 earlier snapshot(s)" in said.getvalue()
    assert set(known_largest(spark, lake, ["s1", "s2", "s3", "s4"])) == {"s1", "s2", "s3", "s4"}
    assert fill_largest(spark, lake, ["s1", "s2", "s3", "s4"], io.StringIO()) == {}
    rows = read_table(spark, lake, LARGEST_RECORDS).where("snapshot_id = 's2'").collect()
    assert [r.largest_row_bytes for r in rows] == [expected["s2"]]


def test_commit_topic_ids_hold_the_pairs_of_each_snapshots_new_commits_and_an_older_lake_reads_offset_commits(
        spark, tmp_path):
    """Each run writes the distinct topic id -> name pairs the offset commits of its new records
    give, and one row of nulls; the pairs of the earlier snapshots (:func:`_commit_pairs`) are
    those of every offset commit the lake holds, read from ``commit_topic_ids`` or, for the
    snapshots written before the table, from ``offset_commits``."""
    from support.scenarios import Scenario

    from jobs.lake.delta import table_path
    from jobs.lake.increments import COMMIT_TOPIC_IDS
    from jobs.stages.increment_run import _commit_pairs, run_increment

    g = Scenario("g")
    g.offset_commit({"foo": {0: 10}})
    one = g.write(tmp_path / "one")
    g.offset_commit({"bar": {0: 3}, "foo": {0: 11}})
    two = g.write(tmp_path / "two")
    g.offset_commit({"baz": {1: 1}})
    three = g.write(tmp_path / "three")
    foo, bar, baz = (str(g.topic_id(t)) for t in ("foo", "bar", "baz"))

    lake = tmp_path / "lake"
    for snap in (one, two):
        run_increment(spark, lake, [str(snap)], snap.name, progress=io.StringIO())
    rows = {tuple(r) for r in read_table(spark, lake, COMMIT_TOPIC_IDS).collect()}
    assert rows == {("one", foo, "foo"), ("one", None, None), ("two", bar, "bar"),
                    ("two", foo, "foo"), ("two", None, None)}

    def pairs(sids) -> set:
        return {tuple(r) for r in _commit_pairs(spark, lake, sids).collect() if r[0] is not None}

    commits = {(r.topic_id, r.topic) for r in read_table(spark, lake, "offset_commits").collect()}
    assert pairs(["one", "two"]) == commits == {(foo, "foo"), (bar, "bar")}
    assert pairs(["one"]) == {(foo, "foo")}

    shutil.rmtree(table_path(lake, COMMIT_TOPIC_IDS))   # as a lake written before the table
    assert pairs(["one", "two"]) == commits
    run_increment(spark, lake, [str(three)], "three", progress=io.StringIO())
    rows = {tuple(r) for r in read_table(spark, lake, COMMIT_TOPIC_IDS).collect()}
    assert rows == {("three", baz, "baz"), ("three", None, None)}
    assert pairs(["one", "two", "three"]) == commits | {(baz, "baz")}
    assert _commit_pairs(spark, tmp_path / "empty", ["one"]) is None


def test_raw_non_commit_records_hold_each_snapshots_new_records_but_offset_commits_and_an_older_lake_reads_raw_records(
        spark, tmp_path):
    """Each run writes the ``raw_records`` rows of its new records that are not offset commits
    (membership records, transaction markers) and one row null but for its snapshot id. What a
    run reads of the held records' bytes (:func:`non_commit_rows`) is those rows of the earlier
    snapshots: from the table, or from ``raw_records`` for snapshots written before it; a run on
    such a lake writes what it would have written with the table."""
    from support.scenarios import Scenario

    from jobs.lake.delta import read_snapshot, table_path
    from jobs.lake.increments import RAW_NON_COMMIT_RECORDS
    from jobs.stages.increment import non_commit_rows
    from jobs.stages.increment_run import run_increment

    g = Scenario("g").consumer_join("A", ["foo"])
    g.offset_commit({"foo": {0: 10}})
    one = g.write(tmp_path / "one")
    g.txn_offset_commit(7, {"foo": {0: 11}})
    g.end_txn(7, "COMMIT")
    g.offset_commit({"foo": {0: 12}})
    two = g.write(tmp_path / "two")
    g.consumer_join("B", ["foo"]).compute_target({"A": {"foo": [0]}, "B": {"foo": [1]}})
    g.converge("A").converge("B").offset_commit({"foo": {0: 13}})
    three = g.write(tmp_path / "three")

    lake = tmp_path / "lake"
    for snap in (one, two):
        run_increment(spark, lake, [str(snap)], snap.name, progress=io.StringIO())

    def others(sid: str) -> list:
        """raw_records' rows of ``sid`` that are not offset commits, by their bytes, in order."""
        return sorted((tuple(r) for r in read_snapshot(spark, lake, RAW_RECORDS, sid).collect()
                       if r.is_control or r.key[:2] not in (b"\x00\x00", b"\x00\x01")),
                      key=lambda r: (r[1], r[2]))

    expected = {sid: others(sid) for sid in ("one", "two")}
    assert any(r[9] for r in expected["two"])   # the marker
    assert all(not r[9] for r in expected["one"]) and expected["one"]   # membership records
    for sid in ("one", "two"):
        rows = sorted((tuple(r) for r in read_snapshot(spark, lake, RAW_NON_COMMIT_RECORDS, sid)
                       .collect()), key=lambda r: (r[1] is not None, r[1], r[2]))
        assert rows == [(sid,) + (None,) * 18] + expected[sid]
    assert sorted((tuple(r) for r in non_commit_rows(spark, lake, ["one", "two"]).collect()),
                  key=lambda r: (r[0], r[1], r[2])) == expected["one"] + expected["two"]

    old = tmp_path / "old"   # the same lake, as written before the table
    shutil.copytree(lake, old)
    shutil.rmtree(table_path(old, RAW_NON_COMMIT_RECORDS))
    assert sorted((tuple(r) for r in non_commit_rows(spark, old, ["one", "two"]).collect()),
                  key=lambda r: (r[0], r[1], r[2])) == expected["one"] + expected["two"]
    for at in (lake, old):
        run_increment(spark, at, [str(three)], "three", progress=io.StringIO())
    for table in ("groups", "members", "member_assignments", "offsets", "fencing_findings",
                  "offset_commits", "epochs"):
        mine, theirs = (read_snapshot(spark, at, table, "three") for at in (lake, old))
        assert mine.count() and sorted(map(str, mine.collect())) == sorted(
            map(str, theirs.collect())), table

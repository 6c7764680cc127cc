"""The incremental lake against a real broker's log cleaner: six snapshots of one broker's
``__consumer_offsets`` taken while it compacts (the session's ``compaction_series``), run one
after the other into an incremental lake (``run_increment``) and, each alone, by the full
pipeline into a lake of full snapshots.

For every snapshot, its view of the incremental lake (``snapshot_rows``) is the full ingest's
``raw_records`` of it (``source_file`` and ``file_position`` aside: the incremental lake says
where a record was first read); ``record_removals`` lists exactly what the previous snapshot held
and this one does not; only the batches the lake did not hold are read; and ``raw_records`` holds
every record any snapshot held, once.
"""

from __future__ import annotations

import io

import pytest

from jobs.lake import RAW_RECORDS, read_table
from jobs.lake.increments import RECORD_REMOVALS, SNAPSHOTS
from jobs.lake.snapshot_views import snapshot_rows

pytestmark = pytest.mark.integration

SAME = ("partition", "offset", "timestamp", "timestamp_type", "batch_base_offset", "producer_id",
        "producer_epoch", "is_transactional", "is_control", "control_type", "coordinator_epoch",
        "magic", "compression", "crc_valid", "key", "value")


def _rows(frame, columns=SAME) -> list[tuple]:
    return sorted(tuple(r) for r in frame.select(*columns).collect())


def _held(spark, full, sid) -> set[tuple[int, int]]:
    return {(r[0], r[1]) for r in read_table(spark, full, RAW_RECORDS)
            .where(f"snapshot_id = '{sid}'").select("partition", "offset").collect()}


def test_each_snapshot_s_view_is_its_full_ingest(spark, run_lakes):
    incremental, full, ids, _ = run_lakes
    for sid in ids:
        expected = read_table(spark, full, RAW_RECORDS).where(f"snapshot_id = '{sid}'")
        assert _rows(snapshot_rows(spark, incremental, RAW_RECORDS, sid)) == _rows(expected), sid


def test_removals_are_what_the_previous_snapshot_held_and_this_one_does_not(spark, run_lakes):
    incremental, full, ids, reports = run_lakes
    removals = read_table(spark, incremental, RECORD_REMOVALS)
    for before, sid, report in zip(ids, ids[1:], reports[1:]):
        gone = _held(spark, full, before) - _held(spark, full, sid)
        assert gone, f"the cleaner removed nothing between {before} and {sid}"
        assert {(r[0], r[1]) for r in removals.where(f"snapshot_id = '{sid}'")
                .select("partition", "offset").collect()} == gone, sid
        assert report.ingest.removed_records == len(gone)


def test_only_what_the_lake_does_not_hold_is_read_and_every_record_is_kept_once(spark,
                                                                                 run_lakes):
    incremental, full, ids, reports = run_lakes
    for report in (r.ingest for r in reports[1:]):
        assert report.batches_skipped > 0 and report.bytes_read < report.bytes_total, report
    everything = read_table(spark, full, RAW_RECORDS).dropDuplicates(["partition", "offset"])
    kept = read_table(spark, incremental, RAW_RECORDS)
    assert kept.count() == kept.dropDuplicates(["partition", "offset"]).count()
    assert _rows(kept) == _rows(everything)
    first_seen = {}
    for sid in ids:
        for where in sorted(_held(spark, full, sid)):
            first_seen.setdefault(where, sid)
    assert {(r[0], r[1]): r[2] for r in kept.select("partition", "offset", "snapshot_id")
            .collect()} == first_seen
    listed = read_table(spark, incremental, SNAPSHOTS).orderBy("seq").select(
        "snapshot_id", "records", "new_records").collect()
    assert [(r[0], r[1]) for r in listed] == [(sid, len(_held(spark, full, sid))) for sid in ids]


@pytest.fixture(scope="module")
def run_lakes(spark, compaction_series, tmp_path_factory):
    """The series run into an incremental lake (run_increment) and, each snapshot alone, by the
    full pipeline into a lake of full snapshots."""
    from jobs.stages.increment_run import run_increment
    from jobs.stages.pipeline import run_pipeline

    root = tmp_path_factory.mktemp("incremental-run")
    incremental, full, reports = root / "incremental", root / "full", []
    for path in compaction_series.snapshots:
        reports.append(run_increment(spark, incremental, [str(path)], progress=io.StringIO()))
        assert run_pipeline(spark, full, [str(path)], progress=io.StringIO()).reconciled
    print("\n" + "\n\n".join(r.summary() for r in reports))
    return incremental, full, [p.name for p in compaction_series.snapshots], reports


STATE = ("groups", "members", "member_assignments", "target_assignments", "offsets")


def _content(frame) -> list[str]:
    return sorted(map(str, frame.drop("snapshot_id").collect()))


def test_every_group_s_state_as_of_each_snapshot_is_the_full_run_s(spark, run_lakes):
    from jobs.lake.snapshot_views import group_state

    incremental, full, ids, reports = run_lakes
    assert all(r.groups_replayed > 0 for r in reports)
    for sid in ids:
        for table in STATE:
            expected = read_table(spark, full, table).where(f"snapshot_id = '{sid}'")
            assert _content(group_state(spark, incremental, table, sid)) == _content(expected), \
                (sid, table)


def test_each_snapshot_s_fencing_findings_are_the_history_audit_through_it(spark, run_lakes):
    """The run's ``fencing_findings`` as of each snapshot (each group's at the snapshot that last
    replayed it) are what the history audit through the snapshot finds from every record the lake
    held."""
    from jobs.lake.snapshot_views import group_state
    from jobs.stages.audit import audit_history

    incremental, _, ids, _ = run_lakes
    for sid in ids:
        run = sorted((r.group_id, r.rule_id, r.log_partition, r.log_offset, r.verdict, r.message)
                     for r in group_state(spark, incremental, "fencing_findings", sid).collect())
        history = sorted((f["group_id"], f["rule_id"], f["log_partition"], f["log_offset"],
                          f["verdict"], f["message"])
                         for f in audit_history(spark, incremental, sid).findings)
        assert run == history, sid


def test_history_holds_the_row_of_every_record_any_snapshot_held(spark, run_lakes):
    from pyspark.sql import functions as F

    incremental, full, ids, _ = run_lakes
    for table in ("offset_commits", "epochs"):
        kept = read_table(spark, incremental, table)
        every = read_table(spark, full, table)
        positions = {(r[0], r[1]) for r in every.select("log_partition", "log_offset").collect()}
        assert {(r[0], r[1]) for r in kept.select("log_partition", "log_offset").collect()} \
            == positions, table
        # each record's row is written once, by the first snapshot that held it
        assert kept.groupBy("log_partition", "log_offset", *(
            ["epoch_kind", "member_id"] if table == "epochs" else [])).count() \
            .where(F.col("count") > 1).count() == 0, table


def test_the_lake_s_views_of_a_snapshot_read_the_incremental_lake_as_of_it(spark, run_lakes):
    """``register_lake`` (what sql, the report and the audit read) on the incremental lake gives
    the full run's per-group state, and every offset commit up to the snapshot."""
    from jobs.lake.views import register_lake

    incremental, full, ids, _ = run_lakes

    def positions(table: str) -> set[tuple[int, int]]:
        return {(r[0], r[1]) for r in spark.table(table).select("log_partition", "log_offset")
                .collect()}

    for sid in (ids[0], ids[-1]):
        register_lake(spark, full, sid)
        expected = {t: _content(spark.table(t)) for t in STATE}
        held = positions("offset_commits")
        register_lake(spark, incremental, sid)
        for table in STATE:
            assert _content(spark.table(table)) == expected[table], (sid, table)
        assert held <= positions("offset_commits"), sid
        assert {r[0] for r in spark.table("offset_commits").select("snapshot_id")
                .distinct().collect()} == {sid}


def _doc_queries() -> list[str]:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "lake.md").read_text()
    section = doc.split("## Across snapshots", 1)[1].split("\n## ", 1)[0]
    return [block.split("```", 1)[0] for block in section.split("```sql\n")[1:]]


def test_the_queries_of_docs_lake_md_answer_as_the_views_do(spark, run_lakes):
    from jobs.lake.snapshot_views import group_state
    from jobs.lake.views import register_lake

    incremental, _, ids, _ = run_lakes
    at_group, member_epochs, held = _doc_queries()
    register_lake(spark, incremental)
    sid = ids[2]
    state = group_state(spark, incremental, "groups", sid)
    group = sorted(r[0] for r in state.select("group_id").collect())[0]
    answer = spark.sql(at_group.replace("'S'", f"'{sid}'").replace("'G'", f"'{group}'"))
    assert _content(answer) == _content(state.where(f"group_id = '{group}'"))
    epochs = read_table(spark, incremental, "epochs")
    members = sorted(r[0] for r in epochs.select("member_id").collect() if r[0])
    # The series' consumer members join and leave within a step, their epochs compacted away
    # before a snapshot sees them: then the query asks for a group's every epoch instead.
    if members:
        who, query = f"member_id = '{members[0]}'", member_epochs.replace("'M'", f"'{members[0]}'")
    else:
        group = sorted(r[0] for r in epochs.select("group_id").collect())[0]
        who = f"group_id = '{group}'"
        query = member_epochs.replace("e.member_id = 'M'", f"e.{who}")
    rows = spark.sql(query).collect()
    assert sorted((r["log_partition"], r["log_offset"], r["epoch_kind"]) for r in rows) == sorted(
        (r[0], r[1], r[2]) for r in epochs.where(who)
        .select("log_partition", "log_offset", "epoch_kind").collect())
    assert rows and all(r["first_seen_in"] in ids for r in rows)
    records = spark.sql(held.replace("'S'", f"'{sid}'"))
    assert _rows(records) == _rows(snapshot_rows(spark, incremental, RAW_RECORDS, sid))


def test_vacuum_keeps_what_the_kept_snapshots_read_and_all_history(spark, run_lakes, tmp_path,
                                                                     capsys):
    import shutil
    from urllib.parse import unquote

    from jobs.cli import main as offsetlake
    from jobs.lake.delta import log_state
    from jobs.lake.snapshot_views import group_state

    incremental, full, ids, _ = run_lakes
    lake = tmp_path / "lake"
    shutil.copytree(incremental, lake)
    every = ("raw_records", "records", "record_removals", "batches", *HISTORY)
    before = {t: _content(read_table(spark, lake, t)) for t in every}
    folds = {(r.group_id, r.snapshot_id) for r in read_table(spark, lake, "fencing_folds")
             .select("group_id", "snapshot_id").collect()}
    newest = {g: max((s for h, s in folds if h == g), key=ids.index) for g, _ in folds}
    assert offsetlake(["vacuum", "--lake", str(lake), "--keep", "2", "--retain-hours", "0"]) == 0
    out = capsys.readouterr().out
    assert f"kept 2 snapshot(s) ({ids[-2]}, {ids[-1]}); 4 older one(s) vacuumed" in out
    assert "groups " in out.split("rows deleted:")[1]
    for sid in ids[-2:]:
        for table in STATE:
            expected = read_table(spark, full, table).where(f"snapshot_id = '{sid}'")
            assert _content(group_state(spark, lake, table, sid)) == _content(expected), \
                (sid, table)
    with pytest.raises(KeyError, match="was vacuumed"):
        group_state(spark, lake, "groups", ids[0])
    assert {t: _content(read_table(spark, lake, t)) for t in every} == before
    # each group's newest fold stays (the next run resumes it), and the kept snapshots' folds
    assert {(r.group_id, r.snapshot_id) for r in read_table(spark, lake, "fencing_folds")
            .select("group_id", "snapshot_id").collect()} == {
        (g, s) for g, s in folds if s in ids[-2:] or s == newest[g]}
    # Delta's VACUUM (retaining 0 hours): every data file left is one the table still reads
    for table in ("groups", "offsets", "replayed_groups"):
        on_disk = {str(f.relative_to(lake / table)) for f in (lake / table).rglob("*.parquet")
                   if "_delta_log" not in f.parts}
        assert on_disk == {unquote(f) for f in log_state(lake, table).files}, table
    assert offsetlake(["vacuum", "--lake", str(full), "--keep", "2"]) != 0
    assert "is not an incremental lake" in capsys.readouterr().err


HISTORY = ("offset_commits", "epochs", "transactions", "violations")


def test_each_snapshot_s_compaction_ranges_from_gaps_and_removals_are_its_scan_s(spark,
                                                                                run_lakes):
    """The fencing audit's snapshot-wide facts, as the incremental run finds them without a scan
    of the snapshot: its ranges of missing offsets (from the lake's gaps and removals), its
    newest timestamp and its regime equal what the full run of each snapshot finds."""
    from pyspark.sql import functions as F

    from jobs.lake.increments import GAPS, SNAPSHOT_PARTITIONS
    from jobs.stages.audit import compacted_ranges
    from jobs.stages.snapshot_facts import Gaps, compaction_ranges

    incremental, full, ids, _ = run_lakes
    for at, sid in enumerate(ids):
        parts = read_table(spark, incremental, SNAPSHOT_PARTITIONS).where(
            F.col("snapshot_id") == sid).collect()
        gaps = Gaps(rows=[(r[0], r[1], r[2]) for r in read_table(spark, incremental, GAPS)
                          .where(F.col("snapshot_id") == sid)
                          .select("partition", "start_offset", "end_offset").collect()],
                    last_held={r["partition"]: r["last_held_offset"] for r in parts},
                    late={r["partition"]: r["late_records"] for r in parts})
        removed = read_table(spark, incremental, RECORD_REMOVALS).where(F.col("snapshot_id") == sid)
        found = compaction_ranges(spark, incremental, ids[:at], gaps, removed)
        expected = compacted_ranges(read_table(spark, full, RAW_RECORDS)
                                    .where(F.col("snapshot_id") == sid))
        assert found == expected, sid
        if at:
            assert any(found.values()), f"the cleaner left no gap in {sid}"
        newest = (read_table(spark, incremental, SNAPSHOTS).where(F.col("snapshot_id") == sid)
                  .select("newest_timestamp").first()[0])
        assert newest == (read_table(spark, full, RAW_RECORDS).where(F.col("snapshot_id") == sid)
                          .agg(F.max("timestamp")).first()[0]), sid
        regimes = [read_table(spark, lake, "fencing_audits").where(F.col("snapshot_id") == sid)
                   .select("regime").first()[0] for lake in (incremental, full)]
        assert regimes[0] == regimes[1], sid

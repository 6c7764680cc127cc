"""The incremental lake against a real broker's log cleaner: six snapshots of one broker's
``__consumer_offsets`` taken while it compacts (the session's ``compaction_series``), ingested one
after the other into an incremental lake and, each alone, into a lake of full snapshots.

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
from jobs.stages.increment import ingest_increment
from jobs.stages.ingest import ingest

pytestmark = pytest.mark.integration

SAME = ("partition", "offset", "timestamp", "timestamp_type", "batch_base_offset", "producer_id",
        "producer_epoch", "is_transactional", "is_control", "control_type", "coordinator_epoch",
        "magic", "compression", "crc_valid", "key", "value")


@pytest.fixture(scope="module")
def lakes(spark, compaction_series, tmp_path_factory):
    root = tmp_path_factory.mktemp("incremental-lake")
    incremental, full, reports = root / "incremental", root / "full", []
    for path in compaction_series.snapshots:
        reports.append(ingest_increment(spark, incremental, [str(path)], progress=io.StringIO()))
        ingest(spark, full, [str(path)], progress=io.StringIO())
    print("\n" + "\n".join(r.summary() for r in reports))
    return incremental, full, [p.name for p in compaction_series.snapshots], reports


def _rows(frame, columns=SAME) -> list[tuple]:
    return sorted(tuple(r) for r in frame.select(*columns).collect())


def _held(spark, full, sid) -> set[tuple[int, int]]:
    return {(r[0], r[1]) for r in read_table(spark, full, RAW_RECORDS)
            .where(f"snapshot_id = '{sid}'").select("partition", "offset").collect()}


def test_each_snapshot_s_view_is_its_full_ingest(spark, lakes):
    incremental, full, ids, _ = lakes
    for sid in ids:
        expected = read_table(spark, full, RAW_RECORDS).where(f"snapshot_id = '{sid}'")
        assert _rows(snapshot_rows(spark, incremental, RAW_RECORDS, sid)) == _rows(expected), sid


def test_removals_are_what_the_previous_snapshot_held_and_this_one_does_not(spark, lakes):
    incremental, full, ids, reports = lakes
    removals = read_table(spark, incremental, RECORD_REMOVALS)
    for before, sid, report in zip(ids, ids[1:], reports[1:]):
        gone = _held(spark, full, before) - _held(spark, full, sid)
        assert gone, f"the cleaner removed nothing between {before} and {sid}"
        assert {(r[0], r[1]) for r in removals.where(f"snapshot_id = '{sid}'")
                .select("partition", "offset").collect()} == gone, sid
        assert report.removed_records == len(gone)


def test_only_what_the_lake_does_not_hold_is_read_and_every_record_is_kept_once(spark, lakes):
    incremental, full, ids, reports = lakes
    for report in reports[1:]:
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
    member = sorted(r[0] for r in epochs.select("member_id").collect() if r[0])[0]
    rows = spark.sql(member_epochs.replace("'M'", f"'{member}'")).collect()
    assert sorted((r["log_partition"], r["log_offset"], r["epoch_kind"]) for r in rows) == sorted(
        (r[0], r[1], r[2]) for r in epochs.where(f"member_id = '{member}'")
        .select("log_partition", "log_offset", "epoch_kind").collect())
    assert rows and all(r["first_seen_in"] in ids for r in rows)
    records = spark.sql(held.replace("'S'", f"'{sid}'"))
    assert _rows(records) == _rows(snapshot_rows(spark, incremental, RAW_RECORDS, sid))

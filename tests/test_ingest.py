"""Segment snapshots into raw_records and quarantine: content, reconciliation, idempotence."""

from __future__ import annotations

import os
import struct

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F

from decoders.log.writer import encode_batch
from jobs.lake.bronze import RAW_RECORDS_SCHEMA
from jobs.stages.ingest import ingest, plan_tasks
from jobs.lake import read_table
from jobs.stages.segment_rows import (ACCOUNTING, QUARANTINE, RECORD, RangeTask, ReadLimits,
                                     read_range, read_tasks)
from support.snapshot_factory import (offset_commit_key, offset_commit_value, transactional_pair,
                                    write_offset_commits)

T0 = 1_760_000_000_000
UNKNOWN_KEY = struct.pack(">h", 0x7FFF) + b"\x00\x01g"


def _corrupt_crc(batch: bytes) -> bytes:
    data = bytearray(batch)
    data[-1] ^= 0xFF  # a record byte, covered by the CRC
    return bytes(data)


@pytest.fixture()
def small_snapshot(tmp_path):
    """Partition 0: plain commits, a committed and an aborted transaction, an unknown record
    type, a batch with a bad CRC and a truncated tail. Partition 1: gzip commits and a tombstone."""
    p0 = tmp_path / "snap" / "__consumer_offsets-0"
    p1 = tmp_path / "snap" / "__consumer_offsets-1"
    p0.mkdir(parents=True)
    p1.mkdir(parents=True)
    plain = encode_batch([(offset_commit_key("g", "orders", 0), offset_commit_value(10, T0), T0),
                          (offset_commit_key("g", "orders", 1), offset_commit_value(11, T0), T0 + 1)],
                         base_offset=0)
    unknown = encode_batch([(UNKNOWN_KEY, b"\x00\x00", T0 + 8)], base_offset=8)
    bad = _corrupt_crc(encode_batch([(offset_commit_key("g", "orders", 2),
                                      offset_commit_value(12, T0), T0 + 9)], base_offset=9))
    tail = encode_batch([(offset_commit_key("g", "orders", 3), offset_commit_value(13, T0), T0)],
                        base_offset=10)[:30]
    body = (plain + transactional_pair("g", 2, 5000, commit=True, timestamp=T0 + 2)
            + transactional_pair("g", 5, 5001, commit=False, timestamp=T0 + 5) + unknown)
    (p0 / "00000000000000000000.log").write_bytes(body + bad + tail)
    (p0 / "00000000000000000000.index").write_bytes(b"\x00" * 64)
    gz = encode_batch([(offset_commit_key("h", "t", i), offset_commit_value(i, T0), T0) for i in range(3)]
                      + [(offset_commit_key("h", "t", 9), None, T0)], base_offset=0, compression="gzip")
    (p1 / "00000000000000000000.log").write_bytes(gz)
    return tmp_path / "snap", {"bad_position": len(body), "tail_position": len(body) + len(bad),
                               "p0_size": len(body) + len(bad) + len(tail), "p1_size": len(gz)}


def test_read_range_keeps_every_record_and_quarantines_the_rest(small_snapshot):
    root, info = small_snapshot
    path = str(root / "__consumer_offsets-0" / "00000000000000000000.log")
    rows = pa.Table.from_batches(list(read_range("s1", RangeTask(path, 0, 0, info["p0_size"])))).to_pylist()
    records = [r for r in rows if r["row_kind"] == RECORD]
    assert [r["offset"] for r in records] == [0, 1, 2, 3, 4, 5, 6, 7, 8]
    markers = [(r["offset"], r["control_type"], r["coordinator_epoch"], r["producer_id"])
               for r in records if r["is_control"]]
    assert markers == [(4, "COMMIT", 11, 5000), (7, "ABORT", 11, 5001)]
    assert records[8]["key"] == UNKNOWN_KEY
    assert records[0]["value"] == offset_commit_value(10, T0)
    bad = [(r["reason"], r["file_position"], r["offset"]) for r in rows if r["row_kind"] == QUARANTINE]
    assert bad == [("bad_crc", info["bad_position"], 9), ("truncated_tail", info["tail_position"], None)]
    accounting = [r["task_bytes"] for r in rows if r["row_kind"] == ACCOUNTING]
    assert accounting == [info["p0_size"]]


def test_ranges_split_files_and_cover_every_byte(small_snapshot):
    root, info = small_snapshot
    tasks, files, total = plan_tasks([str(root)], range_bytes=100)
    assert (files, total) == (2, info["p0_size"] + info["p1_size"])
    by_file: dict[str, list[tuple[int, int]]] = {}
    for t in tasks:
        by_file.setdefault(t.source_file, []).append((t.start, t.end))
    for spans in by_file.values():
        assert spans[0][0] == 0
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    offsets = []
    for t in tasks:
        offsets += [(t.partition, r["offset"]) for r in
                    pa.Table.from_batches(list(read_range("s", t))).to_pylist() if r["row_kind"] == RECORD]
    assert sorted(offsets) == [(0, o) for o in range(9)] + [(1, o) for o in range(4)]


@pytest.mark.parametrize("where", ["driver", "executors"])
def test_ingest_writes_content_quarantine_and_is_idempotent(spark, small_snapshot, tmp_path, where):
    root, info = small_snapshot
    lake = tmp_path / "lake"
    limits = ReadLimits(local_bytes=0) if where == "executors" else None   # 0: never the driver
    report = ingest(spark, lake, [str(root)], "snap-1", range_bytes=128, limits=limits)
    assert report.reconciled, report.summary()
    assert (report.records_read, report.rows_written, report.rows_quarantined) == (13, 13, 2)
    cols = ["partition", "offset", "is_control", "control_type", "producer_id", "is_transactional",
            "compression", "magic", "crc_valid"]
    actual = read_table(spark, lake, "raw_records").select(*cols)
    expected_rows = (
        [(0, o, False, None, -1, False, "none", 2, True) for o in (0, 1, 8)]
        + [(0, o, False, None, 5000, True, "none", 2, True) for o in (2, 3)]
        + [(0, 4, True, "COMMIT", 5000, True, "none", 2, True)]
        + [(0, o, False, None, 5001, True, "none", 2, True) for o in (5, 6)]
        + [(0, 7, True, "ABORT", 5001, True, "none", 2, True)]
        + [(1, o, False, None, -1, False, "gzip", 2, True) for o in range(4)])
    expected = spark.createDataFrame(expected_rows, actual.schema)
    assert_df_equality(actual, expected, ignore_row_order=True, ignore_nullable=True)
    tombstones = read_table(spark, lake, "raw_records").where("value is null").select("partition", "offset")
    assert [tuple(r) for r in tombstones.collect()] == [(1, 3)]
    quarantine = read_table(spark, lake, "quarantine").select("reason", "partition", "file_position", "length")
    assert sorted(tuple(r) for r in quarantine.collect()) == sorted([
        ("bad_crc", 0, info["bad_position"], info["tail_position"] - info["bad_position"]),
        ("truncated_tail", 0, info["tail_position"], 30)])
    before = sorted(map(tuple, read_table(spark, lake, "raw_records").collect()))
    again = ingest(spark, lake, [str(root)], "snap-1", range_bytes=1 << 20, limits=limits)
    assert again.reconciled and again.rows_written == 13 and again.rows_quarantined == 2
    assert sorted(map(tuple, read_table(spark, lake, "raw_records").collect())) == before


def test_two_snapshots_keep_their_own_rows(spark, small_snapshot, tmp_path):
    root, _ = small_snapshot
    lake = tmp_path / "lake"
    ingest(spark, lake, [str(root / "__consumer_offsets-1")], "a")
    ingest(spark, lake, [str(root)], "b")
    counts = {r["snapshot_id"]: r["count"] for r in
              read_table(spark, lake, "raw_records").groupBy("snapshot_id").count().collect()}
    assert counts == {"a": 4, "b": 13}


def test_capture_directory_is_ingested_as_is(spark, tmp_path):
    cap = tmp_path / "capture"
    (cap / "raw_records").mkdir(parents=True)
    rows = [{"snapshot_id": None, "partition": 2, "offset": 40 + i, "timestamp": T0, "timestamp_type":
             "CreateTime", "key": offset_commit_key("g", "t", i), "value": offset_commit_value(i, T0),
             "is_control": False, "source_file": "kafka://127.0.0.1:9092/__consumer_offsets-2"}
            for i in range(3)]
    pq.write_table(pa.Table.from_pylist(rows, schema=RAW_RECORDS_SCHEMA),
                   cap / "raw_records" / "partition-0002.parquet")
    (cap / "manifest.json").write_text('{"snapshot_id": "cap-1"}')
    lake = tmp_path / "lake"
    report = ingest(spark, lake, [str(cap)])
    assert report.snapshot_id == "cap-1" and report.reconciled
    got = read_table(spark, lake, "raw_records").select("snapshot_id", "partition", "offset").collect()
    assert sorted(tuple(r) for r in got) == [("cap-1", 2, 40), ("cap-1", 2, 41), ("cap-1", 2, 42)]


@pytest.mark.slow
def test_million_record_snapshot_reconciles_and_reruns_unchanged(spark, generated_code, tmp_path):
    n = int(os.environ.get("OFFSETLAKE_INGEST_N", "1000000"))
    snap = write_offset_commits(tmp_path / "big", n, partitions=3)
    lake = tmp_path / "lake"
    report = ingest(spark, lake, [str(snap.root)], "big", range_bytes=2 << 20)
    assert report.reconciled, report.summary()
    assert report.rows_written == n and report.rows_quarantined == 0 and report.ranges > report.files
    table = read_table(spark, lake, "raw_records")
    stats = {r["partition"]: (r["n"], r["lo"], r["hi"]) for r in table.groupBy("partition").agg(
        F.count("offset").alias("n"), F.min("offset").alias("lo"), F.max("offset").alias("hi")).collect()}
    assert stats == {p: (c, 0, snap.last_offset[p]) for p, c in snap.per_partition.items()}
    version_rows = table.count()
    again = ingest(spark, lake, [str(snap.root)], "big", range_bytes=32 << 20)
    assert again.reconciled and read_table(spark, lake, "raw_records").count() == version_rows == n


def test_an_empty_segment_is_a_file_without_ranges(small_snapshot, tmp_path):
    root, info = small_snapshot
    empty = root / "__consumer_offsets-2" / "00000000000000000000.log"
    empty.parent.mkdir()
    empty.write_bytes(b"")
    tasks, files, total = plan_tasks([str(root)], range_bytes=100)
    assert (files, total) == (3, info["p0_size"] + info["p1_size"])
    assert str(empty) not in {t.source_file for t in tasks}


def test_read_back_batches_rows_in_a_session_of_its_own(spark, tmp_path):
    """Staged rows read back in vectorized batches: same rows, Spark plans a columnar scan, and
    the caller's session keeps its settings (row by row, from conf/offsetlake.yaml)."""
    from jobs.stages.ingest import Staged, read_back

    path = str(tmp_path / "rows")
    pq.write_table(pa.table({"offset": list(range(500)), "value": [b"v%d" % i for i in range(500)]}),
                   tmp_path / "rows.parquet")
    os.makedirs(path)
    os.replace(tmp_path / "rows.parquet", os.path.join(path, "part-0.parquet"))
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "3")  # a runtime setting the caller made
    try:
        staged = Staged("s", "segments", 1, 1, 0, 0, 500, 0, 0, rows=spark.read.parquet(path),
                        columnar_rows=128, path=path)
        batched = read_back(spark, staged).rows
        session = batched.sparkSession
        assert session is not spark
        assert session.conf.get("spark.sql.parquet.enableVectorizedReader") == "true"
        assert session.conf.get("spark.sql.parquet.columnarReaderBatchSize") == "128"
        assert session.conf.get("spark.sql.shuffle.partitions") == "3"
        assert spark.conf.get("spark.sql.parquet.enableVectorizedReader") == "false"
        assert "ColumnarToRow" in batched._jdf.queryExecution().executedPlan().toString()
        assert "ColumnarToRow" not in staged.rows._jdf.queryExecution().executedPlan().toString()
        assert_df_equality(batched, staged.rows, ignore_row_order=True)
        row_by_row = Staged("s", "segments", 1, 1, 0, 0, 500, 0, 0, rows=staged.rows, path=path)
        assert read_back(spark, row_by_row) is row_by_row      # columnar_rows None: as it is
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)


def _staging_options():
    from jobs.runtime.config import load_config
    from jobs.stages.ingest import parquet_options

    return parquet_options(load_config().spark.conf)


def test_each_range_stages_its_rows_in_a_file_of_its_own(small_snapshot, tmp_path):
    """An executor writes a range's decoded rows itself: the file holds exactly the rows
    read_tasks and decode_rows give, the returned totals are those of an aggregate over all the
    staged rows, and writing a range again replaces its file whole."""
    from jobs.stages.decode import decode_rows
    from jobs.stages.ingest import _arrow_totals, merge_totals, staged_schema, write_range

    root, _ = small_snapshot
    tasks, _, _ = plan_tasks([str(root)], range_bytes=128)
    assert len(tasks) > 3
    target, limits, options = tmp_path / "rows", ReadLimits(), _staging_options()
    target.mkdir()
    parts, tables = [], []
    for i, task in enumerate(tasks):
        parts += write_range(target, i, "s", task, limits, True, options)
        expected = pa.Table.from_batches([decode_rows(b) for b in read_tasks("s", [task], limits)],
                                         staged_schema(True))
        staged = pq.read_table(target / f"part-{i:05d}.parquet")
        assert staged.schema.equals(staged_schema(True)) and staged.equals(expected)
        tables.append(expected)
    assert sorted(p.name for p in target.iterdir()) == [f"part-{i:05d}.parquet" for i in range(len(tasks))]
    whole = pa.concat_tables(tables)
    key = ("row_kind", "is_data", "failed")
    assert sorted(merge_totals(parts, True), key=lambda r: [str(r[k]) for k in key]) == \
        sorted(_arrow_totals(whole, True), key=lambda r: [str(r[k]) for k in key])
    assert sum(r["n"] for r in parts if r["row_kind"] == RECORD) == 13
    again = write_range(target, 0, "s", tasks[1], limits, True, options)   # another range, same index
    assert pq.read_table(target / "part-00000.parquet").equals(tables[1])
    assert merge_totals(again, True) == merge_totals(write_range(target, 9, "s", tasks[1], limits,
                                                                 True, options), True)
    assert len(list(target.iterdir())) == len(tasks) + 1


def test_staged_files_skip_statistics_and_dictionaries_as_spark_is_told(small_snapshot, tmp_path):
    """conf/offsetlake.yaml keeps Parquet statistics off the raw byte columns and dictionaries off
    record values (a huge record would be copied whole into them): the files executors write
    themselves honour the same settings and Spark's codec."""
    from jobs.stages.ingest import write_range

    root, _ = small_snapshot
    tasks, _, _ = plan_tasks([str(root)], range_bytes=1 << 20)
    options = _staging_options()
    assert {"key", "value", "raw", "value_json"} <= options["no_statistics"]
    assert {"value", "value_json"} <= options["no_dictionary"]
    (tmp_path / "rows").mkdir()
    write_range(tmp_path / "rows", 0, "s", tasks[0], ReadLimits(), True, options)
    meta = pq.ParquetFile(tmp_path / "rows" / "part-00000.parquet").metadata.row_group(0)
    chunks = {meta.column(c).path_in_schema: meta.column(c) for c in range(meta.num_columns)}
    for name in ("key", "value", "raw", "value_json"):
        assert not chunks[name].is_stats_set, name
    assert chunks["offset"].is_stats_set and chunks["offset"].statistics.min == 0
    assert not chunks["value"].has_dictionary_page and chunks["group_id"].has_dictionary_page
    assert {chunks[c].compression for c in chunks} == {"SNAPPY"}


def test_a_range_that_fails_midway_leaves_no_staged_file(small_snapshot, tmp_path, monkeypatch):
    """A task failing while it writes leaves nothing (a killed one only its hidden file, which
    Spark does not read): the staged rows never hold half a range."""
    import jobs.stages.ingest as ingest_module

    root, _ = small_snapshot
    tasks, _, _ = plan_tasks([str(root)], range_bytes=1 << 20)

    def dies_after_one_batch(snapshot_id, chosen, limits):
        yield next(iter(read_tasks(snapshot_id, chosen, limits)))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ingest_module, "read_tasks", dies_after_one_batch)
    target = tmp_path / "rows"
    target.mkdir()
    with pytest.raises(OSError, match="No space left"):
        ingest_module.write_range(target, 0, "s", tasks[0], ReadLimits(), True, _staging_options())
    assert list(target.iterdir()) == []


def test_merged_totals_add_counts_and_keep_nulls_as_an_aggregate_does():
    from jobs.stages.ingest import merge_totals

    def part(kind, n, size, largest):
        return {"row_kind": kind, "is_data": False, "n": n, "bytes": size, "recovered": None,
                "largest": largest}

    merged = merge_totals([part(ACCOUNTING, 1, 10, None), part(ACCOUNTING, 2, None, 7),
                           part(QUARANTINE, 1, None, None), part(ACCOUNTING, 1, 5, 3)], False)
    assert sorted(merged, key=lambda r: r["row_kind"]) == [
        {"row_kind": ACCOUNTING, "is_data": False, "n": 4, "bytes": 15, "recovered": None,
         "largest": 7},
        {"row_kind": QUARANTINE, "is_data": False, "n": 1, "bytes": None, "recovered": None,
         "largest": None}]

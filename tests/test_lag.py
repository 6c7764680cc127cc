"""The ``lag`` table: a capture's committed offsets against the log offsets the capture read.

The capture here is written by the test: ``raw_records`` Parquet of offset commits packed by hand
(:mod:`support.snapshot_factory`), the capture's own ``log_offsets.parquet`` writer and a
manifest, then ``offsetlake run``'s pipeline. A real broker checks the same against
``kafka-consumer-groups --describe`` in tests/integration/test_lag_broker.py.
"""

from __future__ import annotations

import io
import json
import struct

import pyarrow as pa
import pyarrow.parquet as pq
from chispa import assert_df_equality
from kafka import TopicPartition

from jobs.lake import read_snapshot
from jobs.lake.bronze import CAPTURE_RECORDS_DIR, RAW_RECORDS_SCHEMA
from jobs.lake.tables import LAG, TABLES
from jobs.snapshots.capture import (LOG_OFFSETS_FILE, LOG_OFFSETS_SCHEMA, LogOffsets, Manifest,
                                    _offset_commit_topic)
from jobs.stages.pipeline import run_pipeline
from support.snapshot_factory import offset_commit_key, offset_commit_value

T0 = 1_760_000_000_000
READ_AT = T0 + 5_000

# (group, topic, partition, committed offset or None for a tombstone), in log order.
COMMITS = [
    ("g1", "orders", 0, 5), ("g1", "orders", 0, 8),        # the later commit counts
    ("g1", "orders", 1, 1),                                # below the log start (4)
    ("g1", "orders", 2, 3), ("g1", "orders", 2, None),     # deleted: no row
    ("g2", "orders", 0, 10),                               # at the end: lag 0
    ("g2", "orders", 1, 4),                                # at the log start: not below it
    ("g2", "payments", 0, 7),                              # past the end: negative lag
    ("g3", "orders", 0, -1),                               # Kafka's "no offset": no lag
    ("g3", "gone", 0, 3),                                  # a topic the cluster did not list
]

# Log offsets the capture read: (start, end) per partition; "unrelated" no commit names.
STARTS_ENDS = {("orders", 0): (2, 10), ("orders", 1): (4, 9), ("orders", 2): (0, 6),
               ("orders", 3): (0, 1), ("payments", 0): (0, 5), ("unrelated", 0): (0, 99)}

EXPECTED_LAG = [  # snapshot, group, topic, partition, committed, start, end, lag, read_at, below
    ("cap-1", "g1", "orders", 0, 8, 2, 10, 2, READ_AT, False),
    ("cap-1", "g1", "orders", 1, 1, 4, 9, 8, READ_AT, True),
    ("cap-1", "g2", "orders", 0, 10, 2, 10, 0, READ_AT, False),
    ("cap-1", "g2", "orders", 1, 4, 4, 9, 5, READ_AT, False),
    ("cap-1", "g2", "payments", 0, 7, 0, 5, -2, READ_AT, False),
    ("cap-1", "g3", "orders", 0, -1, 2, 10, None, READ_AT, False),
    ("cap-1", "g3", "gone", 0, 3, None, None, None, None, None),
]


def write_capture(root, snapshot_id: str, with_log_offsets: bool):
    """A capture directory as ``offsetlake capture`` leaves it (one __consumer_offsets partition);
    without log offsets it is a capture made before them (manifest without ``log_offsets``)."""
    rows = [{"partition": 0, "offset": i, "timestamp": T0 + i, "timestamp_type": "CreateTime",
             "key": offset_commit_key(group, topic, partition),
             "value": None if offset is None else offset_commit_value(offset, T0 + i),
             "is_control": False, "crc_valid": True,
             "source_file": "kafka://127.0.0.1:9092/__consumer_offsets-0"}
            for i, (group, topic, partition, offset) in enumerate(COMMITS)]
    (root / CAPTURE_RECORDS_DIR).mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=RAW_RECORDS_SCHEMA),
                   root / CAPTURE_RECORDS_DIR / "partition-0000.parquet")
    manifest = Manifest(snapshot_id, "cluster", "127.0.0.1:9092", "__consumer_offsets",
                        "2025-10-09T08:53:20.000Z", "2025-10-09T08:53:25.000Z", "read_committed",
                        "3.0.12", RAW_RECORDS_SCHEMA.names,
                        log_offsets=LOG_OFFSETS_FILE if with_log_offsets else None)
    if with_log_offsets:
        tps = {TopicPartition(t, p): se for (t, p), se in STARTS_ENDS.items()}
        LogOffsets({tp: s for tp, (s, _) in tps.items()}, {tp: e for tp, (_, e) in tps.items()},
                   READ_AT).write(root / LOG_OFFSETS_FILE, {t for _, t, _, _ in COMMITS})
    fields = json.loads(manifest.to_json())
    if not with_log_offsets:  # a manifest written before the field existed
        del fields["log_offsets"]
    (root / "manifest.json").write_text(json.dumps(fields))
    return root


def test_the_capture_keeps_the_log_offsets_of_the_topics_commits_name(tmp_path):
    root = write_capture(tmp_path / "cap", "cap-1", with_log_offsets=True)

    table = pq.read_table(root / LOG_OFFSETS_FILE)
    assert table.schema == LOG_OFFSETS_SCHEMA
    assert table.to_pylist() == [
        {"topic": t, "partition": p, "log_start_offset": s, "log_end_offset": e, "read_at": READ_AT}
        for (t, p), (s, e) in sorted(STARTS_ENDS.items()) if t != "unrelated"]
    assert Manifest.read(root / "manifest.json").log_offsets == LOG_OFFSETS_FILE


def test_offset_commit_topic_reads_offset_commit_keys_only():
    group_metadata_key = struct.pack(">h", 2) + struct.pack(">h", 2) + b"g1"
    legacy_key = b"\x00\x00" + offset_commit_key("g", "legacy-topic", 3)[2:]

    assert _offset_commit_topic(offset_commit_key("g", "orders", 7)) == "orders"
    assert _offset_commit_topic(legacy_key) == "legacy-topic"
    assert _offset_commit_topic(group_metadata_key) is None
    assert _offset_commit_topic(offset_commit_key("g", "orders", 7)[:-2]) is None   # truncated
    assert _offset_commit_topic(None) is None


def test_lag_rows_of_a_capture(spark, tmp_path):
    lake = tmp_path / "lake"
    capture = write_capture(tmp_path / "cap", "cap-1", with_log_offsets=True)
    expected = spark.createDataFrame(EXPECTED_LAG, TABLES[LAG].ddl())

    first = run_pipeline(spark, lake, [str(capture)], progress=io.StringIO())
    lag = read_snapshot(spark, lake, LAG, "cap-1")

    assert first.table_rows[LAG] == len(EXPECTED_LAG)
    assert [(f.name, f.dataType.simpleString()) for f in lag.schema] == TABLES[LAG].pairs()
    assert_df_equality(lag, expected, ignore_row_order=True, ignore_nullable=True)

    again = run_pipeline(spark, lake, [str(capture)], progress=io.StringIO())
    assert again.table_rows[LAG] == len(EXPECTED_LAG)
    assert_df_equality(read_snapshot(spark, lake, LAG, "cap-1"), expected, ignore_row_order=True,
                       ignore_nullable=True)


def test_a_capture_without_log_offsets_has_no_lag(spark, tmp_path):
    lake = tmp_path / "lake"
    new = write_capture(tmp_path / "new", "cap-1", with_log_offsets=True)
    run_pipeline(spark, lake, [str(new)], progress=io.StringIO())
    old = write_capture(tmp_path / "old", "cap-0", with_log_offsets=False)

    run_pipeline(spark, lake, [str(old)], progress=io.StringIO())

    assert read_snapshot(spark, lake, LAG, "cap-0").collect() == []
    assert_df_equality(read_snapshot(spark, lake, LAG, "cap-1"),
                       spark.createDataFrame(EXPECTED_LAG, TABLES[LAG].ddl()),
                       ignore_row_order=True, ignore_nullable=True)
    committed = {(r.group_id, r.topic, r.partition, r.committed_offset)
                 for r in read_snapshot(spark, lake, "offsets", "cap-0").collect()}
    assert committed == {row[1:5] for row in EXPECTED_LAG}   # the commits are there, the lag not

    # The same snapshot id run again from a capture without log offsets: its lag rows go.
    run_pipeline(spark, lake, [str(old)], "cap-1", progress=io.StringIO())
    assert read_snapshot(spark, lake, LAG, "cap-1").collect() == []

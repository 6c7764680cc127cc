"""The ingest reader bounds memory by bytes: rows reach Spark in Arrow batches of at most
``arrow_batch_bytes`` (a single larger row alone), and a batch whose records decompress past
``max_decompressed_bytes`` is one quarantined unit with reason ``batch_too_large``."""

from __future__ import annotations

import pyarrow as pa

from decoders.log.writer import encode_batch, write_segment
from jobs.runtime.config import load_config
from jobs.stages.ingest import columnar_batch_rows
from jobs.stages.segment_rows import ACCOUNTING, QUARANTINE, RECORD, RangeTask, ReadLimits, read_range

T0 = 1_700_000_000_000
KIB = 1024


def _segment(tmp_path, sizes, compression="zstd"):
    entries = [encode_batch([(b"key-%d" % i, bytes([i]) * size, T0)], base_offset=i,
                            compression=compression) for i, size in enumerate(sizes)]
    path = write_segment(tmp_path / "00000000000000000000.log", entries)
    return RangeTask(str(path), 0, 0, sum(len(e) for e in entries))


def test_arrow_batches_are_bounded_by_bytes_not_rows(tmp_path):
    task = _segment(tmp_path, [600 * KIB] * 5 + [3000 * KIB] + [10] * 3)
    batches = list(read_range("s", task, ReadLimits(arrow_batch_bytes=1024 * KIB)))
    table = pa.Table.from_batches(batches).to_pylist()
    assert [len(r["value"]) for r in table if r["row_kind"] == RECORD] == \
        [600 * KIB] * 5 + [3000 * KIB] + [10] * 3
    for batch in batches:
        values = [len(v or b"") for v in batch.column("value").to_pylist()]
        assert sum(values) <= 1024 * KIB + max(values)      # one row past the bound at most
    assert [b.num_rows for b in batches] == [2, 2, 2, 4]


def test_records_past_the_decompressed_bound_are_quarantined_with_a_reason(tmp_path):
    task = _segment(tmp_path, [100, 2048 * KIB, 100])
    rows = pa.Table.from_batches(list(read_range(
        "s", task, ReadLimits(max_decompressed_bytes=1024 * KIB)))).to_pylist()
    assert [(r["row_kind"], r["offset"], r["reason"]) for r in rows if r["row_kind"] != ACCOUNTING] == [
        (RECORD, 0, None), (QUARANTINE, 1, "batch_too_large"), (RECORD, 2, None)]


def test_the_bounds_come_from_conf():
    cfg = load_config(env={"OFFSETLAKE_INGEST__MAX_DECOMPRESSED_BYTES": "1234"})
    limits = ReadLimits.from_settings(cfg.ingest)
    assert limits.max_decompressed_bytes == 1234
    assert limits.max_batch_bytes == load_config().ingest["max_batch_bytes"]


def test_the_accounting_row_gives_the_largest_row_raw_bytes(tmp_path):
    # key-N is 5 bytes; the 2 MiB record is quarantined (batch_too_large) with its raw batch bytes.
    task = _segment(tmp_path, [100, 700, 2048 * KIB, 30], compression="none")
    rows = pa.Table.from_batches(list(read_range(
        "s", task, ReadLimits(max_decompressed_bytes=1024 * KIB, max_batch_bytes=1024 * KIB)))
    ).to_pylist()
    [accounting] = [r for r in rows if r["row_kind"] == ACCOUNTING]
    unit = [r for r in rows if r["row_kind"] == QUARANTINE]
    assert [len(r["raw"]) for r in unit] == [accounting["task_max_row_bytes"]]
    assert accounting["task_max_row_bytes"] > 2048 * KIB
    assert all(r["task_max_row_bytes"] is None for r in rows if r["row_kind"] != ACCOUNTING)

    (tmp_path / "clean").mkdir()
    clean = _segment(tmp_path / "clean", [100, 700, 30])
    [accounting] = [r for r in pa.Table.from_batches(list(read_range("s", clean))).to_pylist()
                    if r["row_kind"] == ACCOUNTING]
    assert accounting["task_max_row_bytes"] == 5 + 700


def test_staged_rows_are_read_in_batches_only_when_a_batch_of_the_largest_fits():
    budget = 32 * 1024 * KIB
    assert columnar_batch_rows(200, budget) == 4096          # Spark's own batch size at most
    assert columnar_batch_rows(64 * KIB, budget) == 512
    assert columnar_batch_rows(512 * KIB, budget) == 64
    assert columnar_batch_rows(512 * KIB + 1, budget) is None  # fewer than 64 rows: row by row
    assert columnar_batch_rows(48 * 1024 * KIB, budget) is None
    assert columnar_batch_rows(None, budget) is None           # not known (a capture)
    assert columnar_batch_rows(200, 0) is None                 # 0 in conf: never
    assert ReadLimits.from_settings(load_config().ingest).columnar_batch_bytes == budget

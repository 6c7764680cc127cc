"""The ingest reader bounds memory by bytes: rows reach Spark in Arrow batches of at most
``arrow_batch_bytes`` (a single larger row alone), and a batch whose records decompress past
``max_decompressed_bytes`` is one quarantined unit with reason ``batch_too_large``."""

from __future__ import annotations

import pyarrow as pa

from decoders.log.writer import encode_batch, write_segment
from jobs.runtime.config import load_config
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

"""Reading a segment keeps memory bounded: one read-ahead window plus one batch, whatever the file
size. The default test uses a small file; set ``OFFSETLAKE_LOG_MEMORY_MB`` (e.g. 200) to run the
large, slow variant."""

from __future__ import annotations

import os
import resource
import tracemalloc

import pytest

from decoders.log import RecordBatch, iter_segment
from decoders.log.writer import encode_batch

LARGE_MB = os.environ.get("OFFSETLAKE_LOG_MEMORY_MB")


def _write_synthetic_segment(path, target_bytes: int) -> int:
    """Write ~target_bytes of batches; the base offset sits outside the CRC, so a few encoded
    templates are re-stamped instead of re-encoded (fast even for hundreds of MB)."""
    templates = [encode_batch([(b"group-%d-key" % i, b"v" * (40 + 200 * j), 1_700_000_000_000)
                               for i in range(j + 1)], base_offset=0, compression=codec)
                 for j, codec in enumerate(["none", "lz4", "zstd", "gzip", "snappy", "none"])]
    written = offset = batches = 0
    with open(path, "wb") as out:
        while written < target_bytes:
            template = templates[batches % len(templates)]
            out.write(offset.to_bytes(8, "big") + template[8:])
            written += len(template)
            offset += batches % len(templates) + 1
            batches += 1
    return batches


def _measure(path) -> tuple[int, int, int]:
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    count = 0
    for item in iter_segment(path):
        assert isinstance(item, RecordBatch)
        count += 1
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rss_growth_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
    return count, peak, rss_growth_kb


def test_small_segment_memory_is_bounded(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    batches = _write_synthetic_segment(path, 6 * 1024 * 1024)
    count, peak, _ = _measure(path)
    assert count == batches
    assert peak < 8 * 1024 * 1024


@pytest.mark.slow
@pytest.mark.skipif(not LARGE_MB, reason="set OFFSETLAKE_LOG_MEMORY_MB to run (e.g. 200)")
def test_large_segment_memory_is_bounded(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    batches = _write_synthetic_segment(path, int(float(LARGE_MB or 0) * 1024 * 1024))
    count, peak, rss_growth_kb = _measure(path)
    assert count == batches
    assert peak < 32 * 1024 * 1024
    assert rss_growth_kb < 64 * 1024

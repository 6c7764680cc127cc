"""Segment files: damaged content is reported (never raised), byte ranges partition the items
exactly, and partition/log directories yield only the ``.log`` segments in base-offset order."""

from __future__ import annotations

import os
import struct
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoders.log import (BatchError, RecordBatch, TruncatedTail, batch_positions,
                          iter_partition_dir, iter_segment, list_segments, plan_ranges)
from decoders.log.crc import crc32c
from decoders.log.writer import encode_batch, encode_legacy_message_set, write_segment

T0 = 1_700_000_000_000


def batch(offset: int, count: int = 2, **kwargs) -> bytes:
    records = [(b"key-%d" % (offset + i), b"value-%d" % (offset + i) * 3, T0 + offset + i)
               for i in range(count)]
    return encode_batch(records, base_offset=offset, **kwargs)


def restamp_crc(entry: bytearray) -> bytes:
    entry[17:21] = crc32c(bytes(entry[21:])).to_bytes(4, "big")
    return bytes(entry)


def summary(items) -> list[tuple]:
    return [(type(i).__name__, i.file_position, i.base_offset if isinstance(i, RecordBatch)
             else i.reason) for i in items]


def test_every_proper_prefix_yields_first_batch_then_a_tail(tmp_path):
    first, second = batch(0), batch(2, compression="lz4")
    data = first + second
    path = tmp_path / "00000000000000000000.log"
    for cut in range(len(data)):
        path.write_bytes(data[:cut])
        items = list(iter_segment(path))
        if cut == 0:
            assert items == []
            continue
        head = [1] if cut >= len(first) else []
        assert len(items) == len(head) + (cut != len(first))
        if head:
            assert isinstance(items[0], RecordBatch) and items[0].base_offset == 0
        if cut != len(first):
            tail = items[-1]
            assert isinstance(tail, TruncatedTail)
            assert tail.file_position == len(head) * len(first)
            assert tail.raw == data[tail.file_position:cut] and tail.length == cut - tail.file_position


def test_bad_crc_is_a_batch_error_with_raw_bytes_and_reading_goes_on(tmp_path):
    bad = bytearray(batch(2))
    bad[-3] ^= 0xFF
    path = write_segment(tmp_path / "0.log", [batch(0), bytes(bad), batch(4)])
    items = list(iter_segment(path))
    assert summary(items) == [("RecordBatch", 0, 0), ("BatchError", len(bad), "bad_crc"),
                              ("RecordBatch", 2 * len(bad), 4)]
    error = items[1]
    assert isinstance(error, BatchError)
    assert (error.raw, error.length, error.base_offset, error.magic) == (bytes(bad), len(bad), 2, 2)
    assert not error.raw_truncated and "CRC-32C" in error.message


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_corrupt_compressed_payload(tmp_path, codec):
    entry = bytearray(batch(0, count=20, compression=codec))
    entry[61:] = bytes(b ^ 0x5A for b in entry[61:])      # garbage payload, valid CRC
    path = write_segment(tmp_path / "0.log", [restamp_crc(entry), batch(20)])
    items = list(iter_segment(path))
    assert summary(items) == [("BatchError", 0, "bad_compression"), ("RecordBatch", len(entry), 20)]


def test_hostile_batch_length_is_reported_without_a_big_allocation(tmp_path):
    good = batch(0)
    hostile = bytearray(batch(2))
    hostile[8:12] = struct.pack(">i", 2**31 - 1)
    path = write_segment(tmp_path / "0.log", [good, bytes(hostile)])
    tracemalloc.start()
    items = list(iter_segment(path))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 4 * 1024 * 1024
    assert summary(items) == [("RecordBatch", 0, 0), ("TruncatedTail", len(good), "truncated_tail")]
    assert items[1].declared_length == 2**31 - 1 + 12 and items[1].raw == bytes(hostile)


def test_batch_larger_than_the_bound_is_skipped_by_its_length(tmp_path):
    big = batch(0, count=400)
    path = write_segment(tmp_path / "0.log", [big, batch(400)])
    items = list(iter_segment(path, max_batch_bytes=1024))
    assert summary(items) == [("BatchError", 0, "batch_too_large"), ("RecordBatch", len(big), 400)]


def test_unknown_magic_is_skipped_by_its_length(tmp_path):
    odd = bytearray(batch(2))
    odd[16] = 7
    path = write_segment(tmp_path / "0.log", [batch(0), bytes(odd), batch(4)])
    items = list(iter_segment(path))
    assert summary(items)[1] == ("BatchError", len(odd), "unknown_magic")
    assert items[1].magic == 7 and items[2].base_offset == 4


def test_corrupt_length_is_one_unit_and_reading_resumes_after_it(tmp_path):
    broken = bytearray(batch(2))
    broken[8:12] = struct.pack(">i", 3)
    path = write_segment(tmp_path / "0.log", [batch(0), bytes(broken), batch(4)])
    items = list(iter_segment(path))
    assert summary(items) == [("RecordBatch", 0, 0), ("BatchError", len(broken), "invalid_length"),
                              ("RecordBatch", 2 * len(broken), 4)]
    assert items[1].length == len(broken) and items[1].raw == bytes(broken)
    assert [i.recovered for i in items] == [False, False, True]


def test_corrupt_length_with_nothing_verifiable_after_it_ends_the_file(tmp_path):
    broken = bytearray(batch(2))
    broken[8:12] = struct.pack(">i", 3)
    path = write_segment(tmp_path / "0.log", [batch(0), bytes(broken), batch(4)[:40]])
    items = list(iter_segment(path))
    assert summary(items) == [("RecordBatch", 0, 0), ("BatchError", len(broken), "invalid_length")]
    assert items[1].raw == bytes(broken) + batch(4)[:40]


def test_mixed_magics_in_one_file(tmp_path):
    legacy = encode_legacy_message_set([(b"k", b"v", T0)] * 3, magic=1, compression="snappy",
                                       base_offset=0)
    path = write_segment(tmp_path / "0.log", [legacy, encode_legacy_message_set(
        [(b"k", b"v", T0)], magic=0, base_offset=3), batch(4, compression="zstd")])
    items = list(iter_segment(path))
    assert [(i.magic, i.base_offset, i.last_offset) for i in items] == [(1, 0, 2), (0, 3, 3), (2, 4, 5)]


def _segment_with_tail(tmp_path, sizes, tail_kind):
    entries, offset = [], 0
    for i, count in enumerate(sizes):
        entries.append(batch(offset, count=count, compression=["none", "gzip", "lz4"][i % 3]))
        offset += count
    if tail_kind == "truncated":
        entries.append(batch(offset)[:30])
    elif tail_kind == "corrupt_length":
        entries.append(b"\x00" * 8 + struct.pack(">i", -5) + b"\x01" * 40)
    elif tail_kind == "bad_crc":
        entries.append(bytes(bytearray(batch(offset))[:-1]) + b"\x00")
    return write_segment(tmp_path / "00000000000000000000.log", entries)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(0, 6), min_size=1, max_size=12),
       tail_kind=st.sampled_from(["none", "truncated", "corrupt_length", "bad_crc"]),
       cuts=st.lists(st.floats(0, 1), max_size=8))
def test_byte_ranges_yield_every_item_exactly_once(tmp_path, sizes, tail_kind, cuts):
    path = _segment_with_tail(tmp_path, sizes, tail_kind)
    whole = list(iter_segment(path))
    size = os.path.getsize(path)
    bounds = sorted({0, size, *(int(c * size) for c in cuts)})
    pieces = [item for s, e in zip(bounds, bounds[1:]) for item in iter_segment(path, s, e)]
    assert pieces == whole
    assert [i.file_position for i in whole] == batch_positions(path)
    assert sum(getattr(i, "batch_length", None) or i.length for i in whole) == size
    assert [i for s, e in plan_ranges(size, 37) for i in iter_segment(path, s, e)] == whole
    assert list(iter_segment(path, 0, None)) == whole and list(iter_segment(path, size, None)) == []


def test_partition_dir_reads_only_log_files_in_base_offset_order(tmp_path):
    part = tmp_path / "__consumer_offsets-7"
    part.mkdir()
    write_segment(part / "00000000000000000010.log", [batch(10)])
    write_segment(part / "00000000000000000000.log", [batch(0)])
    write_segment(part / "00000000000000000002.log", [batch(2)])
    for name in ["00000000000000000000.index", "00000000000000000000.timeindex",
                 "00000000000000000000.txnindex", "00000000000000000010.snapshot",
                 "leader-epoch-checkpoint", "partition.metadata", "00000000000000000004.log.deleted",
                 "00000000000000000004.log.cleaned", "00000000000000000002.index.swap"]:
        (part / name).write_bytes(batch(4))       # valid batches: reading them would show
    seen = [(seg.partition, seg.base_offset, item.base_offset) for seg, item in iter_partition_dir(part)]
    assert seen == [(7, 0, 0), (7, 2, 2), (7, 10, 10)]
    assert [s for s, _ in iter_partition_dir(part, partition=3)][0].partition == 3


def test_swap_replaces_the_segments_it_covers(tmp_path):
    part = tmp_path / "__consumer_offsets-0"
    part.mkdir()
    write_segment(part / "00000000000000000000.log", [batch(0), batch(2)])
    write_segment(part / "00000000000000000004.log", [batch(4)])
    write_segment(part / "00000000000000000006.log", [batch(6)])
    write_segment(part / "00000000000000000000.log.swap", [batch(1, count=1), batch(5, count=1)])
    segments = list_segments(part)
    assert [(s.base_offset, s.path.endswith(".swap")) for s in segments] == [(0, True), (6, False)]


def test_list_segments_accepts_file_partition_dir_and_log_dir(tmp_path):
    for p in (0, 12, 3):
        (tmp_path / f"__consumer_offsets-{p}").mkdir()
        write_segment(tmp_path / f"__consumer_offsets-{p}" / "00000000000000000000.log", [batch(0)])
    for other in ["orders-0", "__consumer_offsets-1.0a1b2c3d-delete", "__consumer_offsets-x"]:
        (tmp_path / other).mkdir()
        write_segment(tmp_path / other / "00000000000000000000.log", [batch(0)])
    assert [s.partition for s in list_segments(tmp_path)] == [0, 3, 12]
    [single] = list_segments(str(tmp_path / "__consumer_offsets-12" / "00000000000000000000.log"))
    assert (single.partition, single.base_offset, single.size) == (12, 0, len(batch(0)))
    assert [s.partition for s in list_segments([tmp_path / "__consumer_offsets-3"])] == [3]

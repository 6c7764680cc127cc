"""Resynchronisation after damage: every batch outside the damage is read, the damage is exactly
one unit with its reason, and random bytes never pass for a batch."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoders.log import (BatchError, RecordBatch, TruncatedTail, batch_positions, iter_segment,
                          plan_ranges)
from decoders.log.writer import encode_batch, encode_legacy_message_set, write_segment

T0 = 1_700_000_000_000
SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "kafka-4.3.1"
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def batch(offset: int, count: int = 3, compression: str = "none") -> bytes:
    records = [(b"group-%d" % (offset + i), b"metadata-%d" % (offset + i) * 5, T0 + offset + i)
               for i in range(count)]
    return encode_batch(records, base_offset=offset, compression=compression)


def batches(n: int = 6) -> list[bytes]:
    return [batch(3 * i, compression=CODECS[i % len(CODECS)]) for i in range(n)]


def read(path) -> tuple[list[RecordBatch], list]:
    items = list(iter_segment(path))
    return ([i for i in items if isinstance(i, RecordBatch)],
            [i for i in items if not isinstance(i, RecordBatch)])


def set_length(entry: bytes, change) -> bytes:
    out = bytearray(entry)
    (length,) = struct.unpack_from(">i", out, 8)
    struct.pack_into(">i", out, 8, change(length))
    return bytes(out)


def flip(at: int):
    def corrupt(entry: bytes) -> bytes:
        out = bytearray(entry)
        out[at % len(out)] ^= 0x40
        return bytes(out)
    return corrupt


# (name, how one whole entry is damaged, the reason its unit must carry)
DAMAGE = [
    ("huge_length", lambda e: set_length(e, lambda n: 2**31 - 1), "invalid_length"),
    ("negative_length", lambda e: set_length(e, lambda n: -n), "invalid_length"),
    ("zero_length", lambda e: set_length(e, lambda n: 0), "invalid_length"),
    ("length_plus_10", lambda e: set_length(e, lambda n: n + 10), "invalid_length"),
    ("length_minus_10", lambda e: set_length(e, lambda n: n - 10), "invalid_length"),
    ("length_plus_1", lambda e: set_length(e, lambda n: n + 1), "invalid_length"),
    ("bad_crc_field", flip(18), "bad_crc"),
    ("flipped_payload_byte", flip(-5), "bad_crc"),
    ("flipped_attributes", flip(22), "bad_crc"),
    ("unknown_magic", lambda e: e[:16] + b"\x07" + e[17:], "unknown_magic"),
    ("zero_filled", lambda e: b"\x00" * len(e), "invalid_length"),
    ("garbage", lambda e: os.urandom(len(e)), None),
    ("truncated_in_the_middle", lambda e: e[: len(e) // 2], "invalid_length"),
]


@pytest.mark.parametrize("name, damage, reason", DAMAGE, ids=[d[0] for d in DAMAGE])
@pytest.mark.parametrize("victim", [0, 2, 5])
def test_one_damaged_entry_is_one_unit_and_every_other_batch_is_read(tmp_path, name, damage,
                                                                     reason, victim):
    entries = batches()
    damaged = damage(entries[victim])
    path = write_segment(tmp_path / "0.log", entries[:victim] + [damaged] + entries[victim + 1:])
    good, bad = read(path)
    expected = [b for i, b in enumerate(entries) if i != victim]
    assert [b.base_offset for b in good] == [3 * i for i in range(6) if i != victim]
    assert [r.value for b in good for r in b.records] == [
        r.value for b in expected for r in read_bytes(tmp_path, b)]
    if victim == 5 and name in ("huge_length", "length_plus_10", "length_plus_1"):
        [tail] = bad           # nothing follows: an incomplete last entry is a truncated tail
        assert isinstance(tail, TruncatedTail) and tail.raw == damaged
        return
    if victim == 5 and name == "length_minus_10":
        # nothing verifiable follows: framed by its own length, as a length-only reader would
        assert [(type(u).__name__, u.length) for u in bad] == [
            ("BatchError", len(damaged) - 10), ("TruncatedTail", 10)]
        assert bad[0].reason == "bad_crc"
        return
    [unit] = bad
    start = sum(len(e) for e in entries[:victim])
    assert (unit.file_position, unit.length) == (start, len(damaged))
    assert unit.raw == damaged
    if isinstance(unit, BatchError) and reason is not None:
        assert unit.reason == reason
    # "recovered": read only thanks to the resync, i.e. the damaged entry's length was wrong
    wrong_length = struct.unpack_from(">i", damaged, 8)[0] + 12 != len(damaged)
    assert [b.recovered for b in good] == [i > victim and wrong_length
                                           for i in range(6) if i != victim]


def read_bytes(tmp_path, entry: bytes):
    path = write_segment(tmp_path / "one.log", [entry])
    [only] = list(iter_segment(path))
    return only.records


@pytest.mark.parametrize("noise_len", [1, 11, 12, 17, 60, 61, 4096])
def test_garbage_between_batches_is_exactly_one_unit(tmp_path, noise_len):
    entries = batches(4)
    noise = os.urandom(noise_len)
    path = write_segment(tmp_path / "0.log", entries[:2] + [noise] + entries[2:])
    good, bad = read(path)
    assert [b.base_offset for b in good] == [0, 3, 6, 9]
    [unit] = bad
    assert (unit.file_position, unit.length, unit.raw) == (len(entries[0]) + len(entries[1]),
                                                           noise_len, noise)


def test_header_shaped_noise_with_a_wrong_crc_is_not_a_batch(tmp_path):
    """Noise built to pass every structural check (magic, length in the file, attributes, offsets,
    record count) but whose CRC does not match: the resync must skip it."""
    entries = batches(3)
    fake = bytearray(batch(100, count=2))
    fake[17:21] = b"\xde\xad\xbe\xef"
    path = write_segment(tmp_path / "0.log", [entries[0], b"\xff" * 9, bytes(fake), entries[1],
                                              entries[2]])
    good, bad = read(path)
    assert [b.base_offset for b in good] == [0, 3, 6]
    [unit] = bad
    assert (unit.file_position, unit.length) == (len(entries[0]), 9 + len(fake))


def test_resync_never_lands_before_the_offsets_already_read(tmp_path):
    """A verified copy of an older batch in the damage is not where reading resumes: offsets must
    move forward, so a stale copy stays inside the quarantined unit with the damage."""
    entries = batches(3)
    stale = entries[0]                    # base offset 0, already read
    path = write_segment(tmp_path / "0.log",
                         [entries[0], entries[1], b"\x01" * 5, stale, entries[2]])
    good, bad = read(path)
    assert [b.base_offset for b in good] == [0, 3, 6]
    [unit] = bad
    assert unit.length == 5 + len(stale)


def test_legacy_entries_resynchronise_too(tmp_path):
    legacy = [encode_legacy_message_set([(b"k%d" % i, b"v", T0)], magic=1, base_offset=i)
              for i in range(4)]
    path = write_segment(tmp_path / "0.log", legacy[:2] + [b"\x00\x13" * 20] + legacy[2:])
    good, bad = read(path)
    assert [b.base_offset for b in good] == [0, 1, 2, 3] and [u.length for u in bad] == [40]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(noise=st.binary(min_size=1, max_size=3000), seed_entries=st.integers(1, 5),
       where=st.integers(0, 5))
def test_random_noise_never_resyncs_falsely(tmp_path, noise, seed_entries, where):
    entries = batches(seed_entries)
    where = min(where, len(entries))
    path = write_segment(tmp_path / "0.log", entries[:where] + [noise] + entries[where:])
    good, bad = read(path)
    assert [b.base_offset for b in good] == [3 * i for i in range(len(entries))]
    start = sum(len(e) for e in entries[:where])
    assert [(u.file_position, u.length) for u in bad] == [(start, len(noise))]


def test_megabytes_of_random_noise_never_resync_falsely(tmp_path):
    entries = batches(2)
    noise = os.urandom(8 * 1024 * 1024)
    path = write_segment(tmp_path / "0.log", [entries[0], noise, entries[1]])
    good, bad = read(path)
    assert [b.base_offset for b in good] == [0, 3]
    assert [(u.file_position, u.length) for u in bad] == [(len(entries[0]), len(noise))]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(victim=st.integers(0, 5), damage=st.sampled_from(DAMAGE), cuts=st.lists(st.floats(0, 1), max_size=6))
def test_byte_ranges_agree_with_the_whole_file_across_damage(tmp_path, victim, damage, cuts):
    entries = batches()
    entries[victim] = damage[1](entries[victim])
    path = write_segment(tmp_path / "0.log", entries)
    whole = list(iter_segment(path))
    size = os.path.getsize(path)
    bounds = sorted({0, size, *(int(c * size) for c in cuts)})
    assert [i for s, e in zip(bounds, bounds[1:]) for i in iter_segment(path, s, e)] == whole
    assert [i for s, e in plan_ranges(size, 97) for i in iter_segment(path, s, e)] == whole
    assert [i.file_position for i in whole] == batch_positions(path)
    assert sum(getattr(i, "batch_length", None) or i.length for i in whole) == size


CORRUPT_LENGTHS = {"huge": lambda n: 2**31 - 1, "negative": lambda n: -n,
                   "plus_10": lambda n: n + 10, "minus_10": lambda n: n - 10}


@pytest.mark.parametrize("change", CORRUPT_LENGTHS.values(), ids=CORRUPT_LENGTHS.keys())
def test_sample_with_one_corrupted_length_loses_only_that_batch(tmp_path, change):
    segment = SAMPLE / "__consumer_offsets-2" / "00000000000000000000.log"
    clean = list(iter_segment(segment))
    positions = batch_positions(segment)
    victim = len(positions) // 2
    data = bytearray(segment.read_bytes())
    (length,) = struct.unpack_from(">i", data, positions[victim] + 8)
    struct.pack_into(">i", data, positions[victim] + 8, change(length))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(data))
    good, bad = read(path)
    expected = [b for i, b in enumerate(clean) if i != victim]
    assert [(r.offset, r.key, r.value) for b in good for r in b.records] == [
        (r.offset, r.key, r.value) for b in expected for r in b.records]
    [unit] = bad
    assert (unit.file_position, unit.length, unit.reason) == (
        positions[victim], positions[victim + 1] - positions[victim], "invalid_length")


def test_dump_marks_recovered_records_and_counts_them(tmp_path):
    from decoders.dump import dump_objects

    part = tmp_path / "__consumer_offsets-2"
    part.mkdir()
    segment = SAMPLE / "__consumer_offsets-2" / "00000000000000000000.log"
    positions = batch_positions(segment)
    data = bytearray(segment.read_bytes())
    struct.pack_into(">i", data, positions[3] + 8, -1)
    (part / "00000000000000000000.log").write_bytes(bytes(data))
    clean = list(iter_segment(segment))
    tally: dict = {}
    objects = list(dump_objects([str(part)], tally=tally))
    [unit] = [o for o in objects if "error" in o and "position" in o]
    assert (unit["position"], unit["error"]["reason"]) == (positions[3], "invalid_length")
    recovered = [o["offset"] for o in objects if o.get("recovered")]
    assert recovered == [r.offset for b in clean[4:] for r in b.records]
    assert tally == {"records": sum(len(b.records) for i, b in enumerate(clean) if i != 3),
                     "recovered": len(recovered), "unreadable": 1}

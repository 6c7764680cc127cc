"""Round trips through writer and reader for every codec x magic, the batch-level features
(transactions, delete horizon, LogAppendTime, empty batches, headers) and the codec quirks."""

from __future__ import annotations

import gzip
import struct

import cramjam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoders.errors import CompressionError, CorruptBatchError, CrcMismatchError, DecodeError
from decoders.log import compression, lz4frame
from decoders.log.batch import decode_entry
from decoders.log.crc import crc32, crc32c
from decoders.log.types import LogRecord
from decoders.log.writer import encode_batch, encode_control_batch, encode_legacy_message_set

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
MAGIC_CODECS = [(m, c) for m in (0, 1, 2) for c in CODECS if not (c == "zstd" and m < 2)]


def decode_set(data: bytes):
    """Decode concatenated entries (an uncompressed legacy set has one per record) as one batch."""
    batches, position = [], 0
    while position < len(data):
        size = 12 + struct.unpack_from(">i", data, position + 8)[0]
        batches.append(decode_entry(data[position:position + size], position))
        position += size
    first = batches[0]
    first.records = [r for b in batches for r in b.records]
    first.last_offset, first.records_count = batches[-1].last_offset, len(first.records)
    return first


RECORDS = [(b"key-%d" % i, None if i % 4 == 3 else b"value-%d" % i * 40, 1_700_000_000_000 + i)
           for i in range(50)]


@pytest.mark.parametrize("magic,codec", MAGIC_CODECS)
def test_round_trip_every_codec_and_magic(magic, codec):
    entry = encode_batch(RECORDS, base_offset=1_000, magic=magic, compression=codec)
    batch = decode_set(entry)
    assert (batch.magic, batch.compression, batch.crc_valid) == (magic, codec, True)
    assert (batch.base_offset, batch.last_offset, batch.records_count) == (1_000, 1_049, 50)
    want_ts = [t if magic else -1 for _, _, t in RECORDS]
    assert [(r.offset, r.key, r.value, r.timestamp) for r in batch.records] == \
        [(1_000 + i, k, v, want_ts[i]) for i, (k, v, _) in enumerate(RECORDS)]


def test_transactional_batch_and_both_markers():
    data = decode_entry(encode_batch(RECORDS[:2], base_offset=10, producer_id=42, producer_epoch=3,
                                     base_sequence=0, is_transactional=True))
    assert (data.is_transactional, data.is_control, data.producer_id, data.producer_epoch,
            data.base_sequence) == (True, False, 42, 3, 0)
    for control_type, offset in ((1, 12), (0, 13)):
        marker = decode_entry(encode_control_batch(control_type, 7, offset=offset, producer_id=42,
                                                   producer_epoch=3, timestamp=99))
        assert (marker.attributes, marker.base_offset, marker.producer_id) == (0x30, offset, 42)
        [record] = marker.records
        assert (record.control_type, record.coordinator_epoch, record.timestamp) == (control_type, 7, 99)


def test_kraft_control_type_is_kept_as_its_number():
    record = LogRecord(5, 1, struct.pack(">hh", 0, 3), b"\x00\x00")
    [parsed] = decode_entry(encode_batch([record], base_offset=5, is_control=True)).records
    assert (parsed.control_type, parsed.coordinator_epoch) == (3, None)


def test_short_control_key_is_corrupt():
    entry = encode_batch([(b"\x00", b"", 1)], base_offset=0, is_control=True)
    with pytest.raises(CorruptBatchError):
        decode_entry(entry)


def test_delete_horizon_keeps_record_timestamps():
    entry = encode_batch(RECORDS[:3], base_offset=0, delete_horizon_ms=1_800_000_000_000)
    batch = decode_entry(entry)
    assert batch.delete_horizon_ms == batch.base_timestamp == 1_800_000_000_000
    assert batch.attributes & 0x40
    assert [r.timestamp for r in batch.records] == [t for _, _, t in RECORDS[:3]]


@pytest.mark.parametrize("magic", [1, 2])
def test_log_append_time_stamps_every_record(magic):
    entry = encode_batch(RECORDS[:3], base_offset=0, magic=magic, compression="gzip",
                         timestamp_type="LogAppendTime", log_append_time=2_000_000_000_000)
    batch = decode_entry(entry)
    assert (batch.timestamp_type, batch.max_timestamp) == ("LogAppendTime", 2_000_000_000_000)
    assert [r.timestamp for r in batch.records] == [2_000_000_000_000] * 3


def test_empty_batch_is_valid():
    batch = decode_entry(encode_batch([], base_offset=77, last_offset=80, producer_id=9,
                                      producer_epoch=0))
    assert (batch.records, batch.records_count, batch.base_offset, batch.last_offset) == ([], 0, 77, 80)
    assert (batch.base_timestamp, batch.max_timestamp) == (-1, -1)


def test_headers_and_offset_gaps_round_trip():
    records = [LogRecord(3, 10, b"a", b"b", [("h1", b"x"), ("h2", None)]), LogRecord(9, 8, None, None)]
    batch = decode_entry(encode_batch(records, base_offset=3, compression="snappy"))
    assert batch.records == records and batch.last_offset == 9


def test_magic1_wrapper_offsets_are_relative_to_the_last_offset():
    entry = encode_legacy_message_set([LogRecord(100 + 2 * i, 5, b"k", b"v") for i in range(3)],
                                      magic=1, compression="gzip")
    assert decode_entry(entry).records[-1].offset == 104 and struct.unpack_from(">q", entry)[0] == 104
    assert [r.offset for r in decode_entry(entry).records] == [100, 102, 104]
    zero_wrapper = b"\x00" * 8 + entry[8:]      # old librdkafka: wrapper offset 0 -> relative as is
    assert [r.offset for r in decode_entry(zero_wrapper).records] == [0, 2, 4]


def test_magic0_lz4_broken_header_checksum_is_tolerated():
    entry = encode_legacy_message_set(RECORDS, magic=0, compression="lz4")
    value = entry[12 + 4 + 2 + 4:][4:]           # crc, magic, attributes, null key, value length
    with pytest.raises(cramjam.DecompressionError):
        cramjam.lz4.decompress(value)           # the real decoder rejects Kafka's magic-0 HC
    assert len(decode_entry(entry).records) == 50


def test_lz4_frames_interoperate_with_the_reference_decoder():
    data = b"".join(k + (v or b"") for k, v, _ in RECORDS) * 50
    ours = lz4frame.compress_frame(data)
    assert bytes(cramjam.lz4.decompress(ours)) == data
    theirs = bytes(cramjam.lz4.compress(data))   # linked blocks + checksums: still read
    assert compression.decompress(compression.LZ4, theirs, magic=2) == data


def test_xerial_snappy_framing_and_raw_snappy():
    data = bytes(range(256)) * 400
    framed = compression.compress(compression.SNAPPY, data, magic=2)
    assert framed[:16] == bytes.fromhex("82534e41505059000000000100000001")
    first_block = struct.unpack_from(">i", framed, 16)[0]
    assert bytes(cramjam.snappy.decompress_raw(framed[20:20 + first_block])) == data[:32 * 1024]
    assert compression.decompress(compression.SNAPPY, framed, magic=2) == data
    raw = bytes(cramjam.snappy.compress_raw(data))
    assert compression.decompress(compression.SNAPPY, raw, magic=1) == data


def test_gzip_is_a_standard_stream_and_concatenated_members_are_read():
    data = b"offsets" * 1000
    assert gzip.decompress(compression.compress(compression.GZIP, data, magic=2)) == data
    assert compression.decompress(compression.GZIP, gzip.compress(data) * 2, magic=2) == data * 2


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_decompression_is_bounded(codec):
    bomb = compression.compress(compression.CODEC_IDS[codec], bytes(4 * 1024 * 1024), magic=2)
    with pytest.raises(CompressionError, match="exceeds"):
        compression.decompress(compression.CODEC_IDS[codec], bomb, magic=2, max_size=1024 * 1024)
    assert len(compression.decompress(compression.CODEC_IDS[codec], bomb, magic=2,
                                      max_size=4 * 1024 * 1024)) == 4 * 1024 * 1024


def test_zstd_not_allowed_in_legacy_and_unknown_codec_rejected():
    with pytest.raises(CompressionError):
        compression.decompress(compression.ZSTD, b"", magic=1)
    entry = bytearray(encode_batch(RECORDS[:1], base_offset=0))
    entry[22] |= 0x07                            # codec 7 does not exist
    entry[17:21] = compression_crc(entry)
    with pytest.raises(CompressionError):
        decode_entry(bytes(entry))


def compression_crc(entry: bytearray) -> bytes:
    return crc32c(bytes(entry[21:])).to_bytes(4, "big")


def test_bad_crc_raises_before_anything_is_decoded():
    entry = bytearray(encode_batch(RECORDS[:2], base_offset=0, compression="zstd"))
    entry[-1] ^= 0x01
    with pytest.raises(CrcMismatchError):
        decode_entry(bytes(entry))
    legacy = bytearray(encode_legacy_message_set(RECORDS[:1], magic=1))
    legacy[-1] ^= 0x01
    with pytest.raises(CrcMismatchError):
        decode_entry(bytes(legacy))


def test_partition_leader_epoch_is_outside_the_crc():
    entry = bytearray(encode_batch(RECORDS[:1], base_offset=0, partition_leader_epoch=4))
    entry[12:16] = (9).to_bytes(4, "big")
    assert decode_entry(bytes(entry)).partition_leader_epoch == 9


record_strategy = st.tuples(st.none() | st.binary(max_size=40), st.none() | st.binary(max_size=200),
                            st.integers(-1, 2**45))


@settings(max_examples=150, deadline=None)
@given(records=st.lists(record_strategy, min_size=1, max_size=12),
       magic_codec=st.sampled_from(MAGIC_CODECS), base_offset=st.integers(0, 2**40))
def test_random_batches_round_trip(records, magic_codec, base_offset):
    magic, codec = magic_codec
    batch = decode_set(encode_batch(records, base_offset=base_offset, magic=magic, compression=codec))
    assert [(r.key, r.value) for r in batch.records] == [(k, v) for k, v, _ in records]
    assert [r.offset for r in batch.records] == [base_offset + i for i in range(len(records))]
    if magic:
        assert [r.timestamp for r in batch.records] == [t for _, _, t in records]


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_corrupt_content_with_a_recomputed_crc_raises_only_typed_errors(data):
    """Flip bytes and re-stamp the CRC, so the parsers (not the CRC) meet the garbage."""
    magic, codec = data.draw(st.sampled_from(MAGIC_CODECS))
    entry = bytearray(encode_batch(RECORDS[:5], base_offset=0, magic=magic, compression=codec))
    if magic < 2:   # keep one top-level message (uncompressed legacy sets have one per record)
        entry = entry[:12 + struct.unpack_from(">i", entry, 8)[0]]
    first = 21 if magic == 2 else 17
    for _ in range(data.draw(st.integers(1, 4))):
        entry[data.draw(st.integers(first, len(entry) - 1))] ^= data.draw(st.integers(1, 255))
    if magic == 2:
        entry[17:21] = crc32c(bytes(entry[21:])).to_bytes(4, "big")
    else:
        entry[12:16] = crc32(bytes(entry[16:])).to_bytes(4, "big")
    try:
        batch = decode_entry(bytes(entry))
    except DecodeError as exc:
        assert exc.reason in {"bad_crc", "bad_compression", "batch_too_large", "corrupt_batch", "truncated",
                              "invalid_length", "invalid_utf8"}
    else:
        assert batch.crc_valid

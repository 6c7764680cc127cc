"""Golden bytes from the wire-format reference (section 3 TV-14/15/16/20, appendix legacy rows):
hex in, fields out, and our writer must reproduce the exact bytes. Cross-checked against
kafka-python's independent record implementation where it has the codec."""

from __future__ import annotations

import pytest
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatch, LegacyRecordBatchBuilder

from decoders.log.batch import decode_entry
from decoders.log.crc import crc32c, crc32c_pure
from decoders.log.writer import encode_batch, encode_control_batch, encode_legacy_message_set


def h(*parts: str) -> bytes:
    return bytes.fromhex("".join(parts).replace("|", "").replace(" ", ""))


NO_PRODUCER = "ffffffffffffffff|ffffffffffffffff|ffffffffffffffff|ffff|ffffffff"
TV14 = h("0000000000000000|00000048|ffffffff|02|894e6646|0000|00000000|", NO_PRODUCER, "|00000001|",
         "2c|00|00|00|12|0003000567726f7570|0e|00000000000a00|00")
TV15 = h("000000000000000000000041ffffffff0209c869e7000000000000ffffffffffffffffffffffffffffffffffffff"
         "ffffffffffffffffffffff000000011e000000120003000567726f75700100")
TV20 = h("0000000000000000|00000042|ffffffff|02|68b2f7f0|0030|00000000|00000000000003e8|",
         "00000000000003e8|0000000000018013|0063|ffffffff|00000001|",
         "20|00|00|00|08|00000001|0c|000000000064|00")
# TV-16 gives the record (key 7fff, value of 0 bytes), not the batch: the batch below is assembled
# by hand around it with the TV-14 header fields; its CRC is checked with the pure-Python CRC-32C.
TV16_RECORD = h("10|00|00|00|04|7fff|00|00")
LEGACY_V1 = h("0000000000000000|00000020|ac75f747|01|00|00000000000003e8|00000004 6b657931|"
              "00000006 76616c756531")
LEGACY_V0 = h("0000000000000000|00000018|75f0f41d|00|00|00000004 6b657931|00000006 76616c756531")
GROUP_KEY = h("0003000567726f7570")


def test_crc32c_backends_agree_on_the_check_value():
    assert crc32c(b"123456789") == crc32c_pure(b"123456789") == 0xE3069283
    assert crc32c(TV14[21:]) == crc32c_pure(TV14[21:]) == 0x894E6646


def test_tv14_type3_record_batch():
    assert len(TV14) == 84
    batch = decode_entry(TV14)
    assert (batch.magic, batch.crc, batch.crc_valid) == (2, 0x894E6646, True)
    assert (batch.base_offset, batch.last_offset, batch.batch_length) == (0, 0, 84)
    assert (batch.partition_leader_epoch, batch.compression, batch.timestamp_type) == (-1, "none", "CreateTime")
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (-1, -1, -1)
    assert (batch.base_timestamp, batch.max_timestamp, batch.delete_horizon_ms) == (-1, -1, None)
    assert (batch.is_transactional, batch.is_control, batch.records_count) == (False, False, 1)
    [record] = batch.records
    assert (record.offset, record.timestamp, record.headers) == (0, -1, [])
    assert record.key == GROUP_KEY and record.value == h("00000000000a00")
    assert encode_batch([(GROUP_KEY, h("00000000000a00"), -1)], base_offset=0) == TV14


def test_tv15_tombstone():
    batch = decode_entry(TV15)
    assert batch.crc == 0x09C869E7
    [record] = batch.records
    assert record.key == GROUP_KEY and record.value is None and record.is_tombstone
    assert encode_batch([(GROUP_KEY, None, -1)], base_offset=0) == TV15


def test_tv16_unknown_type_record_is_framed_like_any_other():
    body = h("0000|00000000|", NO_PRODUCER, "|00000001") + TV16_RECORD
    crc = crc32c_pure(body)
    batch_bytes = h("0000000000000000") + (len(body) + 9).to_bytes(4, "big") + h("ffffffff02") \
        + crc.to_bytes(4, "big") + body
    batch = decode_entry(batch_bytes)
    assert batch.crc == crc and batch.records[0].key == h("7fff") and batch.records[0].value == b""
    assert encode_batch([(h("7fff"), b"", -1)], base_offset=0) == batch_bytes


def test_tv20_commit_marker():
    batch = decode_entry(TV20)
    assert (batch.crc, batch.attributes) == (0x68B2F7F0, 0x30)
    assert (batch.is_transactional, batch.is_control) == (True, True)
    assert (batch.producer_id, batch.producer_epoch) == (98323, 99)
    assert (batch.base_timestamp, batch.max_timestamp) == (1000, 1000)
    [marker] = batch.records
    assert (marker.control_type, marker.coordinator_epoch, marker.offset, marker.timestamp) == (1, 100, 0, 1000)
    assert encode_control_batch(1, 100, offset=0, producer_id=98323, producer_epoch=99,
                                timestamp=1000) == TV20


@pytest.mark.parametrize("entry,magic,crc,timestamp,timestamp_type", [
    (LEGACY_V1, 1, 0xAC75F747, 1000, "CreateTime"),
    (LEGACY_V0, 0, 0x75F0F41D, -1, "NoTimestampType"),
])
def test_legacy_appendix_messages(entry, magic, crc, timestamp, timestamp_type):
    batch = decode_entry(entry)
    assert (batch.magic, batch.crc, batch.crc_valid, batch.compression) == (magic, crc, True, "none")
    assert (batch.timestamp_type, batch.producer_id, batch.records_count) == (timestamp_type, -1, 1)
    [record] = batch.records
    assert (record.offset, record.timestamp, record.key, record.value) == (0, timestamp, b"key1", b"value1")
    assert encode_legacy_message_set([(b"key1", b"value1", 1000)], magic=magic) == entry


@pytest.mark.parametrize("codec_name,codec_id", [("none", 0), ("gzip", 1)])
def test_kafka_python_reads_our_batches_and_we_read_its(codec_name, codec_id):
    records = [(b"k%d" % i, None if i == 2 else b"v" * i, 1_000 + i) for i in range(5)]
    ours = encode_batch(records, base_offset=40, compression=codec_name, producer_id=7,
                        producer_epoch=1, base_sequence=0, is_transactional=True)
    theirs = DefaultRecordBatch(bytearray(ours))
    assert theirs.validate_crc() and theirs.is_transactional and theirs.producer_id == 7
    assert [(r.offset, r.key, r.value, r.timestamp) for r in theirs] == \
        [(40 + i, k, v, t) for i, (k, v, t) in enumerate(records)]
    builder = DefaultRecordBatchBuilder(2, codec_id, True, 7, 1, 0, 1 << 20)
    for i, (k, v, t) in enumerate(records):
        builder.append(i, t, k, v, [("hk", b"hv")])
    built = bytes(builder.build())
    built = (40).to_bytes(8, "big") + built[8:]      # base offset is outside the CRC
    batch = decode_entry(built)
    assert [(r.offset, r.key, r.value, r.timestamp, r.headers) for r in batch.records] == \
        [(40 + i, k, v, t, [("hk", b"hv")]) for i, (k, v, t) in enumerate(records)]


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec_name,codec_id", [("none", 0), ("gzip", 1)])
def test_kafka_python_legacy_agrees(magic, codec_name, codec_id):
    builder = LegacyRecordBatchBuilder(magic, codec_id, 1 << 20)
    for i in range(3):
        builder.append(i, 5_000 + i, b"k%d" % i, b"value-%d" % i)
    built = bytes(builder.build())
    ours = [r for b in _decode_all(built) for r in b.records]
    expected_ts = [5_000 + i if magic else -1 for i in range(3)]
    assert [(r.offset, r.timestamp, r.key, r.value) for r in ours] == \
        [(i, expected_ts[i], b"k%d" % i, b"value-%d" % i) for i in range(3)]
    mine = encode_legacy_message_set([(b"k%d" % i, b"value-%d" % i, 5_000 + i) for i in range(3)],
                                     magic=magic, compression=codec_name)
    theirs = [r for entry in _entries(mine) for r in LegacyRecordBatch(bytearray(entry), magic)]
    assert [(r.offset, r.key, r.value) for r in theirs] == [(i, b"k%d" % i, b"value-%d" % i) for i in range(3)]


def _entries(data: bytes) -> list[bytes]:
    position, out = 0, []
    while position < len(data):
        size = 12 + int.from_bytes(data[position + 8:position + 12], "big")
        out.append(data[position:position + size])
        position += size
    return out


def _decode_all(data: bytes):
    return [decode_entry(entry) for entry in _entries(data)]

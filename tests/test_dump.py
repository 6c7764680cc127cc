"""Acceptance tests of ``offsetlake dump`` (issue #4).

Segments are written with our batch encoder (``decoders.log.writer``) around record bytes taken
literally from the wire-format reference (section 3); every expected object below is written out
by hand (keys/values as the reference's expected JSON), never produced by the code under test.
Each case runs the CLI twice: as a subprocess and in-process (``jobs.cli.main``), and both must
print exactly the same objects.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from kafka.record._crc32c import crc as kafka_python_crc32c  # an independent CRC-32C

from decoders.log.writer import (encode_batch, encode_control_batch, encode_legacy_message_set,
                                 write_segment)
from jobs import cli

PROJECT = Path(__file__).resolve().parents[1]


def h(*parts: str) -> bytes:
    return bytes.fromhex("".join(parts).replace("|", "").replace(" ", ""))


# ---- record bytes and their expected JSON (wire-format.md section 3) -------------------------

OFFSET_KEY_0 = h("0000|0008 67726f75702d6964|0003 666f6f|00000001")          # TV-08
OFFSET_KEY_1 = h("0001|0008 67726f75702d6964|0003 666f6f|00000001")          # TV-09
OFFSET_V0 = h("0000|0000000000000064|0008 6d65746164617461|00000000000004d2")
OFFSET_V1 = h("0001|0000000000000064|0008 6d65746164617461|00000000000004d2|000000000000162e")
OFFSET_V4 = h("0004|0000000000000064|0000000a|09 6d65746164617461|00000000000004d2|"
              "01 00 10 30a5f1d5f224432d89f635c784af26d7")                  # TV-11
GROUP_KEY = h("0002|0008 67726f75702d6964")                                   # TV-13
GROUP_V0 = h("0000|0008 636f6e73756d6572|00000001|0005 72616e6765|0006 6c6561646572|00000001|"
             "0008 6d656d6265722d31|0008 636c69656e742d31|0006 686f73742d31|000005dc|"
             "00000002 0001|00000002 0102")
CG_KEY = h("0003|0005 67726f7570")                                            # TV-14
CG_V0 = h("0000|0000000a|00")

KEY_0 = {"type": 0, "data": {"group": "group-id", "topic": "foo", "partition": 1}}
KEY_1 = {"type": 1, "data": {"group": "group-id", "topic": "foo", "partition": 1}}
KEY_2 = {"type": 2, "data": {"group": "group-id"}}
KEY_3 = {"type": 3, "data": {"groupId": "group"}}
VALUE_0 = {"version": 0, "data": {"offset": 100, "metadata": "metadata", "commitTimestamp": 1234}}
VALUE_1 = {"version": 1, "data": {"offset": 100, "metadata": "metadata", "commitTimestamp": 1234,
                                  "expireTimestamp": 5678}}
VALUE_4 = {"version": 4, "data": {"offset": 100, "leaderEpoch": 10, "metadata": "metadata",
                                  "commitTimestamp": 1234, "topicId": "MKXx1fIkQy2J9jXHhK8m1w"}}
GROUP_VALUE_0 = {"version": 0, "data": {
    "protocolType": "consumer", "generation": 1, "protocol": "range", "leader": "leader",
    "members": [{"memberId": "member-1", "clientId": "client-1", "clientHost": "host-1",
                 "sessionTimeout": 1500, "subscription": "AAE=", "assignment": "AQI="}]}}
CG_VALUE = {"version": 0, "data": {"epoch": 10}}

# (key bytes, value bytes, expected key JSON, expected value JSON): offset commits of both key
# types at value versions 0, 1 and 4, and a classic group's metadata.
COMMITS = [(OFFSET_KEY_0, OFFSET_V0, KEY_0, VALUE_0), (OFFSET_KEY_1, OFFSET_V1, KEY_1, VALUE_1),
           (GROUP_KEY, GROUP_V0, KEY_2, GROUP_VALUE_0), (OFFSET_KEY_1, OFFSET_V4, KEY_1, VALUE_4)]


# ---- helpers ---------------------------------------------------------------------------------

def batch_json(base, *, compression="none", producer_id=-1, producer_epoch=-1,
               transactional=False, control=False) -> dict:
    return {"baseOffset": base, "producerId": producer_id, "producerEpoch": producer_epoch,
            "isTransactional": transactional, "isControl": control, "compression": compression,
            "crcValid": True}


def segment(tmp_path: Path, partition: int, batches: list[bytes], base: int = 0) -> Path:
    directory = tmp_path / f"__consumer_offsets-{partition}"
    directory.mkdir(parents=True, exist_ok=True)
    return Path(write_segment(directory / f"{base:020d}.log", batches))


def run_subprocess(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jobs.cli", "dump", *map(str, args)],
                          capture_output=True, text=True, cwd=PROJECT, timeout=120)


def dump(capsys, *args, in_process_only: bool = False) -> list[dict]:
    """The objects ``offsetlake dump --format jsonl ARGS`` prints, asserted equal both ways
    (``in_process_only`` skips the ~1 s subprocess where another call already compared both)."""
    assert cli.main(["dump", *map(str, args)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    if not in_process_only:
        proc = run_subprocess(*args)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == ""
        assert proc.stdout == captured.out
    return [json.loads(line) for line in captured.out.splitlines()]


def with_crc32c(batch: bytearray) -> bytes:
    """Restamp a magic-2 batch's CRC (bytes 17-21) with kafka-python's CRC-32C."""
    batch[17:21] = kafka_python_crc32c(bytes(batch[21:])).to_bytes(4, "big")
    return bytes(batch)


# ---- every codec x magic ---------------------------------------------------------------------

CODEC_MAGIC = [(m, c) for m in (0, 1, 2) for c in ("none", "gzip", "snappy", "lz4", "zstd")
               if c != "zstd" or m == 2]


@pytest.mark.parametrize("magic,codec", CODEC_MAGIC)
def test_every_codec_and_magic(tmp_path, capsys, magic, codec):
    records = [(key, value, 1000 + i) for i, (key, value, _, _) in enumerate(COMMITS)]
    path = segment(tmp_path, 7, [encode_batch(records, base_offset=10, magic=magic,
                                              compression=codec)], base=10)
    legacy_uncompressed = magic < 2 and codec == "none"     # one message per record
    expected = [{"partition": 7, "offset": 10 + i,
                 "timestamp": -1 if magic == 0 else 1000 + i,
                 "timestampType": "NoTimestampType" if magic == 0 else "CreateTime",
                 "batch": batch_json(10 + i if legacy_uncompressed else 10, compression=codec),
                 "key": key, "value": value}
                for i, (_, _, key, value) in enumerate(COMMITS)]
    assert dump(capsys, path) == expected
    assert dump(capsys, path.parent, in_process_only=True) == expected   # a partition directory
    assert dump(capsys, tmp_path, in_process_only=True) == expected      # a log dir


@pytest.mark.parametrize("magic,codec", [(1, "gzip"), (2, "none"), (2, "lz4")])
def test_log_append_time_stamps_every_record(tmp_path, capsys, magic, codec):
    records = [(CG_KEY, CG_V0, 5), (OFFSET_KEY_1, None, 6)]
    path = segment(tmp_path, 1, [encode_batch(records, base_offset=0, magic=magic,
                                              compression=codec, timestamp_type="LogAppendTime",
                                              log_append_time=99_000)])
    assert dump(capsys, path) == [
        {"partition": 1, "offset": 0, "timestamp": 99_000, "timestampType": "LogAppendTime",
         "batch": batch_json(0, compression=codec), "key": KEY_3, "value": CG_VALUE},
        {"partition": 1, "offset": 1, "timestamp": 99_000, "timestampType": "LogAppendTime",
         "batch": batch_json(0, compression=codec), "key": KEY_1, "value": None}]


# ---- transactions ----------------------------------------------------------------------------

def transactions_segment(tmp_path: Path) -> Path:
    txn = {"producer_id": 4000, "producer_epoch": 2, "is_transactional": True}
    return segment(tmp_path, 3, [
        encode_batch([(OFFSET_KEY_1, OFFSET_V1, 2000)], base_offset=0, **txn),
        encode_control_batch(1, 7, offset=1, producer_id=4000, producer_epoch=2, timestamp=2001),
        encode_batch([(OFFSET_KEY_1, OFFSET_V4, 2002)], base_offset=2, compression="zstd", **txn),
        encode_control_batch(0, 8, offset=3, producer_id=4000, producer_epoch=2, timestamp=2003),
    ])


TXN = {"producer_id": 4000, "producer_epoch": 2, "transactional": True}
TRANSACTIONS = [
    {"partition": 3, "offset": 0, "timestamp": 2000, "timestampType": "CreateTime",
     "batch": batch_json(0, **TXN), "key": KEY_1, "value": VALUE_1},
    {"partition": 3, "offset": 1, "timestamp": 2001, "timestampType": "CreateTime",
     "batch": batch_json(1, control=True, **TXN),
     "control": {"type": "COMMIT", "coordinatorEpoch": 7}},
    {"partition": 3, "offset": 2, "timestamp": 2002, "timestampType": "CreateTime",
     "batch": batch_json(2, compression="zstd", **TXN), "key": KEY_1, "value": VALUE_4},
    {"partition": 3, "offset": 3, "timestamp": 2003, "timestampType": "CreateTime",
     "batch": batch_json(3, control=True, **TXN),
     "control": {"type": "ABORT", "coordinatorEpoch": 8}},
]


def test_transactions_with_both_markers(tmp_path, capsys):
    assert dump(capsys, transactions_segment(tmp_path)) == TRANSACTIONS


# ---- records that cannot be decoded, tombstones ----------------------------------------------

def odd_records_segment(tmp_path: Path) -> Path:
    return segment(tmp_path, 0, [encode_batch([
        (CG_KEY, CG_V0, 10),
        (h("7fff|00"), h("0000"), 11),                 # unknown record type 32767
        (h("0003|0003 666f6f"), h("0001"), 12),        # TV-07: type 3 has no value version 1
        (OFFSET_KEY_1, None, 13),                      # tombstone
        (None, h("0000"), 14),                         # no key at all
        (h("0003|0003 666f6f"), h("0000"), 15),        # TV-06: value truncated
        (h("0003"), h("0000"), 16),                    # TV-05: key truncated
    ], base_offset=0)])


def odd(offset: int, **body) -> dict:
    return {"partition": 0, "offset": offset, "timestamp": 10 + offset,
            "timestampType": "CreateTime", "batch": batch_json(0), **body}


ODD_RECORDS = [
    odd(0, key=KEY_3, value=CG_VALUE),
    odd(1, error={"stage": "key", "reason": "unknown_type", "message": "unknown record type 32767"},
        keyHex="7fff00", valueHex="0000"),
    odd(2, error={"stage": "value", "reason": "unknown_version",
                  "message": "unknown value version 1 for record type 3"},
        keyHex="00030003666f6f", valueHex="0001"),
    odd(3, key=KEY_1, value=None),
    odd(4, error={"stage": "key", "reason": "null_key", "message": "record has a null key"},
        keyHex=None, valueHex="0000"),
    odd(5, error={"stage": "value", "reason": "truncated",
                  "message": "truncated: needed 4 byte(s), only 0 left"},
        keyHex="00030003666f6f", valueHex="0000"),
    odd(6, error={"stage": "key", "reason": "truncated",
                  "message": "truncated: needed 2 byte(s), only 0 left"},
        keyHex="0003", valueHex="0000"),
]


def test_unknown_type_unknown_version_tombstone_null_key(tmp_path, capsys):
    assert dump(capsys, odd_records_segment(tmp_path)) == ODD_RECORDS


# ---- damaged segments: bad CRC, corrupt compression, truncated tail --------------------------

def damaged_segment(tmp_path: Path) -> tuple[Path, list[bytes], int]:
    good = encode_batch([(CG_KEY, CG_V0, 3000)], base_offset=0)
    bad_crc = bytearray(encode_batch([(CG_KEY, CG_V0, 3001)], base_offset=1))
    bad_crc[-3] ^= 0x01                                      # epoch 10 -> 11, CRC left as it was
    gzip_batch = encode_batch([(CG_KEY, CG_V0, 3002)], base_offset=2, compression="gzip")
    corrupt_gzip = bytearray(gzip_batch[:61] + b"not a gzip stream")
    corrupt_gzip[8:12] = (len(corrupt_gzip) - 12).to_bytes(4, "big")
    corrupt_gzip = with_crc32c(corrupt_gzip)                  # valid CRC, undecompressable
    legacy_wrapper = encode_legacy_message_set([(CG_KEY, CG_V0, 3003)], magic=1,
                                               compression="gzip", base_offset=3)
    corrupt_legacy = bytearray(legacy_wrapper[:34] + b"not gzip either")  # wrapper value replaced
    corrupt_legacy[8:12] = (len(corrupt_legacy) - 12).to_bytes(4, "big")
    corrupt_legacy[30:34] = (len(corrupt_legacy) - 34).to_bytes(4, "big")
    corrupt_legacy[12:16] = zlib.crc32(bytes(corrupt_legacy[16:])).to_bytes(4, "big")
    after = encode_batch([(OFFSET_KEY_1, OFFSET_V1, 3004)], base_offset=4)
    tail = encode_batch([(CG_KEY, CG_V0, 3005)], base_offset=5)[:40]
    parts = [good, bytes(bad_crc), corrupt_gzip, bytes(corrupt_legacy), after, tail]
    return segment(tmp_path, 5, parts), parts, \
        kafka_python_crc32c(bytes(bad_crc[21:]))


def test_bad_crc_corrupt_compression_and_truncated_tail(tmp_path, capsys):
    path, parts, computed_crc = damaged_segment(tmp_path)
    position = [sum(len(p) for p in parts[:i]) for i in range(len(parts))]
    stored_crc = int.from_bytes(parts[1][17:21], "big")
    assert stored_crc != computed_crc

    def unreadable(i, offset, stage, reason, message):
        return {"partition": 5, "offset": offset,
                "error": {"stage": stage, "reason": reason, "message": message},
                "file": str(path), "position": position[i], "length": len(parts[i]),
                "rawHex": parts[i].hex(), "rawHexTruncated": False}

    assert dump(capsys, path) == [
        {"partition": 5, "offset": 0, "timestamp": 3000, "timestampType": "CreateTime",
         "batch": batch_json(0), "key": KEY_3, "value": CG_VALUE},
        unreadable(1, 1, "batch", "bad_crc",
                   f"CRC-32C stored {stored_crc:#010x}, computed {computed_crc:#010x} "
                   "(stage=batch, offset=1)"),
        unreadable(2, 2, "batch", "bad_compression",
                   "corrupt gzip payload: Error -3 while decompressing data: incorrect header "
                   "check (stage=batch, offset=2)"),
        unreadable(3, 3, "batch", "bad_compression",
                   "corrupt gzip payload: Error -3 while decompressing data: incorrect header "
                   "check (stage=batch, offset=3)"),
        {"partition": 5, "offset": 4, "timestamp": 3004, "timestampType": "CreateTime",
         "batch": batch_json(4), "key": KEY_1, "value": VALUE_1},
        unreadable(5, None, "segment", "truncated_tail",
                   "40 byte(s) at the end of the file do not form a complete batch"),
    ]


@pytest.mark.parametrize("codec", ["snappy", "lz4", "zstd"])
def test_corrupt_payload_of_every_codec(tmp_path, capsys, codec):
    batch = encode_batch([(CG_KEY, CG_V0, 1)], base_offset=9, compression=codec)
    corrupt = bytearray(batch[:61] + b"definitely not " + codec.encode())
    corrupt[8:12] = (len(corrupt) - 12).to_bytes(4, "big")
    corrupt = with_crc32c(corrupt)
    path = segment(tmp_path, 2, [corrupt], base=9)
    [obj] = dump(capsys, path)
    message = obj["error"].pop("message")      # the codec library's words vary by version
    assert message.startswith(f"corrupt {codec} payload: ") and message.endswith(
        "(stage=batch, offset=9)")
    assert obj == {"partition": 2, "offset": 9, "error": {"stage": "batch",
                                                          "reason": "bad_compression"},
                   "file": str(path), "position": 0, "length": len(corrupt),
                   "rawHex": corrupt.hex(), "rawHexTruncated": False}


# ---- options ---------------------------------------------------------------------------------

def test_text_format(tmp_path, capsys):
    txn = transactions_segment(tmp_path)
    damaged, parts, _ = damaged_segment(tmp_path)
    proc = run_subprocess("--format", "text", txn, odd_records_segment(tmp_path), damaged)
    assert proc.returncode == 0 and proc.stderr == ""
    assert cli.main(["dump", "--format", "text", str(txn), str(tmp_path / "__consumer_offsets-0"),
                     str(damaged)]) == 0
    assert capsys.readouterr().out == proc.stdout
    lines = proc.stdout.splitlines()
    assert lines[:4] == [
        'partition: 3 offset: 0 CreateTime: 2000 key: {"type":1,"data":{"group":"group-id",'
        '"topic":"foo","partition":1}} payload: {"version":1,"data":{"offset":100,'
        '"metadata":"metadata","commitTimestamp":1234,"expireTimestamp":5678}}',
        "partition: 3 offset: 1 CreateTime: 2001 endTxnMarker: COMMIT coordinatorEpoch: 7",
        'partition: 3 offset: 2 CreateTime: 2002 key: {"type":1,"data":{"group":"group-id",'
        '"topic":"foo","partition":1}} payload: {"version":4,"data":{"offset":100,'
        '"leaderEpoch":10,"metadata":"metadata","commitTimestamp":1234,'
        '"topicId":"MKXx1fIkQy2J9jXHhK8m1w"}}',
        "partition: 3 offset: 3 CreateTime: 2003 endTxnMarker: ABORT coordinatorEpoch: 8"]
    assert lines[4:8] == [
        'partition: 0 offset: 0 CreateTime: 10 key: {"type":3,"data":{"groupId":"group"}} '
        'payload: {"version":0,"data":{"epoch":10}}',
        "partition: 0 offset: 1 ERROR key/unknown_type: unknown record type 32767",
        "partition: 0 offset: 2 ERROR value/unknown_version: unknown value version 1 for record type 3",
        'partition: 0 offset: 3 CreateTime: 13 key: {"type":1,"data":{"group":"group-id",'
        '"topic":"foo","partition":1}} payload: <DELETE>']
    assert lines[-1] == ("partition: 5 offset: None ERROR segment/truncated_tail: "
                         "40 byte(s) at the end of the file do not form a complete batch")
    assert len(lines) == 4 + len(ODD_RECORDS) + 6


def test_multiple_paths_print_in_the_order_given(tmp_path, capsys):
    txn, odd_path = transactions_segment(tmp_path), odd_records_segment(tmp_path)
    assert dump(capsys, odd_path, txn) == ODD_RECORDS + TRANSACTIONS
    assert dump(capsys, txn, odd_path) == TRANSACTIONS + ODD_RECORDS
    assert dump(capsys, tmp_path) == ODD_RECORDS + TRANSACTIONS     # log dir: by partition


def test_group_filter(tmp_path, capsys):
    txn, odd_path = transactions_segment(tmp_path), odd_records_segment(tmp_path)
    assert dump(capsys, "--group", "group", odd_path, txn) == [ODD_RECORDS[0]]
    # A record whose value fails still belongs to the group its key names.
    assert dump(capsys, "--group", "foo", odd_path) == [ODD_RECORDS[2], ODD_RECORDS[5]]
    assert dump(capsys, odd_path, txn, "--group", "group-id", "--group", "group") == \
        [ODD_RECORDS[0], ODD_RECORDS[3], TRANSACTIONS[0], TRANSACTIONS[2]]
    assert dump(capsys, "--group", "nobody", odd_path, txn) == []


def test_type_filter(tmp_path, capsys):
    txn, odd_path = transactions_segment(tmp_path), odd_records_segment(tmp_path)
    assert dump(capsys, "--type", "1", odd_path, txn) == \
        [ODD_RECORDS[3], TRANSACTIONS[0], TRANSACTIONS[2]]
    assert dump(capsys, "--type", "3", odd_path) == [ODD_RECORDS[i] for i in (0, 2, 5, 6)]
    assert dump(capsys, "--type", "32767", odd_path) == [ODD_RECORDS[1]]
    assert dump(capsys, "--type", "3", "--group", "group", odd_path) == [ODD_RECORDS[0]]


def test_filters_keep_unreadable_batches(tmp_path, capsys):
    path, parts, _ = damaged_segment(tmp_path)
    objects = dump(capsys, "--group", "nobody", path)
    assert [(o["offset"], o["error"]["reason"]) for o in objects] == [
        (1, "bad_crc"), (2, "bad_compression"), (3, "bad_compression"), (None, "truncated_tail")]


def test_missing_path_exits_3_with_a_clear_message(tmp_path, capsys):
    txn = transactions_segment(tmp_path)
    missing = tmp_path / "no-such-dir"
    proc = run_subprocess(txn, missing)
    assert proc.returncode == 3 and proc.stdout == ""
    assert proc.stderr == f"offsetlake dump: {missing}: no such file or directory\n"
    assert cli.main(["dump", str(txn), str(missing)]) == 3
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == proc.stderr


def test_broken_pipe_exits_0_without_a_traceback(tmp_path):
    records = [(OFFSET_KEY_1, OFFSET_V4, i) for i in range(5000)]     # ~1.3 MB of JSON lines
    path = segment(tmp_path, 0, [encode_batch(records, base_offset=0, compression="gzip")])
    with subprocess.Popen([sys.executable, "-m", "jobs.cli", "dump", str(path)], cwd=PROJECT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        first = proc.stdout.readline()
        proc.stdout.close()                                     # like `| head -1`
        stderr = proc.stderr.read()
        assert proc.wait(timeout=60) == 0
    assert json.loads(first)["offset"] == 0
    assert stderr == b""


def test_broken_pipe_in_process(tmp_path, monkeypatch):
    class ClosedPipe:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert cli.main(["dump", str(transactions_segment(tmp_path))]) == 0


# ---- the reference's DumpLogSegments vectors, byte for byte ----------------------------------

NO_PRODUCER = "ffffffffffffffff|ffffffffffffffff|ffffffffffffffff|ffff|ffffffff"
TV14 = h("0000000000000000|00000048|ffffffff|02|894e6646|0000|00000000|", NO_PRODUCER, "|00000001|",
         "2c|00|00|00|12|0003000567726f7570|0e|00000000000a00|00")
TV15 = h("000000000000000000000041ffffffff0209c869e7000000000000ffffffffffffffffffffffffffffffffffffff"
         "ffffffffffffffffffffff000000011e000000120003000567726f75700100")
# TV-16 gives only the record (key 7fff, value of 0 bytes); header fields as TV-14, CRC-32C
# 0x4ccb24dd computed with kafka-python's implementation.
TV16 = h("0000000000000000|0000003a|ffffffff|02|4ccb24dd|0000|00000000|", NO_PRODUCER, "|00000001|",
         "10|00|00|00|04|7fff|00|00")
SUB_V3 = ("0003|00000001|0003666f6f|ffffffff|00000001|0003666f6f|00000001|00000000|00000000|"
          "00047261636b")                                       # 42 bytes
ASSIGN_V3 = "0003|00000001|0003666f6f|00000001|00000000|ffffffff"   # 23 bytes
TV17_MEMBER_HEAD = ("0004|09 636f6e73756d6572|0000000a|06 72616e6765|07 6d656d626572|"
                    "ffffffffffffffff|02|07 6d656d626572|09 696e7374616e6365|07 636c69656e74|"
                    "05 686f7374|000003e8|00000064|")
TV17 = h("0000000000000000|000000d1|ffffffff|02|e7b1be12|0000|00000000|", NO_PRODUCER, "|00000001|",
         "bc02|00|00|00|12|0002000567726f7570|9c02|", TV17_MEMBER_HEAD, "2b|", SUB_V3, "|18|",
         ASSIGN_V3, "|00|00|00")
TV17_OPAQUE = h("0000000000000000|000000a6|ffffffff|02|b3f8c9ef|0000|00000000|", NO_PRODUCER,
                "|00000001|e601|00|00|00|12|0002000567726f7570|c601|", TV17_MEMBER_HEAD,
                "0d|537562736372697074696f6e|0b|41737369676e6d656e74|00|00|00")
TV18_VALUE = "0000|01|01|01|01|01|01|ffffffff|01|00"
TV18 = h("0000000000000000|0000004f|ffffffff|02|4d9b28d0|0000|00000000|", NO_PRODUCER, "|00000001|",
         "3a|00|00|00|12|0003000567726f7570|1c|", TV18_VALUE, "|00")
TV20 = h("0000000000000000|00000042|ffffffff|02|68b2f7f0|0030|00000000|00000000000003e8|",
         "00000000000003e8|0000000000018013|0063|ffffffff|00000001|",
         "20|00|00|00|08|00000001|0c|000000000064|00")

TV17_PAYLOAD = (
    '{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",'
    '"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",'
    '"groupInstanceId":"instance","clientId":"client","clientHost":"host","rebalanceTimeout":1000,'
    '"sessionTimeout":100,"subscription":{"topics":["foo"],"userData":null,"ownedPartitions":'
    '[{"topic":"foo","partitions":[0]}],"generationId":0,"rackId":"rack"},"assignment":'
    '{"assignedPartitions":[{"topic":"foo","partitions":[0]}],"userData":null}}]}}')


def as_kafka_dump_log(obj: dict) -> tuple[str, str]:
    """(key, payload) as kafka-dump-log prints them: type/version as strings, <DELETE>."""
    key = json.dumps({"type": str(obj["key"]["type"]), "data": obj["key"]["data"]},
                     separators=(",", ":"), ensure_ascii=False)
    if obj["value"] is None:
        return key, "<DELETE>"
    return key, json.dumps({"version": str(obj["value"]["version"]), "data": obj["value"]["data"]},
                           separators=(",", ":"), ensure_ascii=False)


def dump_vector(tmp_path: Path, capsys, data: bytes) -> dict:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    [obj] = dump(capsys, path)
    return obj


def test_batch_vectors_are_well_formed():
    for vector in (TV14, TV15, TV16, TV17, TV17_OPAQUE, TV18, TV20):
        assert int.from_bytes(vector[8:12], "big") + 12 == len(vector)
        assert kafka_python_crc32c(vector[21:]) == int.from_bytes(vector[17:21], "big")
    assert len(h(SUB_V3)) == 42 and len(h(ASSIGN_V3)) == 23


def test_tv14_type3_record(tmp_path, capsys):
    obj = dump_vector(tmp_path, capsys, TV14)
    assert as_kafka_dump_log(obj) == ('{"type":"3","data":{"groupId":"group"}}',
                                      '{"version":"0","data":{"epoch":10}}')
    assert obj == {"partition": None, "offset": 0, "timestamp": -1, "timestampType": "CreateTime",
                   "batch": batch_json(0), "key": KEY_3, "value": CG_VALUE}


def test_tv15_tombstone(tmp_path, capsys):
    obj = dump_vector(tmp_path, capsys, TV15)
    assert as_kafka_dump_log(obj) == ('{"type":"3","data":{"groupId":"group"}}', "<DELETE>")
    assert obj["value"] is None


def test_tv16_unknown_type(tmp_path, capsys):
    # kafka-dump-log: "Unknown record type 32767 at offset 0, skipping."
    assert dump_vector(tmp_path, capsys, TV16) == {
        "partition": None, "offset": 0, "timestamp": -1, "timestampType": "CreateTime",
        "batch": batch_json(0),
        "error": {"stage": "key", "reason": "unknown_type", "message": "unknown record type 32767"},
        "keyHex": "7fff", "valueHex": ""}


def test_tv17_embedded_consumer_protocol(tmp_path, capsys):
    obj = dump_vector(tmp_path, capsys, TV17)
    assert as_kafka_dump_log(obj) == ('{"type":"2","data":{"group":"group"}}', TV17_PAYLOAD)


def test_tv17_unparseable_blobs_stay_base64(tmp_path, capsys):
    obj = dump_vector(tmp_path, capsys, TV17_OPAQUE)
    opaque = (TV17_PAYLOAD.split('"subscription":')[0]
              + '"subscription":"U3Vic2NyaXB0aW9u","assignment":"QXNzaWdubWVudA=="}]}}')
    assert as_kafka_dump_log(obj) == ('{"type":"2","data":{"group":"group"}}', opaque)


def test_tv18_decode_error(tmp_path, capsys):
    # kafka-dump-log: "Error at offset 0, skipping. Could not read record with version 0 from
    # value's buffer due to: Error reading byte array of 536870911 byte(s): only 1 byte(s)
    # available." -- the same numbers in our words.
    assert dump_vector(tmp_path, capsys, TV18) == {
        "partition": None, "offset": 0, "timestamp": -1, "timestampType": "CreateTime",
        "batch": batch_json(0),
        "error": {"stage": "value", "reason": "truncated",
                  "message": "truncated: needed 536870911 byte(s), only 1 left"},
        "keyHex": "0003000567726f7570", "valueHex": h(TV18_VALUE).hex()}


def test_tv20_commit_marker(tmp_path, capsys):
    assert dump_vector(tmp_path, capsys, TV20) == {
        "partition": None, "offset": 0, "timestamp": 1000, "timestampType": "CreateTime",
        "batch": batch_json(0, producer_id=98323, producer_epoch=99, transactional=True,
                            control=True),
        "control": {"type": "COMMIT", "coordinatorEpoch": 100}}


# ---- decoder bug found by the cross-check with a real broker ---------------------------------

# A KIP-848 member record exactly as Kafka 4.3.1 wrote it for an rdkafka consumer (group
# "consumer-protocol-group", member "oXYqyvfURYuhDuNFvWNM1Q"). Its tag section is `01 | 00 01 | 00`:
# tag 0 (ClassicMemberMetadata), size 1, presence varint 0 = null. Kafka's generated code reads
# a tagged nullable struct with readUnsignedVarint() > 0 (0 = null, 1 = present) and, because the
# field's default is an *empty* ClassicMemberMetadata rather than null, writes an explicit null
# this way; its JSON converter then prints "classicMemberMetadata":null (from
# `kafka-dump-log --offsets-decoder` on the broker's own segment).
KIP848_MEMBER_KEY = h("0005|0017 636f6e73756d65722d70726f746f636f6c2d67726f7570|"
                      "0016 6f585971797666555259756844754e4676574e4d3151")
KIP848_MEMBER_VALUE = h("0000|00|00|08 72646b61666b61|0b 2f3132372e302e302e31|02 07 6f7264657273|01|"
                        "000493e0|00|01 00 01 00")


def test_type5_with_explicit_null_classic_member_metadata(tmp_path, capsys):
    path = segment(tmp_path, 2, [encode_batch([(KIP848_MEMBER_KEY, KIP848_MEMBER_VALUE, 7)],
                                              base_offset=0)])
    [obj] = dump(capsys, path)
    assert "error" not in obj, obj["error"]
    assert as_kafka_dump_log(obj) == (
        '{"type":"5","data":{"groupId":"consumer-protocol-group","memberId":"oXYqyvfURYuhDuNFvWNM1Q"}}',
        '{"version":"0","data":{"instanceId":null,"rackId":null,"clientId":"rdkafka",'
        '"clientHost":"/127.0.0.1","subscribedTopicNames":["orders"],"subscribedTopicRegex":"",'
        '"rebalanceTimeoutMs":300000,"serverAssignor":null,"classicMemberMetadata":null}}')


# ---- several worker processes: the same bytes as one ------------------------------------------

@pytest.mark.parametrize("extra", [("--format", "jsonl"), ("--format", "text"), ("--type", "1"),
                                   ("--group", "wl-classic-ck")])
def test_workers_write_the_same_bytes_as_one_process(tmp_path, extra):
    """The sample's three partitions, one with a corrupted batch length in the middle (so one
    segment resynchronises and reports recovered records), dumped by 1, 2 and 3 processes."""
    from tests.faults.snapshots import copy_sample, set_length

    snapshot = copy_sample(tmp_path)
    set_length(snapshot, 2, 10, lambda n: n + 10)
    outputs = {n: run_subprocess("--workers", n, *extra, snapshot) for n in (1, 2, 3)}
    for proc in outputs.values():
        assert proc.returncode == 0, proc.stderr
    assert outputs[1].stdout and outputs[1].stdout == outputs[2].stdout == outputs[3].stdout
    assert outputs[1].stderr == outputs[2].stderr == outputs[3].stderr
    if extra[0] == "--format":
        assert "recovered by resynchronising" in outputs[2].stderr


def test_workers_must_be_positive(capsys):
    assert cli.main(["dump", "--workers", "0", "samples/kafka-4.3.1"]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err

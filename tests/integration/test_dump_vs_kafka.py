"""Issue #6, cross-check 1: ``offsetlake dump`` equals Kafka's own ``kafka-dump-log.sh
--offsets-decoder`` (``org.apache.kafka.tools.DumpLogSegments``, run from the same jars as the broker)
record by record.

Two sources of segments:

* what a real Kafka 4.3.1 broker wrote to ``__consumer_offsets`` for the ``coordinator_activity``
  fixture (classic group, committed and aborted transactional offset commits, a KIP-848 group);
* our encoder's fixtures from ``tests/test_dump.py`` (every codec x magic 0/1/2, both transaction
  markers, tombstones, unknown type and version, the reference's TV-14..TV-20 batches).

Kafka prints ``| offset: O ... key: {"type":"3",...} payload: {"version":"0",...}`` (type and
version as JSON strings, ``<DELETE>`` for a tombstone), ``endTxnMarker: COMMIT coordinatorEpoch: N``
for a marker, ``Unknown record type T at offset O, skipping.`` and ``Error at offset O, skipping.
<why>`` in the key position. Both sides are normalised to the tuples of :func:`kafka_entries`.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from jobs import cli
from tests import test_dump as fx

from .kafka_broker import DUMP_LOG_SEGMENTS, KafkaHarnessError, PROJECT_ROOT, snapshot_log_dirs

pytestmark = pytest.mark.integration

_DECODER = json.JSONDecoder()


# ---- parsing kafka-dump-log ------------------------------------------------------------------

_BOOL = {"true": True, "false": False}


def _batch_meta(line: str) -> tuple:
    """(baseOffset, producerId, producerEpoch, isTransactional, isControl, codec, crc valid) of a
    magic-2 batch line; ("legacy", codec, crc valid) of a magic 0/1 entry line (whose "offset" is
    the wrapper's last offset, so it is not compared)."""
    field = dict(re.findall(r"(\w+): (\S+)", line))
    if line.startswith("offset: "):
        return ("legacy", field["compresscodec"], _BOOL[field["isvalid"]])
    return (int(field["baseOffset"]), int(field["producerId"]), int(field["producerEpoch"]),
            _BOOL[field["isTransactional"]], _BOOL[field["isControl"]], field["compresscodec"],
            _BOOL[field["isvalid"]])


def _record_entry(line: str, batch: tuple) -> tuple:
    """(kind, offset, (timestampType, timestamp, batch), details...) of one ``| offset:`` line."""
    match = re.match(r"\| offset: (-?\d+) (CreateTime|LogAppendTime|NoTimestampType): (-?\d+) ", line)
    offset, meta = int(match.group(1)), (match.group(2), int(match.group(3)), batch)
    marker = re.search(r" endTxnMarker: (\w+) coordinatorEpoch: (-?\d+)$", line)
    if marker:
        return ("marker", offset, meta, marker.group(1), int(marker.group(2)))
    rest = line[line.index(" key: ") + len(" key: "):]
    if rest.startswith("Unknown record type "):
        return ("unknown", offset, meta, int(rest.split()[3]))
    if rest.startswith("Error at offset "):
        return ("error", offset, meta)
    key, end = _DECODER.raw_decode(rest)
    assert rest[end:].startswith(" payload: "), line
    payload = rest[end + len(" payload: "):]
    key = {"type": int(key["type"]), "data": key["data"]}   # Kafka prints the type as a string
    if payload == "<DELETE>":
        return ("record", offset, meta, key, None)
    value = json.loads(payload)
    return ("record", offset, meta, key, {"version": int(value["version"]), "data": value["data"]})


def kafka_entries(stdout: str) -> dict[str, list[tuple]]:
    """{segment path: [entry, ...]} from DumpLogSegments --offsets-decoder output."""
    files: dict[str, list[tuple]] = {}
    current: list[tuple] = []
    batch: tuple = ()
    for line in stdout.splitlines():
        if line.startswith("Dumping "):
            current = files.setdefault(line[len("Dumping "):], [])
        elif line.startswith(("baseOffset: ", "offset: ")):
            batch = _batch_meta(line)
        elif line.startswith("| offset: "):
            current.append(_record_entry(line, batch))
        elif match := re.match(r"Found (\d+) invalid bytes at the end of ", line):
            current.append(("tail", int(match.group(1))))
    return files


def run_kafka_dump_log(broker, files: list[Path]) -> dict[str, list[tuple]]:
    result = broker.run_tool(DUMP_LOG_SEGMENTS, "--offsets-decoder", "--files",
                             ",".join(str(f) for f in files))
    entries = kafka_entries(result.stdout)
    assert sorted(entries) == sorted(str(f) for f in files), result.stdout[-2000:]
    return entries


# ---- our side --------------------------------------------------------------------------------

def offsetlake_dump(*args) -> list[dict]:
    """``offsetlake dump ARGS`` through the CLI entry point, stdout parsed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["dump", *map(str, args)]) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def our_entry(obj: dict) -> tuple:
    """The same tuple as :func:`_record_entry` for one object ``dump`` printed."""
    if "error" in obj and "batch" not in obj:           # a batch or the tail could not be read
        if obj["error"]["reason"] == "truncated_tail":
            return ("tail", obj["length"])
        return ("unreadable", obj["offset"], obj["error"]["reason"], obj["error"]["message"])
    b = obj["batch"]
    meta = (obj["timestampType"], obj["timestamp"],
            (b["baseOffset"], b["producerId"], b["producerEpoch"], b["isTransactional"],
             b["isControl"], b["compression"], b["crcValid"]))
    if "control" in obj:
        return ("marker", obj["offset"], meta, obj["control"]["type"],
                obj["control"]["coordinatorEpoch"])
    if "key" in obj:
        return ("record", obj["offset"], meta, obj["key"], obj["value"])
    if obj["error"]["reason"] == "unknown_type":
        return ("unknown", obj["offset"], meta,
                int.from_bytes(bytes.fromhex(obj["keyHex"])[:2], "big", signed=True))
    return ("error", obj["offset"], meta)


def _as_kafka_sees_legacy(kafka: tuple, ours: tuple) -> tuple:
    """Kafka shows no batch fields but the codec and validity for a legacy entry: compare those."""
    if len(kafka) > 2 and len(ours) > 2 and isinstance(ours[2], tuple) and kafka[2][2] \
            and kafka[2][2][0] == "legacy":
        ts_type, ts, batch = ours[2]
        return ours[:2] + ((ts_type, ts, ("legacy", batch[5], batch[6])),) + ours[3:]
    return ours


def _kind(entry: tuple) -> str:
    if entry[0] == "record":
        return f"type {entry[3]['type']}" + (" tombstone" if entry[4] is None else "")
    if entry[0] == "marker":
        return f"{entry[3]} marker"
    return entry[0]


def differences(kafka: dict[str, list[tuple]], ours: dict[str, list[tuple]]) -> list[str]:
    """Record-by-record differences, each naming the file, the record kind and both sides."""
    found = []
    for path, theirs in kafka.items():
        mine = ours[path]
        mine = [_as_kafka_sees_legacy(k, o) for k, o in zip(theirs, mine)] + mine[len(theirs):]
        found += [f"{path} [{_kind(k)}]\n  kafka: {k}\n  ours:  {o}"
                  for k, o in zip(theirs, mine) if k != o]
        if len(theirs) != len(mine):
            found.append(f"{path}: {len(theirs)} entries from kafka-dump-log, {len(mine)} from dump")
    return found


def assert_same(kafka: dict[str, list[tuple]], ours: dict[str, list[tuple]]) -> None:
    found = differences(kafka, ours)
    kinds = Counter(line.split("[", 1)[1].split("]")[0] for line in found if "[" in line)
    assert not found, (f"{len(found)} difference(s), by record kind {dict(kinds)}:\n"
                       + "\n".join(found[:20]))


def assert_dump_equals_dump_log_segments(broker, snapshot: Path) -> Counter:
    """``offsetlake dump`` of every segment of ``snapshot`` (its ``__consumer_offsets-N``
    directories) equals the broker release's DumpLogSegments; returns the record kinds it holds."""
    files = sorted(log for d in snapshot.iterdir() for log in sorted(d.glob("*.log")))
    kafka = run_kafka_dump_log(broker, files)
    assert_same(kafka, {str(f): [our_entry(o) for o in offsetlake_dump(f)] for f in files})
    return Counter(_kind(e) for entries in kafka.values() for e in entries)


# ---- a real broker's segments ----------------------------------------------------------------

@pytest.fixture(scope="module")
def broker_segments(kafka_broker, coordinator_activity, tmp_path_factory) -> list[Path]:
    """A copy of the broker's __consumer_offsets-* directories, after the fixture's activity."""
    dest = tmp_path_factory.mktemp("dump-vs-kafka")
    dirs = snapshot_log_dirs(kafka_broker, dest)
    return sorted(log for d in dirs for log in sorted(d.glob("*.log")))


@pytest.fixture(scope="module")
def broker_comparison(kafka_broker, broker_segments):
    kafka = run_kafka_dump_log(kafka_broker, broker_segments)
    ours = {str(f): [our_entry(o) for o in offsetlake_dump(f)] for f in broker_segments}
    return kafka, ours


def test_dump_equals_kafka_dump_log_on_a_real_broker(broker_comparison, coordinator_activity):
    kafka, ours = broker_comparison
    produced = Counter(_kind(e) for entries in kafka.values() for e in entries)
    print("\nrecord kinds the broker wrote (per kafka-dump-log):",
          ", ".join(f"{k}: {n}" for k, n in sorted(produced.items())))
    expected = {"type 1", "type 2", "COMMIT marker", "ABORT marker"}
    if coordinator_activity.consumer_protocol_group:
        expected |= {"type 3", "type 5", "type 6", "type 7", "type 8"}
    assert expected <= set(produced), f"the broker did not write {expected - set(produced)}"
    assert_same(kafka, ours)


def test_cli_subprocess_on_the_whole_log_dir(broker_segments, broker_comparison):
    log_dir = broker_segments[0].parent.parent
    proc = subprocess.run([sys.executable, "-m", "jobs.cli", "dump", str(log_dir)],
                          capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=120)
    assert proc.returncode == 0 and proc.stderr == ""
    _, ours = broker_comparison
    assert [our_entry(json.loads(line)) for line in proc.stdout.splitlines()] == \
        [e for f in broker_segments for e in ours[str(f)]]


# ---- our encoder's fixtures ------------------------------------------------------------------

def encoder_fixtures(root: Path) -> list[Path]:
    """Every fixture of tests/test_dump.py that kafka-dump-log can read to the end (it aborts on
    a record without a key and on a corrupt compressed batch: see the test below)."""
    files = []
    for magic, codec in fx.CODEC_MAGIC:
        records = [(key, value, 1000 + i) for i, (key, value, _, _) in enumerate(fx.COMMITS)]
        files.append(fx.segment(root / f"m{magic}-{codec}", 7, [fx.encode_batch(
            records, base_offset=10, magic=magic, compression=codec)], base=10))
    for magic, codec in ((1, "gzip"), (2, "lz4")):
        files.append(fx.segment(root / f"append-{magic}", 1, [fx.encode_batch(
            [(fx.CG_KEY, fx.CG_V0, 5), (fx.OFFSET_KEY_1, None, 6)], base_offset=0, magic=magic,
            compression=codec, timestamp_type="LogAppendTime", log_append_time=99_000)]))
    files.append(fx.transactions_segment(root / "txn"))
    files.append(fx.segment(root / "odd", 0, [fx.encode_batch([
        (fx.CG_KEY, fx.CG_V0, 10), (bytes.fromhex("7fff00"), bytes.fromhex("0000"), 11),
        (bytes.fromhex("00030003666f6f"), bytes.fromhex("0001"), 12), (fx.OFFSET_KEY_1, None, 13),
        (bytes.fromhex("00030003666f6f"), bytes.fromhex("0000"), 14)], base_offset=0)]))
    for name in ("TV14", "TV15", "TV16", "TV17", "TV17_OPAQUE", "TV18", "TV20"):
        directory = root / name / "__consumer_offsets-0"
        directory.mkdir(parents=True)
        (directory / "00000000000000000000.log").write_bytes(getattr(fx, name))
        files.append(directory / "00000000000000000000.log")
    return files


def test_dump_equals_kafka_dump_log_on_encoder_fixtures(kafka_broker, tmp_path):
    files = encoder_fixtures(tmp_path)
    kafka = run_kafka_dump_log(kafka_broker, files)
    assert all(kafka.values()), "kafka-dump-log printed no record for some file"
    assert_same(kafka, {str(f): [our_entry(o) for o in offsetlake_dump(f)] for f in files})


def test_where_kafka_dump_log_gives_up_dump_reports_and_goes_on(kafka_broker, tmp_path):
    odd = fx.odd_records_segment(tmp_path)                  # offset 4 has no key
    with pytest.raises(KafkaHarnessError, match="message had a missing key"):
        kafka_broker.run_tool(DUMP_LOG_SEGMENTS, "--offsets-decoder", "--files", str(odd))
    assert [o["offset"] for o in offsetlake_dump(odd)] == list(range(7))

    damaged, _, _ = fx.damaged_segment(tmp_path)            # bad CRC, corrupt gzip, tail
    with pytest.raises(KafkaHarnessError, match="Not in GZIP format"):
        kafka_broker.run_tool(DUMP_LOG_SEGMENTS, "--offsets-decoder", "--files", str(damaged))
    assert [(o["offset"], o.get("error", {}).get("reason")) for o in offsetlake_dump(damaged)] == [
        (0, None), (1, "bad_crc"), (2, "bad_compression"), (3, "bad_compression"), (4, None),
        (None, "truncated_tail")]

"""``offsetlake dump``: every record of segment files as JSON lines (or text), no Spark.

It replaces ``kafka-dump-log.sh --offsets-decoder`` for ``__consumer_offsets`` and is never locked
to a Kafka release: keys and values use Kafka's own JSON shape (``{"type":N,"data":{..}}`` and
``{"version":V,"data":{..}}``), control records show their marker, and whatever cannot be read is
printed with its reason and raw bytes instead of being skipped.
"""

from __future__ import annotations

import argparse
import sys
from typing import Iterator

from decoders import UnknownRecord, decode_record
from decoders.errors import DecodeError
from decoders.kafka_json import dumps, key_json, value_json
from decoders.log import BatchError, RecordBatch, TruncatedTail, iter_segment, list_segments

CONTROL_TYPES = {0: "ABORT", 1: "COMMIT"}
RAW_HEX_LIMIT = 4096


def _batch_json(batch: RecordBatch) -> dict:
    return {"baseOffset": batch.base_offset, "producerId": batch.producer_id,
            "producerEpoch": batch.producer_epoch, "isTransactional": batch.is_transactional,
            "isControl": batch.is_control, "compression": batch.compression,
            "crcValid": batch.crc_valid}


def _hex(data: bytes | None) -> str | None:
    return None if data is None else data.hex()


def record_objects(partition, batch: RecordBatch) -> Iterator[tuple[dict, object]]:
    """(JSON object, decoded record or None) for each record of a batch."""
    for record in batch.records:
        head = {"partition": partition, "offset": record.offset, "timestamp": record.timestamp,
                "timestampType": batch.timestamp_type, "batch": _batch_json(batch)}
        if batch.is_control:
            head["control"] = {"type": CONTROL_TYPES.get(record.control_type, record.control_type),
                               "coordinatorEpoch": record.coordinator_epoch}
            yield head, None
            continue
        try:
            decoded = decode_record(record.key, record.value)
        except DecodeError as exc:
            head["error"] = {"stage": exc.stage, "reason": exc.reason, "message": exc.message}
            head.update(keyHex=_hex(record.key), valueHex=_hex(record.value))
            yield head, None
            continue
        if isinstance(decoded, UnknownRecord):
            head["error"] = {"stage": "key", "reason": "unknown_type",
                             "message": f"unknown record type {decoded.record_type}"}
            head.update(keyHex=_hex(record.key), valueHex=_hex(record.value))
            yield head, decoded
            continue
        head["key"] = key_json(decoded)
        head["value"] = value_json(decoded)
        yield head, decoded


def _unreadable_object(partition, path, item) -> dict:
    is_tail = isinstance(item, TruncatedTail)
    raw = item.raw[:RAW_HEX_LIMIT] if item.raw else b""
    return {"partition": partition, "offset": None if is_tail else item.base_offset,
            "error": {"stage": "segment" if is_tail else "batch",
                      "reason": "truncated_tail" if is_tail else item.reason,
                      "message": (f"{item.length} byte(s) at the end do not form a complete batch"
                                  if is_tail else item.message)},
            "file": str(path), "position": item.file_position, "length": item.length,
            "rawHex": raw.hex(), "rawHexTruncated": item.length > len(raw)}


def _group_of(decoded) -> str | None:
    key = getattr(decoded, "key", None) or {}
    return key.get("groupId", key.get("group"))


def dump_objects(paths: list[str], groups=None, types=None) -> Iterator[dict]:
    """Every object ``dump`` prints, in file and log order, after the --group/--type filters."""
    for seg in list_segments(paths):
        for item in iter_segment(seg.path):
            if not isinstance(item, RecordBatch):
                if not groups and not types:
                    yield _unreadable_object(seg.partition, seg.path, item)
                continue
            for obj, decoded in record_objects(seg.partition, item):
                if types and (decoded is None or decoded.record_type not in types):
                    continue
                if groups and (decoded is None or _group_of(decoded) not in groups):
                    continue
                yield obj


def text_line(obj: dict) -> str:
    """One readable line, in the spirit of kafka-dump-log's record lines."""
    where = f"partition: {obj['partition']} offset: {obj['offset']}"
    if "error" in obj:
        err = obj["error"]
        return f"{where} ERROR {err['stage']}/{err['reason']}: {err['message']}"
    head = f"{where} {obj['timestampType']}: {obj['timestamp']}"
    if "control" in obj:
        c = obj["control"]
        return f"{head} endTxnMarker: {c['type']} coordinatorEpoch: {c['coordinatorEpoch']}"
    payload = "<DELETE>" if obj["value"] is None else dumps(obj["value"])
    return f"{head} key: {dumps(obj['key'])} payload: {payload}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="a .log segment, a __consumer_offsets-N directory, or a broker log dir")
    parser.add_argument("--format", choices=("jsonl", "text"), default="jsonl",
                        help="jsonl: one JSON object per record (default); text: one line per record")
    parser.add_argument("--group", action="append", metavar="G",
                        help="only records of this group id (repeatable)")
    parser.add_argument("--type", action="append", type=int, metavar="N",
                        help="only records of this record type id, e.g. 1 for offset commits (repeatable)")


def run(args: argparse.Namespace) -> int:
    import errno
    import os

    for p in args.paths:
        if not os.path.exists(p):
            print(f"offsetlake dump: {p}: no such file or directory", file=sys.stderr)
            return 2
    render = dumps if args.format == "jsonl" else text_line
    out = sys.stdout
    try:
        for obj in dump_objects(args.paths, set(args.group or ()), set(args.type or ())):
            out.write(render(obj))
            out.write("\n")
    except BrokenPipeError:  # `offsetlake dump ... | head` is normal use
        sys.stderr.close()
        return 0
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            return 0
        raise
    return 0

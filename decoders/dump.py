"""What ``offsetlake dump`` prints: every record of segment files as Kafka-shaped JSON objects.

It replaces ``kafka-dump-log.sh --offsets-decoder`` for ``__consumer_offsets`` and is never locked
to a Kafka release: keys and values use Kafka's own JSON shape (``{"type":N,"data":{..}}`` and
``{"version":V,"data":{..}}``), control records show their marker, and whatever cannot be read is
printed with its reason and raw bytes instead of being skipped. Output shapes: ``docs/dump.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from decoders import UnknownRecord, decode_record
from decoders.codec import decode_key, key_group_id
from decoders.errors import DecodeError
from decoders.kafka_json import batch_json, dumps, key_json, value_json
from decoders.log import (CONTROL_TYPE_NAMES, BatchError, LogRecord, RecordBatch, SegmentFile,
                          TruncatedTail, iter_segment, list_segments)

RAW_HEX_LIMIT = 4096


def _hex(data: bytes | None) -> str | None:
    return None if data is None else data.hex()


def _record_error(record: LogRecord, stage: str, reason: str, message: str) -> dict:
    return {"error": {"stage": stage, "reason": reason, "message": message},
            "keyHex": _hex(record.key), "valueHex": _hex(record.value)}


def _key_facts(key: bytes) -> tuple[int | None, str | None]:
    """(record type, group) of a record whose value failed to decode, as far as the key tells."""
    try:
        _, record_type, fields, _ = decode_key(key)
    except DecodeError:
        return (int.from_bytes(key[:2], "big", signed=True) if len(key) >= 2 else None), None
    return record_type, key_group_id(fields)


def describe_record(record: LogRecord) -> tuple[dict, int | None, str | None]:
    """The key/value (or error) part of a data record's object, with its type and group."""
    if record.key is None:
        return _record_error(record, "key", "null_key", "record has a null key"), None, None
    try:
        decoded = decode_record(record.key, record.value)
    except DecodeError as exc:
        record_type, group = _key_facts(record.key)
        return (_record_error(record, exc.stage or "record", exc.reason, exc.message),
                record_type, group)
    if isinstance(decoded, UnknownRecord):
        message = f"unknown record type {decoded.record_type}"
        return _record_error(record, "key", "unknown_type", message), decoded.record_type, None
    return ({"key": key_json(decoded), "value": value_json(decoded)}, decoded.record_type,
            key_group_id(decoded.key))


def record_objects(partition, batch: RecordBatch) -> Iterator[tuple[dict, int | None, str | None]]:
    """(JSON object, record type, group) for each record of a batch; type and group are None
    for control records and for records whose key cannot be read."""
    for record in batch.records:
        obj = {"partition": partition, "offset": record.offset, "timestamp": record.timestamp,
               "timestampType": batch.timestamp_type, "batch": batch_json(batch)}
        if batch.is_control:
            obj["control"] = {"type": CONTROL_TYPE_NAMES.get(record.control_type, record.control_type),
                              "coordinatorEpoch": record.coordinator_epoch}
            if batch.recovered:
                obj["recovered"] = True
            yield obj, None, None
            continue
        body, record_type, group = describe_record(record)
        obj.update(body)
        if batch.recovered:
            obj["recovered"] = True
        yield obj, record_type, group


def _unreadable_object(partition, path, item: BatchError | TruncatedTail) -> dict:
    raw = item.raw[:RAW_HEX_LIMIT] if item.raw else b""
    return {"partition": partition, "offset": item.offset,
            "error": {"stage": item.stage, "reason": item.reason, "message": item.message},
            "file": str(path), "position": item.file_position, "length": item.length,
            "rawHex": raw.hex(), "rawHexTruncated": item.length > len(raw)}


def _segment_items(paths: list[str] | list[SegmentFile], tally: dict):
    """(segment, item) for every batch or unreadable unit of every segment, in file order,
    counted into ``tally`` as they are read. ``paths`` may also be listed segments already."""
    segments = paths if paths and all(isinstance(p, SegmentFile) for p in paths) else list_segments(paths)
    for seg in segments:
        for item in iter_segment(seg.path):
            if isinstance(item, RecordBatch):
                tally["records"] += len(item.records)
                tally["recovered"] += len(item.records) if item.recovered else 0
            else:
                tally["unreadable"] += 1
            yield seg, item


def _item_objects(seg, item, groups, types) -> Iterator[dict]:
    if not isinstance(item, RecordBatch):
        yield _unreadable_object(seg.partition, seg.path, item)
        return
    for obj, record_type, group in record_objects(seg.partition, item):
        if types and record_type not in types:
            continue
        if groups and group not in groups:
            continue
        yield obj


def _tally(tally: dict | None) -> dict:
    tally = {} if tally is None else tally
    for key in ("records", "recovered", "unreadable"):
        tally.setdefault(key, 0)
    return tally


def dump_objects(paths: list[str], groups=None, types=None,
                 tally: dict | None = None) -> Iterator[dict]:
    """Every object ``dump`` prints, in file and log order, after the --group/--type filters.

    Filters keep a record whose type / group (read from its key, even when its value cannot be
    decoded) matches; they drop control records. Unreadable batches and truncated tails are
    always printed: nobody can tell which groups their records belonged to. Records read only
    because the reader resynchronised after damage carry ``"recovered": true``; ``tally`` (if
    given) counts ``records``, ``recovered`` and ``unreadable`` units as they are read."""
    tally = _tally(tally)
    for seg, item in _segment_items(paths, tally):
        yield from _item_objects(seg, item, groups, types)


def _fast(item) -> bool:
    """Batches the columnar path renders: plain data batches (recovered ones are marked, so they
    take the objects path)."""
    return isinstance(item, RecordBatch) and not item.is_control and not item.recovered


def dump_lines(paths: list[str], groups=None, types=None,
               tally: dict | None = None) -> Iterator[str]:
    """``dump_objects`` rendered as JSON lines (no newline), byte for byte; offset commits take
    the columnar fast path (:mod:`decoders.dump_fast`), everything else the objects above."""
    from decoders.dump_fast import CHUNK_RECORDS, fast_lines

    tally = _tally(tally)
    chunk: list = []
    size = 0
    for seg, item in _segment_items(paths, tally):
        if _fast(item):
            chunk.append((seg, item))
            size += len(item.records)
            if size < CHUNK_RECORDS:
                continue
        yield from fast_lines(chunk, groups, types, describe_record)
        chunk, size = [], 0
        if not _fast(item):
            for obj in _item_objects(seg, item, groups, types):
                yield dumps(obj)
    yield from fast_lines(chunk, groups, types, describe_record)


def write_lines(lines: Iterable[str], out, block: int = 4096) -> None:
    """Each line and a newline to the text stream ``out``, ``block`` lines per write (a write per
    line cost as much as rendering the line)."""
    pending: list[str] = []
    for line in lines:
        pending.append(line)
        if len(pending) >= block:
            pending.append("")
            out.write("\n".join(pending))
            pending = []
    if pending:
        pending.append("")
        out.write("\n".join(pending))


def text_line(obj: dict) -> str:
    """One readable line, in the spirit of kafka-dump-log's record lines."""
    where = f"partition: {obj['partition']} offset: {obj['offset']}"
    if "error" in obj:
        err = obj["error"]
        return f"{where} ERROR {err['stage']}/{err['reason']}: {err['message']}"
    head = f"{where} {obj['timestampType']}: {obj['timestamp']}"
    if obj.get("recovered"):
        head += " recovered: true"
    if "control" in obj:
        c = obj["control"]
        return f"{head} endTxnMarker: {c['type']} coordinatorEpoch: {c['coordinatorEpoch']}"
    payload = "<DELETE>" if obj["value"] is None else dumps(obj["value"])
    return f"{head} key: {dumps(obj['key'])} payload: {payload}"

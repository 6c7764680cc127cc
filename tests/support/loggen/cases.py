"""Saved regression cases: a (shrunk) generated log as small JSON, and back to the same bytes.

Format (``offsetlake-loggen-case/1``)::

    {"format": ..., "seed": 1234, "expectation": {...},
     "partitions": {"17": {"segments": [0, 31], "batches": [
         {"baseOffset": 4, "lastOffset": 6, "timestamp": ..., "producerId": -1,
          "producerEpoch": -1, "transactional": false, "control": null,
          "records": [{"offset": 5, "type": 8, "version": 0, "layout": null,
                       "key": {...}, "value": {...} | null, "unknownTags": {...}}]}]}},
     "description": ["one line per record", ...]}

Keys and values use Kafka's JSON field names, as the codec does; a UUID is ``{"$uuid": "..."}``
and bytes ``{"$hex": "..."}`` so the round trip is exact. ``description`` is for people and is
ignored on load.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

from support.loggen.log import GeneratedLog
from support.loggen.records import LogRec
from support.scenarios.log import Batch

FORMAT = "offsetlake-loggen-case/1"


def save_case(log: GeneratedLog, path: str | os.PathLike, expectation: dict) -> Path:
    case = {"format": FORMAT, "seed": log.seed, "expectation": expectation,
            "partitions": {str(p): {"segments": log.segment_bases.get(p, [0]),
                                    "batches": [_batch(b) for b in batches]}
                           for p, batches in sorted(log.partitions.items())},
            "description": log.describe().splitlines()}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_dumps(case))
    return path


def _dumps(case: dict) -> str:
    """JSON with one line per batch header and per record, so a case reads like a log."""
    def line(value) -> str:
        return json.dumps(value, separators=(", ", ": "))

    out = ["{"]
    for name in ("format", "seed", "expectation"):
        out.append(f" {line(name)}: {line(case[name])},")
    out.append(' "partitions": {')
    parts = list(case["partitions"].items())
    for i, (p, part) in enumerate(parts):
        out.append(f"  {line(p)}: {{\"segments\": {line(part['segments'])}, \"batches\": [")
        for j, batch in enumerate(part["batches"]):
            head = line({k: v for k, v in batch.items() if k != "records"})[:-1]
            records = ",\n".join(f"     {line(r)}" for r in batch["records"])
            out.append(f"   {head}, \"records\": [" + (f"\n{records}]" if records else "]")
                       + ("}," if j < len(part["batches"]) - 1 else "}"))
        out.append("  ]}" + ("," if i < len(parts) - 1 else ""))
    out.append(" },")
    out.append(' "description": [\n' + ",\n".join(f"  {line(d)}" for d in case["description"])
               + "\n ]\n}\n")
    return "\n".join(out)


def load_case(path: str | os.PathLike) -> tuple[GeneratedLog, dict]:
    """(log, expectation) of a saved case."""
    case = json.loads(Path(path).read_text())
    if case.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} case")
    partitions = {int(p): [_unbatch(b) for b in part["batches"]]
                  for p, part in case["partitions"].items()}
    bases = {int(p): part["segments"] for p, part in case["partitions"].items()}
    return GeneratedLog(case["seed"], partitions, bases), case["expectation"]


def _batch(b: Batch) -> dict:
    return {"baseOffset": b.base_offset, "lastOffset": b.last_offset, "timestamp": b.timestamp,
            "producerId": b.producer_id, "producerEpoch": b.producer_epoch,
            "transactional": b.is_transactional, "control": b.control_type,
            "records": [_record(o, r) for o, r in b.records]}


def _record(offset: int, rec) -> dict:
    tags = getattr(rec, "unknown_tags", None)
    return {"offset": offset, "type": rec.record_type, "version": rec.value_version,
            "layout": getattr(rec, "layout", None), "key": _to_json(rec.key),
            "value": _to_json(rec.value),
            "unknownTags": {path: {str(t): raw.hex() for t, raw in fields.items()}
                            for path, fields in tags.items()} if tags else None}


def _unbatch(d: dict) -> Batch:
    return Batch(d["baseOffset"], d["timestamp"], [(r["offset"], _unrecord(r)) for r in d["records"]],
                 d["producerId"], d["producerEpoch"], d["transactional"], d["control"],
                 d["lastOffset"])


def _unrecord(r: dict) -> LogRec:
    tags = r.get("unknownTags")
    return LogRec(r["type"], _from_json(r["key"]), r["version"], _from_json(r["value"]),
                  r["layout"],
                  {path: {int(t): bytes.fromhex(raw) for t, raw in fields.items()}
                   for path, fields in tags.items()} if tags else None)


def _to_json(value):
    if isinstance(value, uuid.UUID):
        return {"$uuid": str(value)}
    if isinstance(value, (bytes, bytearray)):
        return {"$hex": bytes(value).hex()}
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    return value


def _from_json(value):
    if isinstance(value, dict):
        if set(value) == {"$uuid"}:
            return uuid.UUID(value["$uuid"])
        if set(value) == {"$hex"}:
            return bytes.fromhex(value["$hex"])
        return {k: _from_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    return value

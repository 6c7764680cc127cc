"""JSON rendering identical to Kafka's generated ``*JsonConverter`` classes.

Shape: ``{"type":N,"data":{...}}`` for keys and ``{"version":V,"data":{...}}`` for values
(numbers here; kafka-dump-log prints them as strings, callers stringify). Field names are the
schema names with the first letter lower-cased, in schema order; fields absent from the version
are omitted; tagged fields appear only when they differ from their default; uuid = URL-safe Base64
without padding; bytes = standard Base64 with padding; a tombstone value renders as ``None``.

Embedded consumer-protocol blobs: ``decode_embedded=True`` renders type-2 member blobs as objects
(DumpLogSegments); ``False`` keeps Base64 (console GroupMetadataMessageFormatter). Type 5's
``metadata`` is always Base64, as in Kafka.
"""

from __future__ import annotations

import base64
import json
import uuid

from .catalog_embedded import ASSIGNMENT, SUBSCRIPTION
from .codec import CoordinatorRecord, UnknownRecord
from .embedded import HIGHEST, EmbeddedBlob, encode_blob
from .records_catalog import RECORD_TYPES
from .schema import Struct

_BLOB_STRUCTS = {"subscription": SUBSCRIPTION, "assignment": ASSIGNMENT}


def uuid_json(u: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(u.bytes).rstrip(b"=").decode("ascii")


def _scalar(v, embedded: bool):
    if isinstance(v, EmbeddedBlob):
        if embedded:
            return render_struct(_BLOB_STRUCTS[v.kind], min(v["version"], HIGHEST), False, v, False)
        v = encode_blob(v.kind, v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(v)).decode("ascii")
    if isinstance(v, uuid.UUID):
        return uuid_json(v)
    return v


def render_struct(st: Struct, version: int, flexible: bool, data: dict, embedded: bool) -> dict:
    out = {}
    for f in st.fields_at(version):
        name = f.json_name
        v = data[name] if name in data else f.default_value(version)
        if flexible and version in f.tagged and v == f.default_value(version):
            continue
        if v is None:
            out[name] = None
        elif f.is_array:
            if f.struct is not None:
                out[name] = [render_struct(f.struct, version, flexible, e, embedded) for e in v]
            else:
                out[name] = [_scalar(e, embedded) for e in v]
        elif f.struct is not None:
            out[name] = render_struct(f.struct, version, flexible, v, embedded)
        else:
            out[name] = _scalar(v, embedded)
    return out


def key_json(rec: CoordinatorRecord | UnknownRecord) -> dict | None:
    """``{"type":N,"data":{...}}``; None for an unknown record type (Kafka prints nothing)."""
    if isinstance(rec, UnknownRecord):
        return None
    rt = RECORD_TYPES[rec.record_type]
    return {"type": rec.record_type, "data": render_struct(rt.key, 0, False, rec.key, False)}


def value_json(rec: CoordinatorRecord | UnknownRecord, *, decode_embedded: bool = True) -> dict | None:
    """``{"version":V,"data":{...}}``; None for a tombstone or an unknown record type."""
    if isinstance(rec, UnknownRecord) or rec.value is None:
        return None
    rt = RECORD_TYPES[rec.record_type]
    st = rt.layout(rec.layout)
    embedded = decode_embedded and rec.record_type == 2
    data = render_struct(st, rec.value_version, rt.is_flexible(rec.value_version), rec.value, embedded)
    return {"version": rec.value_version, "data": data}


def record_json(rec: CoordinatorRecord, *, decode_embedded: bool = False) -> dict:
    """The console formatters' ``{"key":...,"value":...}`` object."""
    return {"key": key_json(rec), "value": value_json(rec, decode_embedded=decode_embedded)}


def dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def batch_json(batch) -> dict:
    """A record batch's header as ``dump`` prints it with each record (``"batch": {...}``)."""
    return {"baseOffset": batch.base_offset, "producerId": batch.producer_id,
            "producerEpoch": batch.producer_epoch, "isTransactional": batch.is_transactional,
            "isControl": batch.is_control, "compression": batch.compression,
            "crcValid": batch.crc_valid}

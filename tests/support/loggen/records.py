"""The records of a generated log, and their bytes, including records no release knows.

A :class:`LogRec` is a scenario :class:`~support.scenarios.records.Rec` plus the two things a
writer of another release (or a future one) changes on the wire: the value ``layout`` (e.g.
``historical/3.7.0`` for types 4/5/7/8 written by 3.6/3.7) and ``unknown_tags`` (tagged fields
this codebase does not know, ``{path: {tag: payload}}`` as :mod:`decoders.codec` keeps them).

Records the catalog cannot encode are still written, from schemas described here as data:

* a record type above 24 (:data:`FUTURE_TYPES`): keys shaped like every coordinator key
  (``GroupId`` [+ ``MemberId``]), flexible v0 values;
* a value version above the type's newest (e.g. OffsetCommitValue v5): laid out as the newest
  known version, since KIP-915 only allows later versions to add tagged fields;
* type 0 with a value version 1-4: before 4.1 ids 0 and 1 shared one schema (type 1's layout).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from decoders.codec import encode_key, encode_value
from decoders.embedded import encode_embedded
from decoders.primitives import INT16
from decoders.records_catalog import RECORD_TYPES
from decoders.schema import F, RecordType, S, Versions
from decoders.writer import encode_struct
from support.scenarios.records import Rec

KNOWN, UNKNOWN_TYPE, UNKNOWN_VERSION = "known", "unknown_type", "unknown_version"


@dataclass(frozen=True)
class LogRec(Rec):
    """A record as some release wrote it: ``layout`` None is the type's current layout."""

    layout: str | None = None
    unknown_tags: dict | None = None


def log_rec(rec: Rec, **changes) -> LogRec:
    """``rec`` as a :class:`LogRec` (fields of a LogRec are kept), with ``changes`` applied."""
    fields = {"record_type": rec.record_type, "key": rec.key, "value_version": rec.value_version,
              "value": rec.value, "layout": getattr(rec, "layout", None),
              "unknown_tags": getattr(rec, "unknown_tags", None)}
    fields.update(changes)
    return LogRec(**fields)


def _future(record_type: int, name: str, *value_fields, member: bool = False) -> RecordType:
    key = (F("GroupId", "string", "0"),) + ((F("MemberId", "string", "0"),) if member else ())
    return RecordType(record_type, name, S(name + "Key", *key), S(name + "Value", *value_fields),
                      Versions.parse("0"), Versions.parse("0+"), status="future")


# Invented for the generator: plausible records of a release after 4.4 (no Kafka schema).
FUTURE_TYPES: dict[int, RecordType] = {rt.record_type: rt for rt in (
    _future(25, "FutureGroupMetadata", F("Epoch", "int32"),
            F("CreationTimeMs", "int64", tag=0, default=-1)),
    _future(26, "FutureMemberMetadata", F("MemberEpoch", "int32"), F("Topics", "[]string"),
            member=True),
    _future(27, "FutureTargetAssignmentMetadata", F("AssignmentEpoch", "int32"),
            F("AssignmentTimestamp", "int64")),
    _future(28, "FutureMemberAssignment", F("MemberEpoch", "int32"),
            F("Partitions", "[]int32"), member=True),
    _future(29, "FutureGroupConfig", F("Configs", "[]string")),
    _future(30, "FutureGroupState", F("State", "int8"), F("Epoch", "int32")),
)}


def decode_expectation(rec: Rec) -> str:
    """How :mod:`decoders.codec` must treat the record: KNOWN, UNKNOWN_TYPE or UNKNOWN_VERSION."""
    rt = RECORD_TYPES.get(rec.record_type)
    if rt is None:
        return UNKNOWN_TYPE
    if rec.value is not None and rec.value_version not in rt.valid_versions:
        return UNKNOWN_VERSION
    return KNOWN


def pruned(rec: LogRec) -> LogRec:
    """The record with only the top-level value fields its version and layout carry (the
    scenario builder fills in every field any version has), so saved cases show what is written."""
    if rec.value is None:
        return rec
    names = _field_names(rec.record_type, rec.value_version, rec.layout)
    if names is None or names.issuperset(rec.value):
        return rec
    return log_rec(rec, value={k: v for k, v in rec.value.items() if k in names})


@functools.cache
def _field_names(record_type: int, version: int, layout: str | None) -> frozenset | None:
    if record_type not in RECORD_TYPES and record_type not in FUTURE_TYPES:
        return None
    rt, written = _value_schema(record_type, version)
    st = rt.layout(layout or rt.default_layout)
    return frozenset(f.json_name for f in st.fields_at(written))


def record_bytes(rec: Rec) -> tuple[bytes, bytes | None]:
    """(key, value) bytes; value None for a tombstone."""
    layout = getattr(rec, "layout", None)
    tags = getattr(rec, "unknown_tags", None)
    if decode_expectation(rec) == KNOWN:
        return (encode_key(rec.record_type, rec.key),
                encode_value(rec.record_type, rec.value_version, rec.value, layout=layout,
                             unknown_tags=tags))
    key_type = RECORD_TYPES.get(rec.record_type) or FUTURE_TYPES[rec.record_type]
    key = INT16.pack(rec.record_type) + encode_struct(key_type.key, 0, False, rec.key)
    if rec.value is None:
        return key, None
    rt, version = _value_schema(rec.record_type, rec.value_version)
    body = encode_struct(rt.layout(layout or rt.default_layout), version, rt.is_flexible(version),
                         encode_embedded(rec.record_type, rec.value), tags)
    return key, INT16.pack(rec.value_version) + body


def _value_schema(record_type: int, version: int) -> tuple[RecordType, int]:
    """The schema and version a value is laid out with (beyond the catalog: see the module)."""
    if record_type in FUTURE_TYPES:
        return FUTURE_TYPES[record_type], 0
    if record_type == 0 and version in RECORD_TYPES[1].valid_versions:
        return RECORD_TYPES[1], version
    rt = RECORD_TYPES[record_type]
    return rt, version if version in rt.valid_versions else rt.valid_versions.hi

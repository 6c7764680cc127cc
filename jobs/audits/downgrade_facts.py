"""Plain facts about each record of a snapshot, as the downgrade audit needs them.

One :class:`RecordFacts` per data record, in log order, from raw ``(key, value)`` bytes: the
record type and value version as read from the first two bytes (even when our own decoder does
not know them: that is exactly what an older coordinator meets), whether it is a tombstone, its
group and member, the compaction key, the value layout our decoder matched, the tagged fields it
carries with a non-default value, and a few replay facts (classic protocol type and member count,
partitions owned by a type-8 member). The same function serves the pure tests (framed batches via
:func:`log_batch_facts`; ``tests/support/partition_dirs.py`` reads the files) and the Spark stage
(:func:`facts_from_arrow`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from decoders.codec import UnknownRecord, decode_record_shallow, key_group_id
from decoders.columnar import decode_offset_commits
from decoders.errors import DecodeError
from decoders.log.layout import CONTROL_TYPE_NAMES
from decoders.log.types import RecordBatch
from decoders.pylists import table_lists
from decoders.records_catalog import RECORD_TYPES


@dataclass(slots=True)
class RecordFacts:
    """Not frozen: :func:`mark_live` sets ``is_live`` in place (a copy per record would cost
    more than the decode)."""

    partition: int
    offset: int
    record_type: int | None          # None: the key is shorter than its type field
    value_version: int | None        # None for a tombstone
    is_tombstone: bool
    key: bytes = b""                 # the compaction key: the latest record per key is live
    group_id: str | None = None
    member_id: str | None = None
    layout: str | None = None        # value layout our decoder matched; None when it did not decode
    decode_error: str | None = None  # our decoder's reason when it did not decode
    tagged_fields: tuple[str, ...] = ()   # tagged fields present with a non-default value
    protocol_type: str | None = None      # type 2: protocolType ("" for a simple group)
    classic_members: int | None = None    # type 2: number of members
    owned_partitions: tuple[str, ...] = ()  # type 8: "topicId:partition", assigned and pending
    pending_overlap: bool = False         # type 8: a partition both assigned and pending revocation
    is_live: bool = True                  # the latest record of its key in the snapshot
    value: bytes | None = None            # the raw value: each target reads it with its own reader
    producer_id: int = -1                 # the batch's producer id (transactional offset commits)
    control: str | None = None            # "COMMIT" / "ABORT": a transaction marker, not a record


FACTS_SCHEMA = pa.schema([
    ("partition", pa.int32()), ("offset", pa.int64()), ("record_type", pa.int16()),
    ("value_version", pa.int16()), ("is_tombstone", pa.bool_()), ("key", pa.binary()),
    ("group_id", pa.string()), ("member_id", pa.string()), ("layout", pa.string()),
    ("decode_error", pa.string()), ("tagged_fields", pa.list_(pa.string())),
    ("protocol_type", pa.string()), ("classic_members", pa.int32()),
    ("owned_partitions", pa.list_(pa.string())), ("pending_overlap", pa.bool_()),
    ("is_live", pa.bool_()), ("value", pa.binary()), ("producer_id", pa.int64()),
    ("control", pa.string()),
])


def record_facts(partition: int, offset: int, key: bytes | None, value: bytes | None,
                 producer_id: int | None = -1) -> RecordFacts:
    """Facts of one data record (never raises: what we cannot read is recorded as such)."""
    key = bytes(key or b"")
    value = None if value is None else bytes(value)
    record_type = int.from_bytes(key[:2], "big", signed=True) if len(key) >= 2 else None
    version = int.from_bytes(value[:2], "big", signed=True) if value is not None and len(value) >= 2 else None
    facts = {}
    try:
        rec = decode_record_shallow(key, value)
    except DecodeError as err:
        facts = {"decode_error": err.reason, **_key_only(key)}
    else:
        if isinstance(rec, UnknownRecord):
            facts = {"decode_error": "unknown_type"}
        else:
            facts = {"group_id": key_group_id(rec.key), "member_id": rec.key.get("memberId")}
            if rec.value is not None:
                facts.update(layout=rec.layout, **_replay_facts(rec.record_type, rec.value),
                             tagged_fields=tagged_fields(rec.record_type, rec.value_version,
                                                         rec.layout, rec.value, rec.unknown_tags))
    return RecordFacts(partition, offset, record_type, version, value is None, key=key, value=value,
                       producer_id=-1 if producer_id is None else producer_id, **facts)


def marker_facts(partition: int, offset: int, producer_id: int, control: str,
                 group_id: str | None = None) -> RecordFacts:
    """A transaction marker, as the loader meets it (it belongs to every group of its producer)."""
    return RecordFacts(partition, offset, None, None, False, key=b"", group_id=group_id,
                       producer_id=producer_id, control=control, is_live=False)


def _key_only(key: bytes) -> dict:
    """Group and member of a record whose value did not decode (the key alone usually does)."""
    try:
        rec = decode_record_shallow(key, None)
    except DecodeError:
        return {}
    if isinstance(rec, UnknownRecord):
        return {}
    return {"group_id": key_group_id(rec.key), "member_id": rec.key.get("memberId")}


def _replay_facts(record_type: int, value: dict) -> dict:
    if record_type == 2:
        return {"protocol_type": value.get("protocolType"),
                "classic_members": len(value.get("members") or ())}
    if record_type == 8:
        assigned = _partitions(value.get("assignedPartitions"))
        pending = _partitions(value.get("partitionsPendingRevocation"))
        return {"owned_partitions": tuple(sorted(assigned | pending)),
                "pending_overlap": bool(assigned & pending)}
    return {}


def _partitions(topics) -> set[str]:
    return {f"{t['topicId']}:{p}" for t in topics or () for p in t["partitions"]}


def tagged_fields(record_type: int, version: int, layout: str, value: dict,
                  unknown_tags: dict | None = None) -> tuple[str, ...]:
    """Tagged fields of a value that differ from their default (Kafka writes a tag only then),
    as paths: ``topicId``, ``assignedPartitions[].assignmentEpochs``; tags our schema does not
    know as ``?path#tag``."""
    rt = RECORD_TYPES[record_type]
    if not rt.is_flexible(version):
        return ()
    found: set[str] = set()
    _walk(rt.layout(layout), version, value, "", found)
    for path, tags in (unknown_tags or {}).items():
        found.update(f"?{path}#{tag}" for tag in tags)
    return tuple(sorted(found))


def _walk(st, version: int, value: dict, prefix: str, found: set) -> None:
    for name, f, tagged, default in _fields(st, version):
        v = value.get(name)
        path = prefix + name
        if tagged and v != default:
            found.add(path)
        if f.struct is not None and v:
            for element in (v if f.is_array else [v]):
                _walk(f.struct, version, element, path + ("[]." if f.is_array else "."), found)


@cache
def _fields(st, version: int) -> tuple:
    """(json name, field, is tagged, default) per field of ``st`` at ``version``, computed once."""
    return tuple((f.json_name, f, version in f.tagged, f.default_value(version))
                 for f in st.fields_at(version))


def mark_live(facts: Iterable[RecordFacts]) -> list[RecordFacts]:
    """The same facts in log order with ``is_live``: the latest record of each key (per partition)."""
    ordered = sorted(facts, key=lambda f: (f.partition, f.offset))
    latest = {(f.partition, f.key): f.offset for f in ordered if f.control is None}
    for f in ordered:
        f.is_live = f.control is None and latest[(f.partition, f.key)] == f.offset
    return ordered


def log_batch_facts(batch: RecordBatch, partition: int) -> list[RecordFacts]:
    """Facts of one batch the segment reader framed (:mod:`decoders.log`): a fact per data
    record, one per COMMIT/ABORT marker (markers carry no group:
    :func:`jobs.audits.downgrade.audit_facts` hands each to the groups of its producer).
    Liveness needs the whole partition: :func:`mark_live`."""
    if batch.is_control:
        return [marker_facts(partition, r.offset, batch.producer_id, CONTROL_TYPE_NAMES[r.control_type])
                for r in batch.records if r.control_type in CONTROL_TYPE_NAMES]
    return [record_facts(partition, r.offset, r.key, r.value, batch.producer_id)
            for r in batch.records]


def facts_from_arrow(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Arrow body: raw rows (``partition``, ``offset``, ``key``, ``value``, ``producer_id``,
    ``is_control``, ``control_type``) -> :data:`FACTS_SCHEMA` rows (``is_live`` left true;
    liveness needs every record of the key, see the stage).

    Offset commits the columnar decoder reads exactly (:func:`decoders.columnar.decode_offset_commits`,
    95% of a snapshot) get their facts by column: what :func:`record_facts` says of one commit
    it says of every commit of the same shape (type, version, tombstone, topic id set), so it is
    asked once per shape. Every other row goes through :func:`record_facts` itself."""
    n = batch.num_rows
    keys, values = batch.column("key"), batch.column("value")
    control = np.asarray(batch.column("is_control").fill_null(False), bool)
    marker = control & np.asarray(pc.is_in(batch.column("control_type"),
                                           pa.array(list(CONTROL_TYPE_NAMES.values()))).fill_null(False), bool)
    fast = decode_offset_commits(keys, values)
    quick = ~control & fast.handled
    slow = np.flatnonzero(~quick & (~control | marker))
    cols = batch.take(pa.array(slow)).to_pydict()
    others = []
    for j, i in enumerate(slow.tolist()):
        if marker[i]:
            others.append(marker_facts(cols["partition"][j], cols["offset"][j],
                                       cols["producer_id"][j], cols["control_type"][j]))
        else:
            others.append(record_facts(cols["partition"][j], cols["offset"][j], cols["key"][j],
                                       cols["value"][j], cols["producer_id"][j]))
    rows = np.flatnonzero(quick)
    parts = [_commit_facts(batch, fast, rows)] if len(rows) else []
    if others:
        parts.append(pa.Table.from_batches([facts_to_arrow(others)]))
    if not parts:
        return facts_to_arrow([])
    # back in log order: the quick rows first in the concatenation, then the others
    place = np.empty(n, np.int64)
    place[rows] = np.arange(len(rows))
    place[slow] = len(rows) + np.arange(len(slow))
    table = pa.concat_tables(parts).take(pa.array(place[np.flatnonzero(quick | ~control | marker)]))
    return table.combine_chunks().to_batches()[0]


def _commit_facts(batch: pa.RecordBatch, fast, rows: np.ndarray) -> pa.Table:
    """:data:`FACTS_SCHEMA` columns of the offset commits at ``rows``, all read by ``fast``."""
    taken = pa.array(rows)
    tomb = fast.is_tombstone[rows]
    version = fast.value_version[rows]
    with_id = fast.topic_id[rows].any(axis=1)
    shape = (fast.record_type[rows].astype(np.int64) * 4096 + version.astype(np.int64) * 4
             + tomb * 2 + with_id)
    _, first, which = np.unique(shape, return_index=True, return_inverse=True)
    # One commit of each shape asked the slow way: for an exactly read commit the shape decides
    # the rest (no member, no replay facts, no decode error; tags: topicId when set).
    like = [record_facts(0, 0, batch.column("key")[i].as_py(), batch.column("value")[i].as_py())
            for i in rows[first].tolist()]
    m = len(rows)
    producer = batch.column("producer_id").take(taken).fill_null(-1)
    data = {
        "partition": batch.column("partition").take(taken),
        "offset": batch.column("offset").take(taken),
        "record_type": pa.array(fast.record_type[rows], pa.int16()),
        "value_version": pa.array(version, pa.int16(), mask=tomb),
        "is_tombstone": pa.array(tomb),
        "key": batch.column("key").take(taken),
        "group_id": fast.group.take(taken),
        "member_id": pa.nulls(m, pa.string()),
        "layout": pa.array([f.layout for f in like], pa.string()).take(pa.array(which)),
        "decode_error": pa.nulls(m, pa.string()),
        "tagged_fields": pa.array([list(f.tagged_fields) for f in like],
                                  pa.list_(pa.string())).take(pa.array(which)),
        "protocol_type": pa.nulls(m, pa.string()),
        "classic_members": pa.nulls(m, pa.int32()),
        "owned_partitions": pa.array([[]] * len(like), pa.list_(pa.string())).take(pa.array(which)),
        "pending_overlap": pa.array(np.zeros(m, bool)),
        "is_live": pa.array(np.ones(m, bool)),
        "value": batch.column("value").take(taken),
        "producer_id": producer,
        "control": pa.nulls(m, pa.string()),
    }
    return pa.table([data[name].cast(FACTS_SCHEMA.field(name).type) for name in FACTS_SCHEMA.names],
                    schema=FACTS_SCHEMA)


def facts_to_arrow(rows: list[RecordFacts]) -> pa.RecordBatch:
    data = {name: [getattr(r, name) for r in rows] for name in FACTS_SCHEMA.names}
    return pa.RecordBatch.from_pydict(data, schema=FACTS_SCHEMA)


def facts_from_table(table: pa.Table | pa.RecordBatch) -> Iterator[RecordFacts]:
    """:data:`FACTS_SCHEMA` rows as :class:`RecordFacts` (columns in the fields' order)."""
    cols = table_lists(table, FACTS_SCHEMA.names)
    for name in ("tagged_fields", "owned_partitions"):
        if table.column(name).null_count:
            cols[name] = [v or () for v in cols[name]]
    for row in zip(*cols.values()):
        yield RecordFacts(*row)

"""Plain facts about each record of a snapshot, as the downgrade audit needs them.

One :class:`RecordFacts` per data record, in log order, from raw ``(key, value)`` bytes: the
record type and value version as read from the first two bytes (even when our own decoder does
not know them: that is exactly what an older coordinator meets), whether it is a tombstone, its
group and member, the compaction key, the value layout our decoder matched, the tagged fields it
carries with a non-default value, and a few replay facts (classic protocol type and member count,
partitions owned by a type-8 member). The same function serves the pure tests (framed batches via
:func:`log_batch_facts`; ``tests/support/partition_dirs.py`` reads the files) and the Spark stage,
which reads the facts the run's decode stage kept (:func:`kept_facts` there,
:func:`facts_from_kept` here) or, for a lake without them, decodes (:func:`facts_from_arrow`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
import uuid
from functools import cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from decoders.batch_decode import decode_batch
from decoders.codec import UnknownRecord, decode_record_shallow, key_group_id
from decoders.errors import DecodeError, TruncatedError
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
    try:
        facts = decoded_facts(decode_record_shallow(key, value))
    except DecodeError as err:
        facts = failed_facts(key, err.reason)
    return RecordFacts(partition, offset, *_type_and_version(key, value), value is None, key=key,
                       value=value, producer_id=-1 if producer_id is None else producer_id,
                       **facts)


def _type_and_version(key: bytes, value: bytes | None) -> tuple[int | None, int | None]:
    """Record type and value version as their first two bytes give them (not a decode)."""
    record_type = int.from_bytes(key[:2], "big", signed=True) if len(key) >= 2 else None
    version = (int.from_bytes(value[:2], "big", signed=True)
               if value is not None and len(value) >= 2 else None)
    return record_type, version


def decoded_facts(rec) -> dict:
    """The :class:`RecordFacts` fields a decoded record gives (a
    :class:`~decoders.codec.CoordinatorRecord` or :class:`~decoders.codec.UnknownRecord`)."""
    if isinstance(rec, UnknownRecord):
        return {"decode_error": "unknown_type"}
    facts = {"group_id": key_group_id(rec.key), "member_id": rec.key.get("memberId")}
    if rec.value is not None:
        facts.update(layout=rec.layout, **_replay_facts(rec.record_type, rec.value),
                     tagged_fields=tagged_fields(rec.record_type, rec.value_version,
                                                 rec.layout, rec.value, rec.unknown_tags))
    return facts


def failed_facts(key: bytes, reason: str) -> dict:
    """The :class:`RecordFacts` fields of a record our decoder refused for ``reason``."""
    return {"decode_error": reason, **_key_only(key)}


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
    liveness needs every record of the key, see the stage), each data record decoded here: what
    :func:`facts_from_kept` gives from the facts the decode stage keeps, for a lake without them.
    The same facts as :func:`record_facts` and :func:`marker_facts`, record by record."""
    data = ~np.asarray(batch.column("is_control").fill_null(False), bool)
    picked = pa.array(np.flatnonzero(data))
    keys = batch.column("key").take(picked)
    records, fast = [], []
    decoded = decode_batch(keys, batch.column("value").take(picked), with_value_json=False,
                           records=records, fast_out=fast)
    kept = kept_facts(keys, records, fast[0], decoded.column("error_reason"))
    place = np.zeros(batch.num_rows, np.int64)
    place[data] = np.arange(int(data.sum()))
    at = pa.array(place, mask=~data)
    return facts_from_kept(pa.RecordBatch.from_arrays(
        batch.columns + [kept.column(name).combine_chunks().take(at) for name in KEPT_FIELDS],
        names=batch.schema.names + list(KEPT_FIELDS)))


# The facts the decode stage keeps of each data record (``record_facts``), in the order and
# types of :data:`FACTS_SCHEMA`: what a record's bytes say only once decoded. The rest of a fact
# (type and version from the first two bytes, tombstone, key, value, producer, markers) is read
# from ``raw_records`` without decoding (:func:`facts_from_kept`).
KEPT_FIELDS = ("group_id", "member_id", "layout", "decode_error", "tagged_fields",
               "protocol_type", "classic_members", "owned_partitions", "pending_overlap")
KEPT_SCHEMA = pa.schema([FACTS_SCHEMA.field(name) for name in KEPT_FIELDS])
_FACT_DEFAULTS = {name: RecordFacts.__dataclass_fields__[name].default for name in KEPT_FIELDS}


def kept_facts(keys: pa.Array, records: list, fast, errors: pa.Array) -> pa.Table:
    """:data:`KEPT_SCHEMA` rows of a batch :func:`decoders.batch_decode.decode_batch` just read,
    from what it read (``records``: its generic path's records, ``fast``: its fast path's
    columns, ``errors``: its ``error_reason``), so no record is decoded again: what
    :func:`record_facts` says of the same bytes."""
    n = len(keys)
    rest = np.flatnonzero(~fast.handled)
    reasons = errors.take(pa.array(rest)).to_pylist()
    rows = []
    for i, reason in zip(rest.tolist(), reasons):
        if records[i] is not None:
            facts = decoded_facts(records[i])
        else:
            key = keys[i].as_py()
            # A null key is read as an empty one, which is too short for its type (record_facts).
            facts = (failed_facts(key, reason) if key is not None
                     else failed_facts(b"", TruncatedError.reason))
        rows.append({**_FACT_DEFAULTS, **facts})
    table = pa.Table.from_pylist(rows, schema=KEPT_SCHEMA)
    if len(rest) == n:
        return table
    place = np.zeros(n, np.int64)
    place[rest] = np.arange(len(rest))
    # Each row the generic path read at its place; the fast path's rows filled in next.
    return _with_commit_facts(table.take(pa.array(place, mask=fast.handled)), fast,
                              np.flatnonzero(fast.handled))


def facts_from_kept(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Arrow body: raw rows (as :func:`facts_from_arrow` takes them) with the
    :data:`KEPT_FIELDS` the decode stage kept of each data record (null on control rows) ->
    :data:`FACTS_SCHEMA` rows, what :func:`facts_from_arrow` gives without decoding anything: the
    type and version are the first two bytes of the key and value."""
    control = np.asarray(batch.column("is_control").fill_null(False), bool)
    names = pa.array(list(CONTROL_TYPE_NAMES.values()))
    marker = control & np.asarray(pc.is_in(batch.column("control_type"), names).fill_null(False),
                                  bool)
    keep = pa.array(~control | marker)
    batch = batch.filter(keep)
    marker = pa.array(np.asarray(marker)[np.asarray(keep)])
    n = batch.num_rows
    key = batch.column("key")
    value = batch.column("value")
    data = pc.invert(marker)
    columns = {
        "partition": batch.column("partition"), "offset": batch.column("offset"),
        "record_type": _leading_int16(key, data), "value_version": _leading_int16(value, data),
        "is_tombstone": pc.and_(data, value.is_null()),
        "key": pc.if_else(data, key.fill_null(b""), pa.scalar(b"", pa.binary())),
        "value": pc.if_else(data, value, pa.scalar(None, pa.binary())),
        "producer_id": batch.column("producer_id").fill_null(-1),
        "control": pc.if_else(marker, batch.column("control_type"), pa.scalar(None, pa.string())),
        "is_live": data,
        "tagged_fields": batch.column("tagged_fields").fill_null(pa.scalar([], pa.list_(pa.string()))),
        "owned_partitions": batch.column("owned_partitions").fill_null(
            pa.scalar([], pa.list_(pa.string()))),
        "pending_overlap": batch.column("pending_overlap").fill_null(False),
    }
    arrays = [(columns[name] if name in columns else batch.column(name))
              for name in FACTS_SCHEMA.names]
    return pa.RecordBatch.from_arrays([a.cast(FACTS_SCHEMA.field(name).type)
                                       for a, name in zip(arrays, FACTS_SCHEMA.names)],
                                      schema=FACTS_SCHEMA) if n else facts_to_arrow([])


def _leading_int16(column: pa.Array, where: pa.Array) -> pa.Array:
    """The big-endian int16 of each value's first two bytes, null where shorter, null or not
    ``where``."""
    column = column.cast(pa.binary())
    n = len(column)
    offsets = np.frombuffer(column.buffers()[1], np.int32)[column.offset:column.offset + n + 1]
    data = np.frombuffer(column.buffers()[2] or b"\0", np.uint8)
    valid = (np.asarray(column.is_valid()) & (np.diff(offsets) >= 2) & np.asarray(where))
    start = np.where(valid, offsets[:-1], 0)
    if len(data) < 2:
        data = np.zeros(2, np.uint8)
    high = data[np.minimum(start, len(data) - 2)].astype(np.int32)
    low = data[np.minimum(start + 1, len(data) - 1)].astype(np.int32)
    return pa.array(((high << 8) | low).astype(np.int16), mask=~valid)


def _with_commit_facts(table: pa.Table, fast, at: np.ndarray) -> pa.Table:
    """``table`` with the facts of the offset commits the fast path read exactly (rows ``at``):
    for such a commit its shape (type, version, tombstone, topic id set) decides every fact, so
    the facts are made once per shape, from the columns, without a decode."""
    tomb = fast.is_tombstone[at]
    types = fast.record_type[at]
    versions = fast.value_version[at]
    with_id = fast.has_topic_id[at] & fast.topic_id[at].any(axis=1)
    shape = types.astype(np.int64) * 4096 + versions.astype(np.int64) * 4 + tomb * 2 + with_id
    _, first, which = np.unique(shape, return_index=True, return_inverse=True)
    layouts, tags = [], []
    for j in first.tolist():
        t, layout = int(types[j]), RECORD_TYPES[int(types[j])].default_layout
        if tomb[j]:
            layouts.append(None)
            tags.append([])
            continue
        value = {"topicId": _SOME_TOPIC_ID if with_id[j] else _NO_TOPIC_ID}
        layouts.append(layout)
        tags.append(list(tagged_fields(t, int(versions[j]), layout, value)))
    handled = pa.array(fast.handled)
    place = np.zeros(table.num_rows, np.int64)
    place[at] = which
    spread = pa.array(place, mask=~fast.handled)
    commit = {"group_id": fast.group.cast(pa.string()),
              "layout": pa.array(layouts, pa.string()).take(spread),
              "tagged_fields": pa.array(tags, pa.list_(pa.string())).take(spread),
              "owned_partitions": pa.array([[]], pa.list_(pa.string())).take(
                  pa.array(np.zeros(table.num_rows, np.int64))),
              "pending_overlap": pa.array(np.zeros(table.num_rows, bool))}
    columns = [pc.if_else(handled, commit[name], table.column(name).combine_chunks())
               if name in commit else table.column(name) for name in KEPT_FIELDS]
    return pa.Table.from_arrays(columns, schema=KEPT_SCHEMA)


_NO_TOPIC_ID = uuid.UUID(int=0)     # the default of OffsetCommitValue.topicId: not written
_SOME_TOPIC_ID = uuid.UUID(int=1)   # any other id: the tag is written


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

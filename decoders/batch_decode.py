"""Arrow-batched decoding: one call per batch of raw ``(key, value)`` rows, as ``mapInArrow`` needs.

Offset commits go through the vectorised fast path (:mod:`decoders.columnar`); every row it does
not handle (other record types, and anything unusual about an offset commit) goes through the
generic :func:`decoders.codec.decode_record`. The two are merged back into input row order.

Output (one row per input row, :data:`OUTPUT_SCHEMA`):

* ``record_type``/``type_name``; ``group_id`` (``group`` of types 0-2, ``GroupId`` otherwise);
  ``member_id`` where the key has a ``MemberId``.
* Offset-commit columns (types 0 and 1, null otherwise): ``topic``, ``partition``, ``offset``,
  ``leader_epoch`` and ``expire_timestamp`` (-1 where the value version lacks them, as the schema
  default says), ``metadata``, ``commit_timestamp``, ``topic_id`` (16 bytes; all zero for a v4
  value without the tag, null before v4). ``binary`` rather than ``binary(16)`` because Spark's
  Arrow conversion has no fixed-size binary.
* ``value_version`` (null for a tombstone), ``is_tombstone`` (the input value is null).
* ``value_json``: Kafka's JSON of the value (``{"version":V,"data":{...}}``) for every other record
  type, when ``with_value_json`` (off saves the JSON rendering of the ~5% non-offset rows).
* ``trailing_bytes``/``key_trailing_bytes``: bytes after the value/key, which Kafka accepts and
  audits should flag (0 on the fast path, which only handles exact rows).
* ``error_reason``/``error_message``: set where the row could not be decoded (the
  :class:`~decoders.errors.DecodeError`'s ``reason`` and text), with every decoded column null
  except ``record_type`` (from the key's first two bytes, when present) and ``is_tombstone``.
  An unknown record type is reported as ``unknown_type`` so the row reaches quarantine with its
  raw bytes instead of vanishing; Kafka itself skips such records.

Example::

    batch = decode_batch(pa.array([key], pa.binary()), pa.array([value], pa.binary()))
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .codec import UnknownRecord, decode_record_shallow, key_group_id
from .columnar import decode_offset_commits
from .embedded import RENDERED_AS_OBJECTS, expand_embedded
from .errors import DecodeError, UnknownRecordTypeError
from .json_text import value_json_text
from .pylists import binary_list
from .records_catalog import RECORD_TYPES

OUTPUT_SCHEMA = pa.schema([
    ("record_type", pa.int16()), ("type_name", pa.string()), ("group_id", pa.string()),
    ("member_id", pa.string()), ("topic", pa.string()), ("partition", pa.int32()),
    ("value_version", pa.int16()), ("is_tombstone", pa.bool_()), ("offset", pa.int64()),
    ("leader_epoch", pa.int32()), ("metadata", pa.string()), ("commit_timestamp", pa.int64()),
    ("expire_timestamp", pa.int64()), ("topic_id", pa.binary()), ("value_json", pa.string()),
    ("trailing_bytes", pa.int32()), ("key_trailing_bytes", pa.int32()),
    ("error_reason", pa.string()), ("error_message", pa.string()),
])
_OFFSET_TYPES = (0, 1)
# Output columns that the generic path fills per row (is_tombstone comes from the input).
_GENERIC = [name for name in OUTPUT_SCHEMA.names if name != "is_tombstone"]
_TYPE_NAMES = pa.array([RECORD_TYPES[t].name if t in RECORD_TYPES else None
                        for t in range(max(RECORD_TYPES) + 1)], pa.string())
_VALUE_FIELDS = ("value_version", "offset", "leader_epoch", "commit_timestamp", "expire_timestamp")


def decode_batch(keys: pa.Array | pa.ChunkedArray, values: pa.Array | pa.ChunkedArray, *,
                 with_value_json: bool = True, decode_embedded: bool = True,
                 records: list | None = None, fast_out: list | None = None) -> pa.RecordBatch:
    """Decode raw ``__consumer_offsets`` keys/values (binary, same length) into
    :data:`OUTPUT_SCHEMA` rows in input order. ``decode_embedded`` renders type-2 member blobs as
    objects in ``value_json`` (as kafka-dump-log does) instead of Base64.

    For a caller that needs more of each record than the columns hold, so that it never decodes
    the bytes again: ``records`` (a list) is extended with one entry per input row, the
    :class:`~decoders.codec.CoordinatorRecord` of a row the generic path decoded (whole, as
    :func:`~decoders.codec.decode_record` gives it) and None for the other rows; ``fast_out`` (a
    list) receives the fast path's :class:`~decoders.columnar.OffsetCommitColumns`."""
    keys, values = _single_chunk(keys), _single_chunk(values)
    n = len(keys)
    fast = decode_offset_commits(keys, values)
    if fast_out is not None:
        fast_out.append(fast)
    rest = np.flatnonzero(~fast.handled)
    taken = pa.array(rest)
    kept = None if records is None else []
    lists = _decode_generic(_pylist(keys.take(taken)), _pylist(values.take(taken)),
                            with_value_json, decode_embedded, kept)
    if records is not None:
        start = len(records)
        records.extend([None] * n)
        for i, rec in zip(rest.tolist(), kept):
            records[start + i] = rec
    gen = {name: pa.array(lists[name], OUTPUT_SCHEMA.field(name).type)
           for name in ("group_id", "topic", "metadata", "topic_id", "member_id", "value_json",
                        "error_reason", "error_message")}
    h = fast.handled
    has_value = h & ~fast.is_tombstone
    zeros = np.zeros(n, np.int32)
    cols = {"record_type": _numeric(fast.record_type, h, lists["record_type"], rest),
            "partition": _numeric(fast.partition, h, lists["partition"], rest),
            "trailing_bytes": _numeric(zeros, h, lists["trailing_bytes"], rest),
            "key_trailing_bytes": _numeric(zeros, h, lists["key_trailing_bytes"], rest),
            "group_id": _interleave(fast.group, gen["group_id"], rest),
            "topic": _interleave(fast.topic, gen["topic"], rest),
            "metadata": _interleave(fast.metadata, gen["metadata"], rest),
            "topic_id": _topic_ids(fast.topic_id, has_value & fast.has_topic_id, gen["topic_id"], rest),
            "is_tombstone": pa.array(fast.is_tombstone)}
    for name in _VALUE_FIELDS:
        cols[name] = _numeric(getattr(fast, name), has_value, lists[name], rest)
    for name in ("member_id", "value_json", "error_reason", "error_message"):
        cols[name] = _spread(gen[name], rest, n)
    # Known types only: the name is a lookup by record type wherever the row decoded.
    named = h.copy()
    named[rest] = [name is not None for name in lists["type_name"]]
    index = np.where(named, np.asarray(cols["record_type"].fill_null(0)), 0).astype(np.int64)
    cols["type_name"] = _TYPE_NAMES.take(pa.array(index, mask=~named))
    return pa.RecordBatch.from_arrays([cols[name] for name in OUTPUT_SCHEMA.names], schema=OUTPUT_SCHEMA)


def _single_chunk(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def _pylist(arr: pa.Array) -> list:
    """``arr.to_pylist()`` for a binary array, without Arrow's per-element scalar objects."""
    if not (pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type)):
        return arr.to_pylist()
    return binary_list(arr)


def _numeric(fast: np.ndarray, fast_valid: np.ndarray, generic: list, rest: np.ndarray) -> pa.Array:
    """Fast values where ``fast_valid`` (never on a ``rest`` row), generic values (one per
    ``rest`` row, None for null) on the ``rest`` rows."""
    nulls = generic.count(None)
    if nulls == len(generic):  # e.g. offset fields when no offset commit fell back
        return pa.array(fast, mask=~fast_valid)
    values, valid = fast.copy(), fast_valid.copy()
    if nulls == 0:
        values[rest] = generic
        valid[rest] = True
    else:
        present = np.array([x is not None for x in generic], bool)
        values[rest[present]] = [x for x in generic if x is not None]
        valid[rest] = present
    return pa.array(values, mask=~valid)


def _interleave(fast: pa.Array, generic: pa.Array, rest: np.ndarray) -> pa.Array:
    """Strings from ``fast`` (null on the rest rows) and ``generic`` (one per rest row)."""
    fast = fast.cast(pa.string())
    if generic.null_count == len(generic):  # fast is already null on every rest row
        return fast
    n = len(fast)
    idx = np.arange(n, dtype=np.int64)
    idx[rest] = n + np.arange(len(rest))
    return pa.concat_arrays([fast, generic]).take(pa.array(idx))


def _spread(generic: pa.Array, rest: np.ndarray, n: int) -> pa.Array:
    """A column only the generic path fills: ``generic[j]`` at row ``rest[j]``, null elsewhere.
    ``rest`` is ascending, so ``generic``'s bytes are already in row order: only the offsets
    need spreading, no bytes are copied."""
    if generic.null_count == len(generic):
        return pa.nulls(n, generic.type)
    lengths = np.zeros(n, np.int32)
    lengths[rest] = np.diff(np.frombuffer(generic.buffers()[1], np.int32)[:len(generic) + 1])
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    valid = np.zeros(n, bool)
    valid[rest] = np.asarray(generic.is_valid())
    offsets += np.frombuffer(generic.buffers()[1], np.int32)[0]
    return pa.Array.from_buffers(generic.type, n, [pa.py_buffer(np.packbits(valid, bitorder="little")),
                                                   pa.py_buffer(offsets), generic.buffers()[2] or pa.py_buffer(b"")])


def _topic_ids(fast: np.ndarray, fast_valid: np.ndarray, generic: pa.Array, rest: np.ndarray) -> pa.Array:
    """``binary`` topic ids (16 bytes where set) from the fast matrix and the generic rows."""
    matrix, valid = fast.copy(), fast_valid.copy()
    present = np.asarray(generic.is_valid())
    valid[rest] = present
    if present.any():
        raw = b"".join(generic.filter(pa.array(present)).to_pylist())
        matrix[rest[present]] = np.frombuffer(raw, np.uint8).reshape(-1, 16)
    offsets = np.arange(0, 16 * len(valid) + 1, 16, dtype=np.int32)
    return pa.Array.from_buffers(pa.binary(), len(valid), [
        pa.py_buffer(np.packbits(valid, bitorder="little")), pa.py_buffer(offsets),
        pa.py_buffer(np.ascontiguousarray(matrix))])


def _decode_generic(keys: list, values: list, with_value_json: bool,
                    decode_embedded: bool, kept: list | None = None) -> dict[str, list]:
    """Output columns (as Python lists, in :data:`_GENERIC` order) for the rows the fast path
    left, one decode each. Embedded blobs are decoded only where ``value_json`` shows them as
    objects (nothing else in a row depends on them), or everywhere when ``kept`` (a list) is to
    receive each decoded record (None where it did not decode)."""
    expand = with_value_json and decode_embedded
    rows = []
    append = rows.append
    for key, value in zip(keys, values):
        rec = None
        try:
            if key is None:
                raise DecodeError("record has a null key", stage="key")
            rec = decode_record_shallow(key, value)
            if type(rec) is UnknownRecord:
                raise UnknownRecordTypeError(rec.record_type, stage="key")
            blobs = expand and rec.record_type in RENDERED_AS_OBJECTS
            if blobs:
                rec.embedded_errors = expand_embedded(rec.record_type, rec.value)
            row = _row(rec, with_value_json, decode_embedded)
            if kept is not None and not blobs:   # after the JSON, which shows these blobs raw
                rec.embedded_errors = expand_embedded(rec.record_type, rec.value)
            append(row)
        except DecodeError as err:
            rec = None
            record_type = int.from_bytes(key[:2], "big", signed=True) if key and len(key) >= 2 else None
            append((record_type,) + _NO_FIELDS + (err.reason, err.describe()))
        if kept is not None:
            kept.append(rec)
    columns = list(zip(*rows)) if rows else [()] * len(_GENERIC)
    return dict(zip(_GENERIC, columns))


_NO_FIELDS = (None,) * (len(_GENERIC) - 3)  # everything between record_type and the error pair


def _row(rec, with_value_json: bool, decode_embedded: bool) -> tuple:
    """One decoded record as a tuple in :data:`_GENERIC` order."""
    key, value, t = rec.key, rec.value, rec.record_type
    trailing = (rec.trailing_bytes, rec.key_trailing_bytes, None, None)
    if t not in _OFFSET_TYPES:
        text = value_json_text(rec, decode_embedded=decode_embedded) if with_value_json else None
        return (t, rec.type_name, key_group_id(key), key.get("memberId"), None,
                None, rec.value_version, None, None, None, None, None, None, text) + trailing
    head = (t, rec.type_name, key["group"], None, key["topic"], key["partition"], rec.value_version)
    if value is None:
        return head + (None,) * 7 + trailing
    topic_id = value.get("topicId")
    return head + (value["offset"], value.get("leaderEpoch", -1), value["metadata"],
                   value["commitTimestamp"], value.get("expireTimestamp", -1),
                   None if topic_id is None else topic_id.bytes, None) + trailing

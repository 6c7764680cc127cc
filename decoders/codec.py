"""Public codec: ``(key bytes, value bytes | None)`` ⇄ typed coordinator records.

Framing::

    key   := recordType:int16  keyStruct            (always non-flexible, schema version 0)
    value := version:int16     valueStruct@version  (flexible per the type's flexibleVersions)
    value := <null>                                 (tombstone)

Rules:

* Unknown record type → :class:`UnknownRecord` with the raw bytes (Kafka's loader skips these);
  known type with a value version outside its valid versions → :class:`UnknownVersionError`
  (Kafka fails the partition load on that). Empty key/value → :class:`TruncatedError`.
* Layout selection (types whose id was reused with another v0 layout: 4, 5, 7, 8 in 3.7.0; 9 in
  3.9; 11 and 15 in 4.0): the current layout is tried first; if it raises a ``DecodeError``,
  leaves trailing bytes or only fits by reading unknown tagged fields, each older layout is tried
  in order and the first that consumes the value exactly with no unknown tags wins (``layout``
  names it). If none does, a current parse with leftovers is kept
  (``trailing_bytes`` > 0), else the current layout's error is raised.
* Trailing bytes after a value are accepted like Kafka does, but counted in ``trailing_bytes``
  (``key_trailing_bytes`` for keys) so audits can flag them.
* Unknown tagged fields are kept raw in ``unknown_tags`` (``{path: {tag: bytes}}``, path ``""`` for
  the top level, e.g. ``"assignedPartitions[0]"`` nested) and written back on encode.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .compiler import compile_reader
from .embedded import POST_DECODE, encode_embedded
from .errors import DecodeError, TruncatedError, UnknownRecordTypeError, UnknownVersionError
from .primitives import INT16, invalid_length
from .records_catalog import RECORD_TYPES
from .schema import RecordType
from .writer import encode_struct

_I16 = INT16.unpack_from


@dataclass(slots=True)
class CoordinatorRecord:
    """A decoded record. Field names in ``key``/``value`` are Kafka's JSON names."""

    record_type: int
    type_name: str
    key: dict
    value_version: int | None
    value: dict | None
    unknown_tags: dict = field(default_factory=dict)
    trailing_bytes: int = 0
    layout: str = "current"
    embedded_errors: tuple = ()
    key_trailing_bytes: int = 0

    @property
    def is_tombstone(self) -> bool:
        return self.value is None

    @property
    def group_id(self) -> str | None:
        return key_group_id(self.key)


def key_group_id(key_fields: dict | None) -> str | None:
    """The group id in a decoded key: Kafka names it ``group`` in types 0-2, ``groupId`` after."""
    if not key_fields:
        return None
    return key_fields["group"] if "group" in key_fields else key_fields.get("groupId")


@dataclass(slots=True)
class UnknownRecord:
    """A record whose key type has no description; raw bytes kept so nothing is lost."""

    record_type: int
    key: bytes
    value: bytes | None

    @property
    def is_tombstone(self) -> bool:
        return self.value is None


class _Entry:
    """Per-type compiled readers: ``values[version] = ((layout, reader), ...)``."""

    __slots__ = ("rt", "name", "key_reader", "values", "layout", "post")

    def __init__(self, rt: RecordType):
        self.rt = rt
        self.name = rt.name
        self.layout = rt.default_layout
        self.key_reader = compile_reader(rt.key, 0, False)
        self.values = {v: tuple((lay.name, compile_reader(lay.value, v, rt.is_flexible(v)))
                                for lay in rt.layouts())
                       for v in rt.versions}
        self.post = POST_DECODE.get(rt.record_type)


_ENTRIES: dict[int, _Entry] = {rid: _Entry(rt) for rid, rt in RECORD_TYPES.items()}


def decode_key(key: bytes) -> tuple[_Entry | None, int, dict | None, int]:
    """(entry, record type, key fields, key trailing bytes); entry None for an unknown type."""
    n = len(key)
    if n < 2:
        raise TruncatedError(2, n, stage="key", path="recordType")
    t = _I16(key, 0)[0]
    entry = _ENTRIES.get(t)
    if entry is None:
        return None, t, None, 0
    try:
        fields, pos = entry.key_reader(key, 2, n, None, None)
    except DecodeError as err:
        err.at(stage="key")
        raise
    return entry, t, fields, n - pos


def decode_record(key: bytes, value: bytes | None) -> CoordinatorRecord | UnknownRecord:
    """Decode one ``__consumer_offsets`` record; raises :class:`DecodeError` subclasses."""
    return _decode(key, value, True)


def decode_record_shallow(key: bytes, value: bytes | None) -> CoordinatorRecord | UnknownRecord:
    """:func:`decode_record` without expanding embedded consumer-protocol blobs: they stay bytes
    and ``embedded_errors`` stays empty. For callers that never look inside them (a blob that
    fails to decode stays raw bytes anyway, so nothing else differs); see
    :func:`decoders.embedded.expand_embedded` to expand them later."""
    return _decode(key, value, False)


def _decode(key, value, expand: bool) -> CoordinatorRecord | UnknownRecord:
    if type(key) is not bytes:
        key = bytes(key)
    # decode_key inlined: this is the per-record hot path.
    kn = len(key)
    if kn < 2:
        raise TruncatedError(2, kn, stage="key", path="recordType")
    t = _I16(key, 0)[0]
    entry = _ENTRIES.get(t)
    if entry is None:
        return UnknownRecord(t, key, None if value is None else bytes(value))
    try:
        kd, kpos = entry.key_reader(key, 2, kn, None, None)
    except DecodeError as err:
        err.at(stage="key")
        raise
    key_trailing = kn - kpos
    if value is None:
        return CoordinatorRecord(t, entry.name, kd, None, None, {}, 0, entry.layout, (), key_trailing)
    if type(value) is not bytes:
        value = bytes(value)
    n = len(value)
    if n < 2:
        raise TruncatedError(2, n, stage="value", path="version")
    version = _I16(value, 0)[0]
    layouts = entry.values.get(version)
    if layouts is None:
        raise UnknownVersionError(t, version, stage="value")
    layout, reader = layouts[0]
    unk: dict = {}
    try:
        vd, pos = reader(value, 2, n, unk, None)
    except DecodeError as err:
        if len(layouts) == 1:
            err.at(stage="value")
            raise
        layout, vd, pos, unk = _alternatives(layouts, value, err, None)
    else:
        # A current read that leaves bytes, or that only fits by finding tags no version of the
        # current layout ever wrote, is weaker evidence than an older layout read exactly.
        if (pos != n or unk) and len(layouts) > 1:
            layout, vd, pos, unk = _alternatives(layouts, value, None, (layout, vd, pos, unk))
    rec = CoordinatorRecord(t, entry.name, kd, version, vd, unk, n - pos, layout, (), key_trailing)
    if expand and entry.post is not None:
        rec.embedded_errors = tuple(entry.post(vd))
    return rec


def read_value_as(record_type: int, version: int, value: bytes, layout: str | None = None) -> dict:
    """Value fields read the way one release's generated class reads them: the struct of
    ``layout`` (default: the current one) at ``version``, whatever version the bytes announce,
    trailing bytes ignored, unknown tagged fields skipped (Kafka's ``read`` checks neither), and
    lengths taken as Java takes them (a varint wraps at 32 bits; any negative length is null).
    Raises :class:`DecodeError` where that reader would throw."""
    reader = _JAVA_READERS.get((record_type, layout, version))
    if reader is None:
        reader = _java_reader(record_type, version, layout)
    if len(value) < 2:
        raise TruncatedError(2, len(value), stage="value", path="version")
    try:
        fields, _ = reader(value, 2, len(value), {}, None)
    except (IndexError, ValueError, OverflowError) as err:
        # A negative tag size or length Java would hand to ByteBuffer.position: it throws too.
        raise invalid_length(f"{type(err).__name__}: {err}", None) from None
    return fields


# (record type, layout, version) -> compiled Java-lenient reader. compile_reader's own cache keys
# on the struct, whose hash walks the whole schema: too slow for a per-record lookup.
_JAVA_READERS: dict[tuple, object] = {}


def _java_reader(record_type: int, version: int, layout: str | None):
    rt = RECORD_TYPES.get(record_type)
    if rt is None or version not in rt.valid_versions:
        raise UnknownVersionError(record_type, version, stage="value")
    reader = compile_reader(rt.layout(layout or rt.default_layout), version, rt.is_flexible(version),
                            True)
    _JAVA_READERS[(record_type, layout, version)] = reader
    return reader


def _alternatives(layouts, value: bytes, error: DecodeError | None, partial):
    n = len(value)
    for name, reader in layouts[1:]:
        unk: dict = {}
        try:
            vd, pos = reader(value, 2, n, unk, None)
        except DecodeError:
            continue
        if pos == n and not unk:
            return name, vd, pos, unk
    if partial is not None:
        return partial
    raise error.at(stage="value")


# ---- encoding -------------------------------------------------------------------------------

def _record_type(record_type: int) -> RecordType:
    rt = RECORD_TYPES.get(record_type)
    if rt is None:
        raise UnknownRecordTypeError(record_type, stage="key")
    return rt


def encode_key(record_type: int, key: dict) -> bytes:
    """Key bytes; missing fields take their schema default."""
    return INT16.pack(record_type) + encode_struct(_record_type(record_type).key, 0, False, key)


def encode_value(record_type: int, version: int, value: dict | None, *, layout: str | None = None,
                 unknown_tags: dict | None = None) -> bytes | None:
    """Value bytes at ``version`` (None for a tombstone); embedded blob dicts are re-encoded."""
    if value is None:
        return None
    rt = _record_type(record_type)
    if version not in rt.valid_versions:
        raise UnknownVersionError(record_type, version, stage="value")
    st = rt.layout(layout or rt.default_layout)
    body = encode_struct(st, version, rt.is_flexible(version), encode_embedded(record_type, value),
                         unknown_tags)
    return INT16.pack(version) + body


def encode_record(rec: CoordinatorRecord | UnknownRecord) -> tuple[bytes, bytes | None]:
    """Bytes of a decoded (or hand-built) record; unknown records return their raw bytes."""
    if isinstance(rec, UnknownRecord):
        return rec.key, rec.value
    key = encode_key(rec.record_type, rec.key)
    if rec.value is None:
        return key, None
    return key, encode_value(rec.record_type, rec.value_version, rec.value, layout=rec.layout,
                             unknown_tags=rec.unknown_tags)

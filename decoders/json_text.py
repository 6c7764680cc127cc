"""Kafka's JSON of a decoded value as text, from renderers compiled once per (struct, version).

:func:`value_json_text` returns exactly ``dumps(value_json(rec, decode_embedded=...))``
(:mod:`decoders.kafka_json` defines the shape: schema order, absent-version fields omitted,
tagged fields only when they differ from their default, uuid URL-safe Base64 without padding,
bytes standard Base64), without building the intermediate dicts or walking the schema per record:
like the readers of :mod:`decoders.compiler`, each (struct, version, flexible, embedded) becomes
one generated function that formats its fields straight into an f-string.

The renderers trust their input to have the schema's Python types, as every decoded record has
(ints for integer fields, ``bool``, ``float``, ``str``, ``bytes`` or an
:class:`~decoders.embedded.EmbeddedBlob`, ``uuid.UUID``, dicts and lists); hand-built values of
other types belong to :func:`decoders.kafka_json.value_json`.
"""

from __future__ import annotations

import math
from binascii import b2a_base64
from functools import cache
from json.encoder import encode_basestring

from .catalog_embedded import ASSIGNMENT, SUBSCRIPTION
from .codec import CoordinatorRecord, UnknownRecord
from .embedded import HIGHEST, RENDERED_AS_OBJECTS, EmbeddedBlob, encode_blob
from .primitives import FIXED
from .records_catalog import RECORD_TYPES
from .schema import Field, Struct

_BLOB_STRUCTS = {"subscription": SUBSCRIPTION, "assignment": ASSIGNMENT}
_INTEGERS = frozenset(k for k in FIXED if k.startswith(("int", "uint")))


def _b64(raw) -> str:
    return '"' + b2a_base64(raw, newline=False).decode("ascii") + '"'


def _bytes(v) -> str:
    """A bytes field rendered as Base64; a decoded blob is re-encoded first (Kafka prints the raw
    bytes, and re-encoding a decoded blob reproduces them exactly)."""
    if type(v) is bytes:
        return _b64(v)
    if isinstance(v, EmbeddedBlob):
        v = encode_blob(v.kind, v)
    return _b64(bytes(v))


def _blob(v) -> str:
    """A bytes field where decoded blobs render as objects (DumpLogSegments' type-2 members)."""
    if isinstance(v, EmbeddedBlob):
        return _BLOB_RENDERERS[v.kind][min(v["version"], HIGHEST)](v)
    return _bytes(v)


def _uuid(u) -> str:
    return '"' + b2a_base64(u.bytes, newline=False).decode("ascii").rstrip("=").replace(
        "+", "-").replace("/", "_") + '"'


def _float(x: float) -> str:
    """``json.dumps``' float text (``allow_nan``: NaN, Infinity, -Infinity)."""
    if math.isfinite(x):
        return float.__repr__(x)
    return "NaN" if x != x else ("Infinity" if x > 0 else "-Infinity")


def _bool(x) -> str:
    return "true" if x else "false"


# Scalar kinds → (name in the generated namespace, function rendering one value).
_SCALARS = {"string": ("_enc", encode_basestring), "uuid": ("_uuid", _uuid), "bool": ("_bool", _bool),
            "float64": ("_float", _float), "bytes": ("_bytes", _bytes)}


class _Gen:
    """Generated renderers share one namespace; nested structs are calls to their own renderers."""

    def __init__(self) -> None:
        self.ns = {name: fn for name, fn in _SCALARS.values()}
        self.ns.update(_str=str, _blob=_blob, _map=map)
        self.sources: list[str] = []
        self.names: dict[tuple, str] = {}

    def const(self, value) -> str:
        name = f"_c{len(self.ns)}"
        self.ns[name] = value
        return name

    def struct(self, st: Struct, version: int, flexible: bool, embedded: bool) -> str:
        key = (id(st), version, flexible, embedded)
        if key not in self.names:
            name = self.names[key] = f"j_{len(self.names) + 1}"
            self.sources.append(self._source(name, st, version, flexible, embedded))
        return self.names[key]

    def _source(self, name: str, st: Struct, version: int, flexible: bool, embedded: bool) -> str:
        """One f-string over the fields' texts; an omitted tagged field contributes ''."""
        lines = [f"def {name}(d):"]
        pieces = []
        for i, f in enumerate(st.fields_at(version)):
            default = f.default_value(version)
            tagged = flexible and version in f.tagged
            lines.append(f"    v{i} = d.get({f.json_name!r}, {self.const(default)})")
            text = self._text(f, f"v{i}", version, flexible, embedded)
            if version in f.nullable or default is None or tagged:
                text = f"'null' if v{i} is None else {text}"
            head = ("," if pieces else "") + encode_basestring(f.json_name) + ":"
            if tagged:  # the separator goes with the field, so an omitted one leaves no trace
                lines.append(f"    t{i} = '' if v{i} == {self.const(default)} else {',' + head.lstrip(',')!r} + ({text})")
                pieces.append(f"{{t{i}}}")
            else:
                lines.append(f"    t{i} = {text}")
                pieces.append(f"{head}{{t{i}}}")
        body = "".join(pieces)
        if any(p.startswith("{") for p in pieces[:1]):  # a tagged first field: drop its comma
            lines += [f"    s = f{body!r}", "    return '{' + s[1:] + '}'"]
        else:
            lines.append(f"    return f{'{{' + body + '}}'!r}")
        return "\n".join(lines)

    def _text(self, f: Field, v: str, version: int, flexible: bool, embedded: bool) -> str:
        """Expression rendering the value held in ``v`` (not None)."""
        if f.struct is not None:
            fn = self.struct(f.struct, version, flexible, embedded)
            return f"'[' + ','.join([{fn}(e) for e in {v}]) + ']'" if f.is_array else f"{fn}({v})"
        fn = self._scalar(f.elem_type, embedded)
        return f"'[' + ','.join(_map({fn}, {v})) + ']'" if f.is_array else f"{fn}({v})"

    @staticmethod
    def _scalar(kind: str, embedded: bool) -> str:
        if kind in _INTEGERS:
            return "_str"
        if kind == "bytes" and embedded:
            return "_blob"
        return _SCALARS[kind][0]

    def build(self, name: str):
        exec(compile("\n\n".join(self.sources), "<decoders.json_text>", "exec"), self.ns)
        fn = self.ns[name]
        fn.__source__ = "\n\n".join(self.sources)
        return fn


@cache
def _renderer(st: Struct, version: int, flexible: bool, embedded: bool):
    """The compiled text renderer of ``st`` at ``version``; compiled once per key."""
    gen = _Gen()
    return gen.build(gen.struct(st, version, flexible, embedded))


_BLOB_RENDERERS = {kind: [_renderer(st, v, False, False) for v in range(HIGHEST + 1)]
                   for kind, st in _BLOB_STRUCTS.items()}


@cache
def _value_renderer(record_type: int, layout: str, version: int, embedded: bool):
    rt = RECORD_TYPES[record_type]
    return _renderer(rt.layout(layout), version, rt.is_flexible(version), embedded)


def value_json_text(rec: CoordinatorRecord | UnknownRecord, *, decode_embedded: bool = True) -> str | None:
    """``dumps(value_json(rec, decode_embedded=...))`` for a decoded record; None for a tombstone
    or an unknown record type. Type-2 member blobs render as objects only if they were expanded
    (:func:`decoders.codec.decode_record` does; ``decode_record_shallow`` leaves them bytes).

    >>> from decoders.codec import decode_record, encode_key, encode_value
    >>> rec = decode_record(encode_key(3, {"groupId": "g"}), encode_value(3, 0, {"epoch": 10}))
    >>> value_json_text(rec)
    '{"version":0,"data":{"epoch":10}}'
    """
    if type(rec) is UnknownRecord or rec.value is None:
        return None
    render = _value_renderer(rec.record_type, rec.layout, rec.value_version,
                             decode_embedded and rec.record_type in RENDERED_AS_OBJECTS)
    return f'{{"version":{rec.value_version},"data":{render(rec.value)}}}'

"""The one writer: encode a dict described by a :class:`~decoders.schema.Struct` at a version.

Used for fixtures, tests and re-encoding. Each (struct, version, flexible) is turned once into a
list of small closures. Absent fields take their schema default; tagged fields are written only
when they differ from their default (an explicit None included, where the default is an empty
struct or array), merged in tag order with unknown tags kept from a decode.
"""

from __future__ import annotations

import struct
from functools import cache

from . import primitives as P
from .schema import Field, Struct


def _child(path: str, name: str, index: int | None = None) -> str:
    text = f"{path}.{name}" if path else name
    return text if index is None else f"{text}[{index}]"


def _scalar_writer(kind: str, compact: bool, nullable: bool, name: str):
    if kind in P.FIXED:
        if kind == "uuid":
            return lambda out, v, unk, path: out.extend(v.bytes)
        pack = struct.Struct(">" + P.FIXED[kind][0]).pack
        return lambda out, v, unk, path: out.extend(pack(v))
    base = P.write_string if kind == "string" else P.write_bytes

    def write(out, v, unk, path):
        if v is None and not nullable:
            raise ValueError(f"field {path or name} is not nullable")
        base(out, v if v is None or kind == "string" else bytes(v), compact)
    return write


def _field_writer(f: Field, version: int, flexible: bool):
    nullable = version in f.nullable
    if f.is_array:
        if f.struct is not None:
            elem = compile_writer(f.struct, version, flexible)
        else:
            elem = _scalar_writer(f.elem_type, flexible, False, f.name)

        def write_array(out, v, unk, path):
            if v is None:
                if not nullable:
                    raise ValueError(f"field {path} is not nullable")
                P.write_length(out, -1, 4, flexible)
                return
            P.write_length(out, len(v), 4, flexible)
            for i, e in enumerate(v):
                elem(out, e, unk, f"{path}[{i}]")
        return write_array
    if f.struct is not None:
        inner = compile_writer(f.struct, version, flexible)
        # Presence marker: int8 1 / -1 inline; in a tag payload 1 / 0 (what Kafka 4.3.1 writes).
        null_marker = 0 if flexible and version in f.tagged else 0xFF

        def write_struct(out, v, unk, path):
            if nullable:
                if v is None:
                    out.append(null_marker)
                    return
                out.append(1)
            elif v is None:
                raise ValueError(f"field {path} is not nullable")
            inner(out, v, unk, path)
        return write_struct
    return _scalar_writer(f.type, flexible, nullable, f.name)


@cache
def compile_writer(st: Struct, version: int, flexible: bool):
    """``write(out: bytearray, value: dict, unk: dict, path: str)`` for ``st`` at ``version``."""
    plain, tagged = [], []
    for f in st.fields_at(version):
        is_tagged = flexible and version in f.tagged
        entry = (f.json_name, f, _field_writer(f, version, flexible))
        (tagged if is_tagged else plain).append(entry)
    tagged.sort(key=lambda e: e[1].tag)

    def write(out: bytearray, value: dict, unk: dict, path: str) -> None:
        for name, f, w in plain:
            v = value[name] if name in value else f.default_value(version)
            w(out, v, unk, _child(path, name))
        if not flexible:
            return
        fields = {}
        for name, f, w in tagged:
            v = value[name] if name in value else f.default_value(version)
            if v != f.default_value(version):
                buf = bytearray()
                w(buf, v, unk, _child(path, name))
                fields[f.tag] = bytes(buf)
        for tag, raw in (unk or {}).get(path, {}).items():
            fields.setdefault(tag, raw)
        P.write_uvarint(out, len(fields))
        for tag in sorted(fields):
            P.write_uvarint(out, tag)
            P.write_uvarint(out, len(fields[tag]))
            out += fields[tag]
    return write


def encode_struct(st: Struct, version: int, flexible: bool, value: dict,
                  unknown_tags: dict | None = None) -> bytes:
    out = bytearray()
    compile_writer(st, version, flexible)(out, value, unknown_tags or {}, "")
    return bytes(out)

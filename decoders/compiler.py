"""Compile a :class:`~decoders.schema.Struct` at one version into a specialised Python reader.

For each (struct, version, flexible) we generate straight-line Python source once and ``exec`` it:
runs of fixed-width fields become a single precompiled ``struct.Struct.unpack_from``, strings and
lengths are read inline with their bounds checks, arrays of fixed-width elements are unpacked in
one call, and nested structs are calls to their own generated readers. The hot path therefore
never walks the schema per record.

Generated reader signature: ``read(buf, pos, end, unk, path) -> (dict, new_pos)`` where ``unk``
collects unknown tagged fields as ``{rendered path: {tag: raw bytes}}`` and ``path`` is a lazy
``(parent, name, index)`` tuple (rendered only in errors). ``buf`` must be ``bytes``.
"""

from __future__ import annotations

import struct
from functools import cache

from . import primitives as P
from .schema import Field, Struct

_NS_BASE = {
    "_trunc": P.truncated, "_invlen": P.invalid_length, "_utf8": P.utf8, "_str": str,
    "_uvarint": P.read_uvarint, "_null": P.null_or_error,
    "_uuid": P.make_uuid, "_UC": P.UUID_CACHE.get, "_I16": P.INT16.unpack_from, "_I32": P.INT32.unpack_from,
    "_UUIDS": P.UUID_HALVES.unpack_from, "_unpack": struct.unpack_from, "_render": P.render_path,
}


def _uuid_lines(v: str, ind: str) -> list[str]:
    """Shared UUID objects: the cache lookup is inlined, the miss path builds and caches one."""
    return [f"{ind}{v} = {v}_h << 64 | {v}_l",
            f"{ind}{v} = _UC({v}) or _uuid({v})"]


def _null_call(nullable: bool, kind: str, path: str) -> str:
    """A negative length ``n``: None when nullable and -1 (inlined: the common case), else the
    typed error."""
    error = f"_null(n, {nullable}, {kind!r}, {path})"
    return f"None if n == -1 else {error}" if nullable else error


def _unknown_tag(unk: dict, path, tag: int, raw: bytes) -> None:
    unk.setdefault(P.render_path(path), {})[tag] = raw


# Reading as a Java release does (decoders.codec.read_value_as): Kafka's own varint and null rules.
_NS_JAVA = {"_uvarint": P.read_uvarint_java, "_null": P.null_or_error_java}


class _Gen:
    """Accumulates generated functions and the constants they reference."""

    def __init__(self, java: bool = False) -> None:
        self.ns = dict(_NS_BASE, _unknown=_unknown_tag, **(_NS_JAVA if java else {}))
        self.sources: list[str] = []
        self.names: dict[tuple, str] = {}
        self.counter = 0

    def new(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def const(self, value) -> str:
        name = self.new("_c")
        self.ns[name] = value
        return name

    def struct_reader(self, st: Struct, version: int, flexible: bool) -> str:
        key = (id(st), version, flexible)
        if key not in self.names:
            name = self.names[key] = self.new("r_")
            self.sources.append(self._struct_source(name, st, version, flexible))
        return self.names[key]

    # ---- struct body -------------------------------------------------------------------

    def _struct_source(self, name: str, st: Struct, version: int, flexible: bool) -> str:
        out = [f"def {name}(buf, pos, end, unk, path):"]
        fields = st.fields_at(version)
        tagged = [f for f in fields if flexible and version in f.tagged]
        plain = [f for f in fields if f not in tagged]
        var = {f.name: f"v{i}" for i, f in enumerate(fields)}
        i = 0
        while i < len(plain):
            run = [plain[i]]
            while (run[-1].type in P.FIXED and i + len(run) < len(plain)
                   and plain[i + len(run)].type in P.FIXED):
                run.append(plain[i + len(run)])
            if run[0].type in P.FIXED:
                out += self._fixed_run(run, var, "    ")
                i += len(run)
            else:
                out += self._field(plain[i], var[plain[i].name], version, flexible, "    ")
                i += 1
        if flexible:
            out += self._tag_section(tagged, var, version, "    ")
        items = ", ".join(f"{f.json_name!r}: {var[f.name]}" for f in fields)
        out.append(f"    return {{{items}}}, pos")
        return "\n".join(out)

    def _fixed_run(self, run: list[Field], var: dict, ind: str) -> list[str]:
        fmt = ">" + "".join(P.FIXED[f.type][0] for f in run)
        size = struct.calcsize(fmt)
        s = self.const(struct.Struct(fmt).unpack_from)
        targets = []
        for f in run:
            targets += [f"{var[f.name]}_h", f"{var[f.name]}_l"] if f.type == "uuid" else [var[f.name]]
        lines = [f"{ind}if end - pos < {size}: raise _trunc({size}, end - pos, (path, {run[0].json_name!r}, None))",
                 f"{ind}{', '.join(targets)}, = {s}(buf, pos)",
                 f"{ind}pos += {size}"]
        for f in run:
            if f.type == "uuid":
                v = var[f.name]
                lines += _uuid_lines(v, ind)
        return lines

    # ---- single fields -----------------------------------------------------------------

    def _field(self, f: Field, v: str, version: int, flexible: bool, ind: str,
               path: str | None = None, in_tag: bool = False) -> list[str]:
        path = path or f"(path, {f.json_name!r}, None)"
        nullable = version in f.nullable
        if f.is_array:
            return self._array(f, v, version, flexible, nullable, ind, path)
        if f.struct is not None:
            reader = self.struct_reader(f.struct, version, flexible)
            call = f"{v}, pos = {reader}(buf, pos, end, unk, {path})"
            if not nullable:
                return [ind + call]
            # Nullable struct: a presence marker. Untagged it is an int8, negative = null (Kafka
            # reads readByte() < 0); in a tag payload 0 = null (Kafka 4.3.1 writes 01 00 01 00).
            is_null = "buf[pos] == 0" if in_tag else "buf[pos] >= 128"
            return [f"{ind}if pos >= end: raise _trunc(1, 0, {path})",
                    f"{ind}if {is_null}:", f"{ind}    {v} = None", f"{ind}    pos += 1",
                    f"{ind}else:", f"{ind}    pos += 1", f"{ind}    {call}"]
        return self._scalar(f.type, v, flexible, nullable, ind, path)

    def _scalar(self, kind: str, v: str, compact: bool, nullable: bool, ind: str, path: str) -> list[str]:
        if kind in P.FIXED:
            fmt, size = P.FIXED[kind]
            lines = [f"{ind}if end - pos < {size}: raise _trunc({size}, end - pos, {path})"]
            if kind == "uuid":
                lines += [f"{ind}{v}_h, {v}_l = _UUIDS(buf, pos)", *_uuid_lines(v, ind)]
            else:
                lines.append(f"{ind}{v} = {self.const(struct.Struct('>' + fmt).unpack_from)}(buf, pos)[0]")
            return lines + [f"{ind}pos += {size}"]
        width = 2 if kind == "string" else 4
        lines = self._length("n", width, compact, ind, path)
        lines += [f"{ind}if n < 0:", f"{ind}    {v} = {_null_call(nullable, kind, path)}", f"{ind}else:"]
        body = ind + "    "
        if kind == "string" and compact:  # an int16 length cannot exceed the limit
            lines.append(f"{body}if n > {P.MAX_STRING}: raise _invlen('string length %d exceeds {P.MAX_STRING}' % n, {path})")
        lines.append(f"{body}if end - pos < n: raise _trunc(n, end - pos, {path})")
        if kind == "string":
            lines += [f"{body}try:", f"{body}    {v} = _str(buf[pos:pos + n], 'utf-8')",
                      f"{body}except UnicodeDecodeError:", f"{body}    _utf8(buf, pos, pos + n, {path})"]
        else:
            lines.append(f"{body}{v} = buf[pos:pos + n]")
        return lines + [f"{body}pos += n"]

    @staticmethod
    def _length(n: str, width: int, compact: bool, ind: str, path: str) -> list[str]:
        """Read a length into ``n``; null is -1 in both encodings."""
        if compact:
            return [f"{ind}if pos >= end: raise _trunc(1, 0, {path})",
                    f"{ind}{n} = buf[pos]",
                    f"{ind}if {n} < 128:", f"{ind}    pos += 1",
                    f"{ind}else:", f"{ind}    {n}, pos = _uvarint(buf, pos, end, {path})",
                    f"{ind}{n} -= 1"]
        unpack = "_I16" if width == 2 else "_I32"
        return [f"{ind}if end - pos < {width}: raise _trunc({width}, end - pos, {path})",
                f"{ind}{n} = {unpack}(buf, pos)[0]", f"{ind}pos += {width}"]

    def _array(self, f: Field, v: str, version: int, flexible: bool, nullable: bool, ind: str,
               path: str) -> list[str]:
        elem = f.elem_type
        lines = self._length("n", 4, flexible, ind, path)
        lines += [f"{ind}if n < 0:", f"{ind}    {v} = {_null_call(nullable, 'array', path)}", f"{ind}else:"]
        body = ind + "    "
        if elem in P.FIXED and elem != "uuid":
            fmt, size = P.FIXED[elem]
            # Bounds first: a forged count must never size an allocation.
            unpack = self.const(P.array_unpackers(fmt))  # precompiled for short arrays
            lines += [f"{body}if end - pos < n * {size}: raise _trunc(n * {size}, end - pos, {path})",
                      f"{body}{v} = list({unpack}[n](buf, pos) if n < {P.SHORT_ARRAY} else _unpack('>%d{fmt}' % n, buf, pos))",
                      f"{body}pos += n * {size}"]
            return lines
        lines += [f"{body}if n > end - pos: raise _trunc(n, end - pos, {path})",
                  f"{body}{v} = []", f"{body}_app = {v}.append", f"{body}for i in range(n):"]
        inner = body + "    "
        epath = f"(path, {f.json_name!r}, i)"
        if f.struct is not None:
            reader = self.struct_reader(f.struct, version, flexible)
            lines.append(f"{inner}e, pos = {reader}(buf, pos, end, unk, {epath})")
        else:
            lines += self._scalar(elem, "e", flexible, False, inner, epath)
        return lines + [f"{inner}_app(e)"]

    # ---- tagged fields -----------------------------------------------------------------

    def _tag_section(self, tagged: list[Field], var: dict, version: int, ind: str) -> list[str]:
        lines = []
        for f in tagged:
            default = f.default_value(version)  # an empty array/struct: a fresh literal per record
            lines.append(f"{ind}{var[f.name]} = {self.const(default)}" if not isinstance(default, (list, dict))
                         else f"{ind}{var[f.name]} = {default!r}")
        lines += [f"{ind}if pos >= end: raise _trunc(1, 0, (path, '_tagged_fields', None))",
                  f"{ind}nt = buf[pos]", f"{ind}pos += 1", f"{ind}if nt:",
                  f"{ind}    if nt >= 128: nt, pos = _uvarint(buf, pos - 1, end, path)",
                  f"{ind}    for _ in range(nt):",
                  *self._uvarint_inline("tag", ind + "        ", "(path, '_tagged_fields', None)"),
                  *self._uvarint_inline("size", ind + "        ", "(path, '_tagged_fields', None)"),
                  f"{ind}        if size > end - pos: raise _trunc(size, end - pos, (path, '_tag', tag))",
                  f"{ind}        te = pos + size"]
        kw = "if"
        for f in tagged:
            v = var[f.name]
            if f.type in P.FIXED:
                # Fixed width: the size must match exactly; unpack in place, no call.
                fmt, width = P.FIXED[f.type]
                lines += [f"{ind}        {kw} tag == {f.tag}:",
                          f"{ind}            if size != {width}: raise _invlen('tagged field {f.name} (tag {f.tag}) has size %d, expected {width}' % size, (path, {f.json_name!r}, None))"]
                if f.type == "uuid":
                    lines += [f"{ind}            {v}_h, {v}_l = _UUIDS(buf, pos)",
                              *_uuid_lines(v, ind + "            ")]
                else:
                    lines.append(f"{ind}            {v} = {self.const(struct.Struct('>' + fmt).unpack_from)}(buf, pos)[0]")
                kw = "elif"
                continue
            reader = self._tag_reader(f, version)
            lines += [f"{ind}        {kw} tag == {f.tag}:",
                      f"{ind}            {v}, p2 = {reader}(buf, pos, te, unk, path)",
                      f"{ind}            if p2 != te: raise _invlen('tagged field {f.name} (tag {f.tag}) has size %d but its value used %d' % (size, p2 - pos), (path, {f.json_name!r}, None))"]
            kw = "elif"
        if tagged:
            lines += [f"{ind}        else:", f"{ind}            _unknown(unk, path, tag, buf[pos:te])"]
        else:
            lines.append(f"{ind}        _unknown(unk, path, tag, buf[pos:te])")
        lines.append(f"{ind}        pos = te")
        return lines

    @staticmethod
    def _uvarint_inline(target: str, ind: str, path: str) -> list[str]:
        """Tag numbers and sizes are almost always one byte: inline that case."""
        return [f"{ind}if pos >= end: raise _trunc(1, 0, {path})",
                f"{ind}{target} = buf[pos]",
                f"{ind}if {target} < 128:", f"{ind}    pos += 1",
                f"{ind}else:", f"{ind}    {target}, pos = _uvarint(buf, pos, end, {path})"]

    def _tag_reader(self, f: Field, version: int) -> str:
        """A tag payload is the field's flexible encoding; a nullable struct gets a presence byte
        (0 = null)."""
        name = self.new("t_")
        out = [f"def {name}(buf, pos, end, unk, path):"]
        out += self._field(f, "v", version, True, "    ", in_tag=True)
        out.append("    return v, pos")
        self.sources.append("\n".join(out))
        return name

    def build(self) -> dict:
        exec(compile("\n\n".join(self.sources), "<decoders.compiler>", "exec"), self.ns)
        return self.ns


@cache
def compile_reader(st: Struct, version: int, flexible: bool, java: bool = False):
    """The compiled reader of ``st`` at ``version``; compiled once per (struct, version, flexible).
    ``java``: lengths and nulls exactly as Kafka's generated ``read`` takes them (varints wrap at
    32 bits, any negative length is null), for judging what a release makes of some bytes."""
    gen = _Gen(java)
    name = gen.struct_reader(st, version, flexible)
    reader = gen.build()[name]
    reader.__source__ = "\n\n".join(gen.sources)
    return reader

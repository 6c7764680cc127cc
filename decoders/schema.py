"""The description DSL: coordinator record schemas as plain data.

A record type is described once, the way Kafka's message generator describes it (names, types,
``versions``, ``nullableVersions``, ``taggedVersions``/``tag``, ``default``); the compiler and the
writer interpret these descriptions. Nothing in here knows about bytes.

Defaults follow Kafka's generator: unspecified (:data:`MISSING`, or :data:`EMPTY` where Kafka's
JSON says ``"default": null``) is the type's empty value, an empty struct included; ``None`` is a
real null default (Kafka's string ``"null"``).

Version ranges use Kafka's notation: ``"0+"``, ``"3+"``, ``"1"``, ``"0-4"``, ``"none"``.

Example::

    TOPIC = S("TopicPartition", F("TopicId", "uuid"), F("Partitions", "[]int32"))
    VALUE = S("ShareGroupTargetAssignmentMemberValue", F("TopicPartitions", arr(TOPIC)))
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field as dc_field
from typing import Any

PRIMITIVES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint16", "uint32", "float64",
                        "string", "bytes", "uuid"})
ZERO_UUID = uuid.UUID(int=0)


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


class _Empty:
    def __repr__(self) -> str:
        return "EMPTY"


MISSING: Any = _Missing()
# Kafka's JSON schemas write ``"default": null`` on some tagged fields, but the message generator
# reads ``default`` as a string and a JSON null as "" (unspecified): the default is the type's
# empty value (empty struct, empty array), not null. Only the string ``"null"`` is a null default
# (``default=None`` here). EMPTY marks the JSON-null case so it is not mistaken for a null default.
EMPTY: Any = _Empty()


@dataclass(frozen=True, slots=True)
class Versions:
    """An inclusive version range; ``hi is None`` means open-ended, ``lo is None`` means none."""

    lo: int | None
    hi: int | None

    @staticmethod
    def parse(text: str | None) -> Versions:
        if text is None or text == "none":
            return Versions(None, None)
        text = str(text)
        if text.endswith("+"):
            return Versions(int(text[:-1]), None)
        if "-" in text:
            lo, hi = text.split("-")
            return Versions(int(lo), int(hi))
        return Versions(int(text), int(text))

    def __contains__(self, version: int) -> bool:
        if self.lo is None:
            return False
        return version >= self.lo and (self.hi is None or version <= self.hi)


@dataclass(frozen=True, slots=True)
class Field:
    """One field. ``type`` is Kafka's type string (``int32``, ``[]int32``, ``[]TopicPartitions``,
    ``Endpoint``); ``struct`` holds the element/inline struct for struct-typed fields."""

    name: str
    type: str
    versions: Versions
    nullable: Versions
    tagged: Versions
    tag: int | None
    default: Any
    struct: Struct | None = None

    @property
    def json_name(self) -> str:
        """Kafka's JSON converters use the schema name with its first letter lower-cased."""
        return self.name[:1].lower() + self.name[1:]

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def elem_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    def default_value(self, version: int) -> Any:
        """The value a writer assumes when the field is not set (and a reader when a tag is absent)."""
        if self.default is not MISSING and self.default is not EMPTY:
            return self.default
        if self.is_array:
            return []
        if self.struct is not None:  # Kafka's ``new X()``, nullable or not
            return self.struct.default_dict(version)
        return _TYPE_DEFAULTS[self.type]


_TYPE_DEFAULTS = {"bool": False, "int8": 0, "int16": 0, "int32": 0, "int64": 0, "uint16": 0,
                  "uint32": 0, "float64": 0.0, "string": "", "bytes": b"", "uuid": ZERO_UUID}


@dataclass(frozen=True, slots=True)
class Struct:
    name: str
    fields: tuple[Field, ...]

    def fields_at(self, version: int) -> list[Field]:
        return [f for f in self.fields if version in f.versions]

    def default_dict(self, version: int) -> dict:
        return {f.json_name: f.default_value(version) for f in self.fields_at(version)}


@dataclass(frozen=True, slots=True)
class ArrayOf:
    """Marks a struct used as an array element (``arr(S)``) in :func:`F`."""

    struct: Struct


def S(name: str, *fields: Field) -> Struct:
    return Struct(name, tuple(fields))


def arr(struct: Struct) -> ArrayOf:
    return ArrayOf(struct)


def F(name: str, type_: str | Struct | ArrayOf, v: str = "0+", *, nullable: str | None = None,
      tag: int | None = None, tagged: str | None = None, default: Any = MISSING) -> Field:
    """Build a field. ``tag`` without ``tagged`` means "tagged in every version the field exists"."""
    struct = None
    if isinstance(type_, ArrayOf):
        struct, type_ = type_.struct, "[]" + type_.struct.name
    elif isinstance(type_, Struct):
        struct, type_ = type_, type_.name
    elif type_ not in PRIMITIVES and not (type_.startswith("[]") and type_[2:] in PRIMITIVES):
        raise ValueError(f"unknown type {type_!r} for field {name}")
    if tag is not None and tagged is None:
        tagged = v
    return Field(name, type_, Versions.parse(v), Versions.parse(nullable), Versions.parse(tagged),
                 tag, default, struct)


@dataclass(frozen=True, slots=True)
class Layout:
    """A value layout that reuses a type id: ``name`` like ``"historical/3.7.0"``."""

    name: str
    value: Struct


@dataclass(frozen=True, slots=True)
class RecordType:
    """One coordinator record type: key struct, value struct, version ranges, and older layouts.

    ``status`` is ``active``, ``deprecated``, ``removed`` or ``unverified``. ``alternatives`` are
    tried in order when ``value`` does not consume a value exactly (see :mod:`decoders.codec`).
    """

    record_type: int
    name: str
    key: Struct
    value: Struct
    valid_versions: Versions
    flexible_versions: Versions
    status: str = "active"
    alternatives: tuple[Layout, ...] = dc_field(default=())

    @property
    def versions(self) -> range:
        v = self.valid_versions
        return range(v.lo, v.hi + 1)

    @property
    def default_layout(self) -> str:
        return "removed" if self.status == "removed" else (
            "unverified" if self.status == "unverified" else "current")

    def layouts(self) -> list[Layout]:
        return [Layout(self.default_layout, self.value), *self.alternatives]

    def layout(self, name: str) -> Struct:
        for lay in self.layouts():
            if lay.name == name:
                return lay.value
        raise KeyError(f"record type {self.record_type} has no layout {name!r}")

    def is_flexible(self, version: int) -> bool:
        return version in self.flexible_versions

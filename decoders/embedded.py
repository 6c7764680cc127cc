"""Embedded consumer-protocol blobs (ConsumerProtocolSubscription / ConsumerProtocolAssignment).

Wire: ``version:int16`` then the struct, never flexible. Like the Java client, a version above 3
is read with the v3 layout; a negative version, or any decode failure, leaves the blob as raw
bytes (DumpLogSegments then prints Base64). Bytes after the struct are kept on the decoded blob
(``trailing``) so re-encoding reproduces the original exactly.

Decoded where Kafka's own tools do: ``GroupMetadataValue.members[].subscription/assignment``
when ``protocolType == "consumer"``; additionally
``ConsumerGroupMemberMetadataValue.ClassicMemberMetadata.SupportedProtocols[].Metadata``
(a subscription). Zero-length blobs (members without an assignment yet) stay ``b""``.
"""

from __future__ import annotations

from .catalog_embedded import ASSIGNMENT, SUBSCRIPTION
from .compiler import compile_reader
from .errors import DecodeError
from .primitives import INT16
from .writer import encode_struct

_I16 = INT16.unpack_from

STRUCTS = {"subscription": SUBSCRIPTION, "assignment": ASSIGNMENT}
HIGHEST = 3
# Compiled once at import, like the record readers: _READERS[kind][version].
_READERS = {kind: [compile_reader(st, v, False) for v in range(HIGHEST + 1)]
            for kind, st in STRUCTS.items()}


class EmbeddedBlob(dict):
    """A decoded blob: ``{"version": v, <JSON-named fields>...}``; ``kind`` is ``subscription`` or
    ``assignment``; ``trailing`` holds bytes left after the struct (normally ``b""``)."""

    __slots__ = ("kind", "trailing")

    def __init__(self, kind: str, fields: dict, trailing: bytes = b""):
        super().__init__(fields)
        self.kind = kind
        self.trailing = trailing

    def __reduce__(self):
        return (EmbeddedBlob, (self.kind, dict(self), self.trailing))


_new_blob = dict.__new__


def decode_blob(kind: str, raw: bytes) -> EmbeddedBlob | None:
    """The decoded blob, or None when ``raw`` is not a valid blob of this kind."""
    if len(raw) < 2:
        return None
    version = _I16(raw, 0)[0]
    if version < 0:
        return None
    try:
        fields, pos = _READERS[kind][version if version < HIGHEST else HIGHEST](raw, 2, len(raw), None, None)
    except DecodeError:
        return None
    # EmbeddedBlob(kind, {"version": version, **fields}, raw[pos:]) without the intermediate dict.
    blob = _new_blob(EmbeddedBlob)
    blob["version"] = version
    blob.update(fields)
    blob.kind = kind
    blob.trailing = raw[pos:]
    return blob


def encode_blob(kind: str, blob: dict) -> bytes:
    """Bytes of a decoded (or hand-built, with a ``version`` key) blob."""
    version = blob["version"]
    body = encode_struct(STRUCTS[kind], min(version, HIGHEST), False, blob)
    return INT16.pack(version) + body + getattr(blob, "trailing", b"")


def decode_group_members(value: dict) -> list[str]:
    """Type 2: decode member blobs in place; returns paths of non-empty blobs left raw."""
    if value.get("protocolType") != "consumer":
        return []
    failed = []
    for i, member in enumerate(value.get("members") or ()):
        for kind in ("subscription", "assignment"):
            raw = member.get(kind)
            if not raw:
                continue
            blob = decode_blob(kind, raw)
            if blob is None:
                failed.append(f"members[{i}].{kind}")
            else:
                member[kind] = blob
    return failed


def decode_classic_protocols(value: dict) -> list[str]:
    """Type 5: decode ``ClassicMemberMetadata.SupportedProtocols[].Metadata`` in place."""
    classic = value.get("classicMemberMetadata")
    if not classic:
        return []
    failed = []
    for i, proto in enumerate(classic.get("supportedProtocols") or ()):
        raw = proto.get("metadata")
        if not raw:
            continue
        blob = decode_blob("subscription", raw)
        if blob is None:
            failed.append(f"classicMemberMetadata.supportedProtocols[{i}].metadata")
        else:
            proto["metadata"] = blob
    return failed


def encode_embedded(record_type: int, value: dict) -> dict:
    """A shallow-copied value whose embedded blobs (dicts) are bytes again, ready for the writer."""
    if record_type == 2 and value.get("members"):
        members = []
        for m in value["members"]:
            m = dict(m)
            for kind in ("subscription", "assignment"):
                if isinstance(m.get(kind), dict):
                    m[kind] = encode_blob(kind, m[kind])
            members.append(m)
        return {**value, "members": members}
    if record_type == 5 and value.get("classicMemberMetadata"):
        classic = dict(value["classicMemberMetadata"])
        protos = []
        for p in classic.get("supportedProtocols") or ():
            if isinstance(p.get("metadata"), dict):
                p = {**p, "metadata": encode_blob("subscription", p["metadata"])}
            protos.append(p)
        classic["supportedProtocols"] = protos
        return {**value, "classicMemberMetadata": classic}
    return value


POST_DECODE = {2: decode_group_members, 5: decode_classic_protocols}
# Record types whose decoded blobs Kafka's JSON renders as objects (DumpLogSegments' type-2
# members); elsewhere a blob renders as the Base64 of its bytes, decoded or not.
RENDERED_AS_OBJECTS = frozenset({2})


def expand_embedded(record_type: int, value: dict | None) -> tuple[str, ...]:
    """Decode, in place, the blobs of a value decoded without them
    (:func:`decoders.codec.decode_record_shallow`); returns the paths of blobs left raw."""
    post = POST_DECODE.get(record_type)
    return () if post is None or value is None else tuple(post(value))

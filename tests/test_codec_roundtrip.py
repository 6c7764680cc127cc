"""Round trips for every record type x every valid value version x every layout (hypothesis).

Values are drawn from the descriptions; the oracle is the byte level: encode → decode gives the
same fields, and re-encoding the decoded record gives the identical bytes. Primitive codecs get
their own property tests against independent formulas.
"""

from __future__ import annotations

import struct
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoders import decode_record, encode_key, encode_record, encode_value
from decoders import primitives as P
from decoders.embedded import EmbeddedBlob, encode_blob
from decoders.records_catalog import RECORD_TYPES
from decoders.schema import Field, Struct

_INTS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)


def field_strategy(f: Field, version: int, elem: bool = False):
    kind = f.elem_type if (f.is_array and not elem) or elem else f.type
    if f.is_array and not elem:
        inner = field_strategy(f, version, elem=True)
        base = st.lists(inner, max_size=3)
    elif f.struct is not None:
        base = struct_strategy(f.struct, version)
    elif kind in _INTS:
        bits = _INTS[kind]
        base = st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    elif kind == "uint16":
        base = st.integers(0, 0xFFFF)
    elif kind == "uint32":
        base = st.integers(0, 0xFFFFFFFF)
    elif kind == "bool":
        base = st.booleans()
    elif kind == "float64":
        base = st.floats(allow_nan=False)
    elif kind == "string":
        base = _TEXT
    elif kind == "bytes":
        base = st.binary(max_size=8)
    elif kind == "uuid":
        base = st.one_of(st.just(uuid.UUID(int=0)), st.uuids())
    else:
        raise AssertionError(kind)
    if not elem and version in f.nullable:
        return st.one_of(st.none(), base)
    return base


def struct_strategy(s: Struct, version: int):
    return st.fixed_dictionaries({f.json_name: field_strategy(f, version) for f in s.fields_at(version)})


def _normalise(v):
    """Decoded embedded blobs compare as their bytes (they re-encode exactly)."""
    if isinstance(v, EmbeddedBlob):
        return encode_blob(v.kind, v)
    if isinstance(v, dict):
        return {k: _normalise(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_normalise(x) for x in v]
    return v


CASES = [(rid, v, lay.name) for rid, rt in RECORD_TYPES.items() for v in rt.versions
         for lay in rt.layouts()]


@pytest.mark.parametrize("record_type,version,layout", CASES,
                         ids=[f"{r}-v{v}-{lay}" for r, v, lay in CASES])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_round_trip(record_type, version, layout, data):
    rt = RECORD_TYPES[record_type]
    key_dict = data.draw(struct_strategy(rt.key, 0), label="key")
    value_dict = data.draw(struct_strategy(rt.layout(layout), version), label="value")
    key = encode_key(record_type, key_dict)
    value = encode_value(record_type, version, value_dict, layout=layout)
    rec = decode_record(key, value)
    assert rec.record_type == record_type and rec.type_name == rt.name
    assert rec.key == key_dict
    assert rec.value_version == version and rec.trailing_bytes == 0
    assert encode_record(rec) == (key, value)
    if rec.layout == layout:
        assert _normalise(rec.value) == value_dict
    else:
        # Only an older layout may be shadowed, and only by bytes the newer one reads exactly.
        assert layout != rt.default_layout


@pytest.mark.parametrize("record_type", sorted(RECORD_TYPES))
def test_tombstone_round_trip(record_type):
    rt = RECORD_TYPES[record_type]
    key = encode_key(record_type, rt.key.default_dict(0))
    rec = decode_record(key, None)
    assert rec.is_tombstone and rec.value is None and rec.value_version is None
    assert encode_record(rec) == (key, None)


def test_encode_value_fills_defaults():
    value = encode_value(1, 3, {"offset": 7, "commitTimestamp": 9})
    assert value.hex() == "0003" "0000000000000007" "ffffffff" "0000" "0000000000000009"


# ---- primitives -----------------------------------------------------------------------------

@given(st.integers(0, 0xFFFFFFFF))
def test_uvarint(n):
    out = bytearray()
    P.write_uvarint(out, n)
    expected = bytearray()
    m = n
    while True:  # independent LEB128 formula
        byte, m = m & 0x7F, m >> 7
        expected.append(byte | (0x80 if m else 0))
        if not m:
            break
    assert out == expected
    assert P.read_uvarint(bytes(out), 0, len(out)) == (n, len(out))


@given(st.integers(-(1 << 63), (1 << 63) - 1))
def test_varlong_zigzag(n):
    out = bytearray()
    P.write_varlong(out, n)
    assert P.read_varlong(bytes(out), 0, len(out)) == (n, len(out))
    zz = (n << 1) ^ (n >> 63)
    assert out[0] & 0x7F == zz & 0x7F


def test_varint_examples_from_reference():
    for n, hx in ((-1, "01"), (0, "00"), (9, "12")):
        out = bytearray()
        P.write_varlong(out, n)
        assert out.hex() == hx
        assert P.read_varint(bytes(out), 0, len(out)) == (n, 1)


@given(st.one_of(st.none(), _TEXT), st.booleans())
def test_strings(s, compact):
    out = bytearray()
    P.write_string(out, s, compact)
    assert P.read_string(bytes(out), 0, len(out), compact, True) == (s, len(out))


def test_string_micro_examples():
    for value, compact, hx in (("foo", False, "0003666f6f"), ("foo", True, "04666f6f"),
                               (None, True, "00"), (None, False, "ffff")):
        out = bytearray()
        P.write_string(out, value, compact)
        assert out.hex() == hx


@given(st.sampled_from(sorted(P.FIXED)), st.data())
def test_fixed(kind, data):
    if kind == "uuid":
        v = data.draw(st.uuids())
        raw = v.bytes
    else:
        fmt = ">" + P.FIXED[kind][0]
        v = data.draw(st.from_type(bool) if kind == "bool" else (
            st.floats(allow_nan=False) if kind == "float64" else
            st.integers(*_bounds(kind))))
        raw = struct.pack(fmt, v)
    assert P.read_fixed(kind, raw, 0, len(raw)) == (v, len(raw))


def _bounds(kind):
    if kind.startswith("u"):
        return 0, (1 << int(kind[4:])) - 1
    bits = int(kind[3:])
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def test_layout_choice_prefers_an_exact_older_read_over_unknown_tags():
    """3.9 bytes of type 9 that the current layout can only read as two out-of-order unknown
    tags (found by hypothesis): the exact 3.9 read wins, and the bytes round trip."""
    from decoders import decode_record, encode_record

    key = bytes.fromhex("000900" "00")
    value = bytes.fromhex("0000" "01" "02" "4f0f8fecdbbda10600179ea0198f7eb9" "01" "00" "00")
    rec = decode_record(key, value)
    assert rec.layout == "historical/3.9" and rec.unknown_tags == {}
    assert rec.value["deletingTopics"][0]["topicName"] == ""
    assert encode_record(rec) == (key, value)

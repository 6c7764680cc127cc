"""The columnar offset-commit fast path: golden vectors, and differential tests against the generic
decoder (every row is either handled with exactly ``decode_record``'s fields, or not handled)."""

from __future__ import annotations

import uuid

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from decoders.codec import CoordinatorRecord, decode_record, encode_key, encode_value
from decoders.columnar import decode_offset_commits
from decoders.errors import DecodeError

# wire-format.md section 3: TV-08 (type 0 + v0), TV-09 (type 1 + v1), TV-10 (v3), TV-11 (v4).
KEY_TYPE0 = "0000000867726f75702d69640003666f6f00000001"
KEY_TYPE1 = "0001000867726f75702d69640003666f6f00000001"
VALUE_V0 = "0000000000000000006400086d6574616461746100000000000004d2"
VALUE_V1 = "0001000000000000006400086d6574616461746100000000000004d2000000000000162e"
VALUE_V3 = "000300000000000000640000000a00086d6574616461746100000000000004d2"
VALUE_V4 = ("000400000000000000640000000a096d6574616461746100000000000004d2"
            "01001030a5f1d5f224432d89f635c784af26d7")
TOPIC_ID = uuid.UUID("30a5f1d5-f224-432d-89f6-35c784af26d7")  # "MKXx1fIkQy2J9jXHhK8m1w"
# Appendix: type 1 + v4 with the zero topicId left out of the tagged section.
KEY_G_T = "000100016700017400000000"
VALUE_V4_NO_TAG = "00040000000000000005ffffffff0100000000000003e800"

KEY = {"group": "group-id", "topic": "foo", "partition": 1}
NO_TAGS = VALUE_V4[:-38]  # TV-11 without its tagged section (count, tag, size, 16 bytes)
GOLDEN = [
    (KEY_TYPE0, VALUE_V0, dict(KEY, record_type=0, value_version=0, offset=100, leader_epoch=-1,
                               metadata="metadata", commit_timestamp=1234, expire_timestamp=-1,
                               topic_id=None)),
    (KEY_TYPE1, VALUE_V0, dict(KEY, record_type=1, value_version=0, offset=100, leader_epoch=-1,
                               metadata="metadata", commit_timestamp=1234, expire_timestamp=-1,
                               topic_id=None)),
    (KEY_TYPE1, VALUE_V1, dict(KEY, record_type=1, value_version=1, offset=100, leader_epoch=-1,
                               metadata="metadata", commit_timestamp=1234, expire_timestamp=5678,
                               topic_id=None)),
    (KEY_TYPE1, "0002" + VALUE_V0[4:], dict(KEY, record_type=1, value_version=2, offset=100,
                                            leader_epoch=-1, metadata="metadata",
                                            commit_timestamp=1234, expire_timestamp=-1, topic_id=None)),
    (KEY_TYPE1, VALUE_V3, dict(KEY, record_type=1, value_version=3, offset=100, leader_epoch=10,
                               metadata="metadata", commit_timestamp=1234, expire_timestamp=-1,
                               topic_id=None)),
    (KEY_TYPE1, VALUE_V4, dict(KEY, record_type=1, value_version=4, offset=100, leader_epoch=10,
                               metadata="metadata", commit_timestamp=1234, expire_timestamp=-1,
                               topic_id=TOPIC_ID.bytes)),
    (KEY_TYPE1, None, dict(KEY, record_type=1, value_version=None, offset=None, leader_epoch=None,
                           metadata=None, commit_timestamp=None, expire_timestamp=None, topic_id=None)),
    (KEY_G_T, VALUE_V4_NO_TAG, dict(group="g", topic="t", partition=0, record_type=1, value_version=4,
                                    offset=5, leader_epoch=-1, metadata="", commit_timestamp=1000,
                                    expire_timestamp=-1, topic_id=bytes(16))),
]
FIELDS = ("record_type", "group", "topic", "partition", "value_version", "offset", "leader_epoch",
          "metadata", "commit_timestamp", "expire_timestamp", "topic_id")


def _arrays(rows, large: bool = False):
    kind = pa.large_binary() if large else pa.binary()
    return pa.array([k for k, _ in rows], kind), pa.array([v for _, v in rows], kind)


def _columnar_rows(keys, values) -> list[dict | None]:
    """Per row: the fast path's fields, or None where it did not handle the row."""
    cols = decode_offset_commits(keys, values)
    arrow = {name: arr.to_pylist() for name, arr in cols.to_arrow().items()}
    return [{f: arrow[f][i] for f in FIELDS} if cols.handled[i] else None for i in range(len(keys))]


def _generic_fields(key: bytes, value: bytes | None) -> dict | None:
    """``decode_record``'s fields in the fast path's shape; None if it raised."""
    try:
        rec = decode_record(key, value)
    except DecodeError:
        return None
    assert isinstance(rec, CoordinatorRecord) and rec.record_type in (0, 1)
    # The fast path only takes exact rows: nothing left over, nothing unknown.
    assert (rec.trailing_bytes, rec.key_trailing_bytes, rec.unknown_tags) == (0, 0, {})
    v = rec.value or {}
    tid = v.get("topicId")
    tomb = rec.value is None
    return dict(record_type=rec.record_type, **rec.key, value_version=rec.value_version,
                offset=v.get("offset"), leader_epoch=None if tomb else v.get("leaderEpoch", -1),
                metadata=v.get("metadata"), commit_timestamp=v.get("commitTimestamp"),
                expire_timestamp=None if tomb else v.get("expireTimestamp", -1),
                topic_id=None if tid is None else tid.bytes)


def _check_differential(rows, large: bool = False) -> np.ndarray:
    keys, values = _arrays(rows, large)
    fast = _columnar_rows(keys, values)
    for (key, value), got in zip(rows, fast):
        if got is not None:
            assert got == _generic_fields(key, value), (key.hex(), value and value.hex())
    return np.array([f is not None for f in fast], bool)


@pytest.mark.parametrize("key_hex, value_hex, expected", GOLDEN)
def test_golden_vectors(key_hex, value_hex, expected):
    rows = [(bytes.fromhex(key_hex), None if value_hex is None else bytes.fromhex(value_hex))]
    assert _columnar_rows(*_arrays(rows)) == [expected]
    assert _generic_fields(*rows[0]) == expected


def test_golden_batch_sliced_and_large():
    rows = [(bytes.fromhex(k), None if v is None else bytes.fromhex(v)) for k, v, _ in GOLDEN]
    expected = [e for _, _, e in GOLDEN]
    for large in (False, True):
        keys, values = _arrays(rows * 2, large)
        got = _columnar_rows(keys.slice(3, len(rows)), values.slice(3, len(rows)))
        assert got == (expected * 2)[3:3 + len(rows)]


@pytest.mark.parametrize("key_hex, value_hex", [
    (KEY_TYPE0, VALUE_V1),                                   # type 0 takes value v0 only
    (KEY_TYPE1, "0005" + VALUE_V0[4:]),                      # unknown version
    (KEY_TYPE1, VALUE_V0 + "00"),                            # trailing byte
    (KEY_TYPE1 + "00", VALUE_V0),                            # trailing key byte
    (KEY_TYPE1, NO_TAGS + "01010100"),                       # unknown tag 1 (kept by the generic)
    (KEY_TYPE1, NO_TAGS + "02001030a5f1d5f224432d89f635c784af26d70100"),  # tags 0 and 1
    (KEY_TYPE1, NO_TAGS + "01000f30a5f1d5f224432d89f635c784af26"),        # tag 0 of size 15
    (KEY_TYPE1, NO_TAGS + "8000"),                           # tag count as a 2-byte uvarint
    (KEY_TYPE1, VALUE_V0[:20] + "fffe" + VALUE_V0[24:]),     # negative metadata length
    (KEY_TYPE1, VALUE_V0[:20] + "ffff" + VALUE_V0[24:]),     # null metadata (not nullable)
    (KEY_TYPE1, VALUE_V0[:20] + "0000" + VALUE_V0[24:]),     # metadata length 0, bytes left over
    (KEY_TYPE1, "000400000000000000640000000a00" + "00000000000004d200"),  # compact null metadata
    ("0002000867726f75702d6964", None),                      # group metadata tombstone
    ("0001ffff0003666f6f00000001", VALUE_V0),                # null group
    ("0001000267c30003666f6f00000001", VALUE_V0),            # invalid UTF-8 in group
    (KEY_TYPE1, VALUE_V0[:20] + "00026ced" + VALUE_V0[-16:]),  # invalid UTF-8 in metadata
    ("0001000467eda080" + KEY_TYPE1[-18:], VALUE_V0),        # UTF-8-encoded surrogate in group
    ("0001000367c080" + KEY_TYPE1[-18:], VALUE_V0),          # overlong encoding of NUL
    ("0001000467f4908080" + KEY_TYPE1[-18:], VALUE_V0),      # beyond U+10FFFF
])
def test_rows_left_to_the_generic_decoder(key_hex, value_hex):
    rows = [(bytes.fromhex(KEY_TYPE1), bytes.fromhex(VALUE_V3)),
            (bytes.fromhex(key_hex), None if value_hex is None else bytes.fromhex(value_hex))]
    assert _check_differential(rows).tolist() == [True, False]


def test_two_byte_and_non_minimal_compact_lengths_match_the_generic_decoder():
    long_meta = "m" * 300
    rows = [(bytes.fromhex(KEY_TYPE1), encode_value(1, 4, {"offset": 1, "metadata": long_meta,
                                                           "commitTimestamp": 2})),
            # uvarint 0x81 0x00 is a (non-minimal) 1: an empty string, read alike by both.
            (bytes.fromhex(KEY_TYPE1), bytes.fromhex("000400000000000000640000000a8100"
                                                     "00000000000004d200"))]
    handled = _check_differential(rows)
    assert handled.tolist() == [True, True]
    assert decode_offset_commits(*_arrays(rows)).metadata.to_pylist() == [long_meta, ""]


def test_every_proper_prefix_is_not_handled():
    key, value = bytes.fromhex(KEY_TYPE1), bytes.fromhex(VALUE_V4)
    rows = [(key[:i], value) for i in range(len(key))] + [(key, value[:i]) for i in range(len(value))]
    assert not _check_differential(rows).any()
    assert not _check_differential(rows, large=True).any()


def test_null_keys_empty_input_and_tiny_buffers():
    rows = [(None, bytes.fromhex(VALUE_V0)), (b"", None), (b"\x00", b""), (b"\x00\x01", b"\x00")]
    keys, values = _arrays(rows)
    assert not decode_offset_commits(keys, values).handled.any()
    assert len(decode_offset_commits(pa.array([], pa.binary()), pa.array([], pa.binary())).handled) == 0
    with pytest.raises(ValueError):
        decode_offset_commits(keys, values.slice(1))


# ---- property tests --------------------------------------------------------------------------

names = st.text(max_size=40)
int64 = st.integers(-2**63, 2**63 - 1)
int32 = st.integers(-2**31, 2**31 - 1)


@st.composite
def offset_commits(draw):
    record_type = draw(st.sampled_from([0, 1]))
    key = encode_key(record_type, {"group": draw(names), "topic": draw(names),
                                   "partition": draw(int32)})
    if draw(st.integers(0, 9)) == 0:
        return key, None
    version = 0 if record_type == 0 else draw(st.integers(0, 4))
    value = {"offset": draw(int64), "leaderEpoch": draw(int32), "commitTimestamp": draw(int64),
             "metadata": draw(st.text(max_size=200)), "expireTimestamp": draw(int64)}
    if version == 4:
        value["topicId"] = draw(st.sampled_from([uuid.UUID(int=0), TOPIC_ID]) | st.uuids())
    return key, encode_value(record_type, version, value)


@st.composite
def mutated(draw):
    """A valid record with one of its two byte strings damaged (or random bytes after the type)."""
    key, value = draw(offset_commits())
    which = draw(st.sampled_from(["key", "value"])) if value is not None else "key"
    raw = bytearray(key if which == "key" else value)
    op = draw(st.sampled_from(["truncate", "append", "flip", "insert", "random_tail"]))
    at = draw(st.integers(0, len(raw)))
    blob = draw(st.binary(min_size=1, max_size=24))
    if op == "truncate":
        raw = raw[:at]
    elif op == "append":
        raw += blob
    elif op == "flip" and raw:
        raw[min(at, len(raw) - 1)] = blob[0]
    elif op == "insert":
        raw[at:at] = blob
    else:
        raw = raw[:2] + blob
    return (bytes(raw), value) if which == "key" else (key, bytes(raw))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(offset_commits(), min_size=1, max_size=25), st.booleans())
def test_valid_offset_commits_are_all_handled_exactly(rows, large):
    assert _check_differential(rows, large).all()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(mutated() | offset_commits(), min_size=1, max_size=25), st.booleans(),
       st.integers(0, 3))
def test_mutated_input_is_handled_exactly_or_left(rows, large, skip):
    # Slicing exercises non-zero array offsets; handled rows must still match the generic decoder.
    keys, values = _arrays(rows, large)
    keys, values = keys.slice(min(skip, len(rows) - 1)), values.slice(min(skip, len(rows) - 1))
    fast = _columnar_rows(keys, values)
    for key, value, got in zip(keys.to_pylist(), values.to_pylist(), fast):
        if got is not None:
            assert got == _generic_fields(key, value)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.binary(max_size=30) | st.none(), st.binary(max_size=40) | st.none()),
                min_size=1, max_size=20))
def test_random_bytes_never_crash(rows):
    # Type 1 keys and values of versions 0-4 followed by random bytes: every branch, no structure.
    keys, values = _arrays([(None if k is None else b"\x00\x01" + k,
                             None if v is None else bytes([0, len(v) % 5]) + v) for k, v in rows])
    fast = _columnar_rows(keys, values)
    for key, value, got in zip(keys.to_pylist(), values.to_pylist(), fast):
        if got is not None:
            assert got == _generic_fields(key, value)


def test_arrays_with_broken_offsets_are_left_alone():
    # Offsets that go backwards: only Arrow's full validation rejects them, so the fast path checks.
    data = pa.py_buffer(bytes.fromhex(KEY_TYPE1) * 2)
    for offsets in ([0, 20, 10], [20, 0, 40]):
        keys = pa.Array.from_buffers(pa.binary(), 2, [None, pa.py_buffer(np.array(offsets, np.int32)), data])
        values = pa.array([bytes.fromhex(VALUE_V0)] * 2, pa.binary())
        assert not decode_offset_commits(keys, values).handled.any()

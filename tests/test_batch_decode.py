"""decode_batch: fast and generic rows merged back in input order, with typed error columns."""

from __future__ import annotations

import json

import pyarrow as pa
from hypothesis import HealthCheck, given, settings, strategies as st

from decoders.batch_decode import OUTPUT_SCHEMA, decode_batch
from decoders.codec import UnknownRecord, decode_record
from decoders.errors import DecodeError
from test_columnar import KEY_TYPE1, TOPIC_ID, VALUE_V0, VALUE_V4, offset_commits

# wire-format.md section 3: TV-13 (group metadata v4), TV-14 (type 3), appendix (type 8).
GROUP_KEY = "0002000867726f75702d6964"
GROUP_V4 = ("000409636f6e73756d6572000000010672616e6765076c656164657200000000000004d202096d656d626572"
            "2d311167726f75702d696e7374616e63652d3109636c69656e742d3107686f73742d31000003e8000005dc"
            "0300010301020000")
GROUP_V4_JSON = ('{"version":4,"data":{"protocolType":"consumer","generation":1,"protocol":"range",'
                 '"leader":"leader","currentStateTimestamp":1234,"members":[{"memberId":"member-1",'
                 '"groupInstanceId":"group-instance-1","clientId":"client-1","clientHost":"host-1",'
                 '"rebalanceTimeout":1000,"sessionTimeout":1500,"subscription":"AAE=","assignment":"AQI="}]}}')
TYPE3_KEY, TYPE3_VALUE = "0003000567726f7570", "00000000000a00"
ASSIGNMENT_KEY = "000800016700016d"
ASSIGNMENT_VALUE = ("00000000000500000004000200000000000000000000000000000001030000"
                    "0000000000010100090300000003000000050100")
ASSIGNMENT_JSON = ('{"version":0,"data":{"memberEpoch":5,"previousMemberEpoch":4,"state":0,"assignedPartitions":'
                   '[{"topicId":"AAAAAAAAAAAAAAAAAAAAAQ","partitions":[0,1],"assignmentEpochs":[3,5]}],'
                   '"partitionsPendingRevocation":[]}}')



class _SomeText:
    """Equal to any non-empty string: the codec words its own error messages."""

    def __eq__(self, other):
        return isinstance(other, str) and bool(other)

    def __repr__(self):
        return "<some text>"


EMPTY = dict.fromkeys(OUTPUT_SCHEMA.names)
OFFSET = dict(EMPTY, record_type=1, type_name="OffsetCommit", group_id="group-id", topic="foo", partition=1,
              is_tombstone=False, trailing_bytes=0, key_trailing_bytes=0)
GOLDEN = [
    (KEY_TYPE1, VALUE_V4, dict(OFFSET, value_version=4, offset=100, leader_epoch=10, metadata="metadata",
                               commit_timestamp=1234, expire_timestamp=-1, topic_id=TOPIC_ID.bytes)),
    (GROUP_KEY, GROUP_V4, dict(EMPTY, record_type=2, type_name="GroupMetadata", group_id="group-id",
                               value_version=4, is_tombstone=False, value_json=GROUP_V4_JSON,
                               trailing_bytes=0, key_trailing_bytes=0)),
    (KEY_TYPE1, None, dict(OFFSET, is_tombstone=True)),
    (TYPE3_KEY, TYPE3_VALUE, dict(EMPTY, record_type=3, type_name="ConsumerGroupMetadata", group_id="group",
                                  value_version=0, is_tombstone=False, trailing_bytes=0, key_trailing_bytes=0,
                                  value_json='{"version":0,"data":{"epoch":10}}')),
    (ASSIGNMENT_KEY, ASSIGNMENT_VALUE, dict(EMPTY, record_type=8, is_tombstone=False, group_id="g",
                                            type_name="ConsumerGroupCurrentMemberAssignment", member_id="m",
                                            value_version=0, value_json=ASSIGNMENT_JSON, trailing_bytes=0,
                                            key_trailing_bytes=0)),
    # Trailing byte: the fast path leaves it, the generic decoder accepts and counts it.
    (KEY_TYPE1, VALUE_V0 + "ff", dict(OFFSET, value_version=0, offset=100, leader_epoch=-1, metadata="metadata",
                                      commit_timestamp=1234, expire_timestamp=-1, trailing_bytes=1)),
    ("7fff", "", dict(EMPTY, record_type=32767, is_tombstone=False, error_reason="unknown_type",
                      error_message=_SomeText())),
    (KEY_TYPE1, VALUE_V0[:10], dict(EMPTY, record_type=1, is_tombstone=False, error_reason="truncated",
                                    error_message=_SomeText())),
    (None, VALUE_V0, dict(EMPTY, is_tombstone=False, error_reason="decode_error",
                          error_message="record has a null key (stage=key)")),
    (GROUP_KEY, "0009", dict(EMPTY, record_type=2, is_tombstone=False, error_reason="unknown_version",
                             error_message=_SomeText())),
]


def _arrays(rows, kind=None):
    kind = kind or pa.binary()
    def raw(h):
        return None if h is None else bytes.fromhex(h)
    return pa.array([raw(k) for k, _, _ in rows], kind), pa.array([raw(v) for _, v, _ in rows], kind)


def test_golden_rows_in_input_order():
    batch = decode_batch(*_arrays(GOLDEN))
    assert batch.schema == OUTPUT_SCHEMA
    assert batch.to_pylist() == [expected for _, _, expected in GOLDEN]
    reversed_rows = GOLDEN[::-1]
    assert decode_batch(*_arrays(reversed_rows)).to_pylist() == [e for _, _, e in reversed_rows]


def test_value_json_can_be_switched_off():
    with_json = decode_batch(*_arrays(GOLDEN)).to_pylist()
    without = decode_batch(*_arrays(GOLDEN), with_value_json=False).to_pylist()
    assert without == [dict(row, value_json=None) for row in with_json]


def test_chunked_large_and_sliced_inputs():
    keys, values = _arrays(GOLDEN, pa.large_binary())
    expected = [e for _, _, e in GOLDEN]
    chunked = (pa.chunked_array([keys.slice(0, 4), keys.slice(4)]),
               pa.chunked_array([values.slice(0, 4), values.slice(4)]))
    assert decode_batch(*chunked).to_pylist() == expected
    assert decode_batch(keys.slice(2, 5), values.slice(2, 5)).to_pylist() == expected[2:7]
    assert decode_batch(keys.slice(0, 0), values.slice(0, 0)).num_rows == 0


def _expected_row(key: bytes | None, value: bytes | None) -> dict:
    """What a row must say, from ``decode_record`` (independently of the batch code)."""
    row = dict(EMPTY, is_tombstone=value is None)
    try:
        rec = decode_record(key, value)
    except (DecodeError, TypeError) as err:
        row["error_reason"] = getattr(err, "reason", "decode_error")
        row["record_type"] = int.from_bytes(key[:2], "big", signed=True) if key and len(key) >= 2 else None
        return row
    row["record_type"] = rec.record_type
    if isinstance(rec, UnknownRecord):
        row["error_reason"] = "unknown_type"
        return row
    row.update(type_name=rec.type_name, group_id=rec.key.get("group", rec.key.get("groupId")),
               member_id=rec.key.get("memberId"), value_version=rec.value_version,
               trailing_bytes=rec.trailing_bytes, key_trailing_bytes=rec.key_trailing_bytes)
    if rec.record_type in (0, 1):
        row.update(topic=rec.key["topic"], partition=rec.key["partition"])
        v = rec.value
        if v is not None:
            row.update(offset=v["offset"], leader_epoch=v.get("leaderEpoch", -1), metadata=v["metadata"],
                       commit_timestamp=v["commitTimestamp"], expire_timestamp=v.get("expireTimestamp", -1),
                       topic_id=v["topicId"].bytes if "topicId" in v else None)
    return row


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(offset_commits() | st.tuples(st.binary(max_size=12) | st.none(), st.binary(max_size=30) | st.none()),
                min_size=1, max_size=30))
def test_matches_decode_record_row_by_row(rows):
    """Random bytes too: mostly errors and unknown types, some short valid keys of other types."""
    batch = decode_batch(pa.array([k for k, _ in rows], pa.binary()),
                         pa.array([v for _, v in rows], pa.binary()), with_value_json=False)
    for (key, value), got in zip(rows, batch.to_pylist()):
        expected = _expected_row(key, value)
        if expected["error_reason"] is not None:
            assert got["error_message"]
            got = dict(got, error_message=None)
        assert got == expected


def test_value_json_is_kafka_json():
    batch = decode_batch(*_arrays(GOLDEN[1:2]))
    assert json.loads(batch.column("value_json")[0].as_py())["data"]["members"][0]["memberId"] == "member-1"

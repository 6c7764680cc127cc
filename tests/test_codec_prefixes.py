"""Corrupt input: every proper prefix raises a typed error; tagged fields are read by size, in any
order, unknown ones kept; lengths and UTF-8 are validated with the field path."""

from __future__ import annotations

import pytest

from test_codec_vectors import VECTORS

from decoders import (DecodeError, InvalidLengthError, InvalidUtf8Error, TruncatedError,
                      decode_record, encode_record)
from decoders.records_catalog import RECORD_TYPES

_ROWS = [(c, bytes.fromhex(k), None if v is None else bytes.fromhex(v)) for c, k, v, _, _ in VECTORS]


@pytest.mark.parametrize("case,key,value", _ROWS, ids=[r[0] for r in _ROWS])
def test_every_proper_prefix_raises_a_typed_error(case, key, value):
    for cut in range(len(key)):
        with pytest.raises(DecodeError):
            decode_record(key[:cut], value)
    if value is None:
        return
    original = decode_record(key, value)
    alternatives = len(RECORD_TYPES[original.record_type].alternatives)
    for cut in range(len(value)):
        try:
            rec = decode_record(key, value[:cut])
        except DecodeError:
            continue
        # A prefix may only parse as an older layout of a reused type id, and is then flagged.
        assert alternatives and rec.layout != original.layout, (case, cut)


GROUP3 = "00030003666f6f"
GROUP17 = "0011000167"


def test_unknown_tags_are_skipped_by_size_and_kept():
    # type 3: Epoch 10, tags: 5 (unknown, 3 bytes), 0 (MetadataHash = 1)
    value = bytes.fromhex("0000" "0000000a" "02" "0503aabbcc" "00080000000000000001")
    rec = decode_record(bytes.fromhex(GROUP3), value)
    assert rec.value == {"epoch": 10, "metadataHash": 1}
    assert rec.unknown_tags == {"": {5: b"\xaa\xbb\xcc"}}
    # Re-encoded in ascending tag order, unknown tag kept.
    assert encode_record(rec)[1].hex() == "0000" "0000000a" "02" "00080000000000000001" "0503aabbcc"


def test_tags_out_of_order_are_read():
    # type 17: tags 1 (LastAssignmentConfigs) before 0 (ValidatedTopologyEpoch)
    value = bytes.fromhex("0000" "00000003" "0000000000000007" "02" "0106020261026200" "000400000001")
    rec = decode_record(bytes.fromhex(GROUP17), value)
    assert rec.value["validatedTopologyEpoch"] == 1
    assert rec.value["lastAssignmentConfigs"] == [{"key": "a", "value": "b"}]
    assert rec.value["storedDescriptionTopologyEpoch"] == -1


def test_nested_unknown_tag_kept_with_its_path():
    # type 8, one assigned partition whose element carries unknown tag 9 next to AssignmentEpochs
    value = bytes.fromhex("0000" "00000005" "00000004" "00" "02" "00000000000000000000000000000001"
                          "0300000000" "00000001" "02" "0009030000000300000005" "0901ff" "01" "00")
    rec = decode_record(bytes.fromhex("000800016700016d"), value)
    assert rec.value["assignedPartitions"][0]["assignmentEpochs"] == [3, 5]
    assert rec.unknown_tags == {"assignedPartitions[0]": {9: b"\xff"}}
    assert encode_record(rec)[1] == value


def test_known_tag_with_wrong_size_is_typed():
    too_long = bytes.fromhex("0000" "0000000a" "01" "0009" "0000000000000001ff")
    with pytest.raises(InvalidLengthError) as e:
        decode_record(bytes.fromhex(GROUP3), too_long)
    assert e.value.path == "metadataHash"
    too_short = bytes.fromhex("0000" "0000000a" "01" "0004" "00000001")
    with pytest.raises(InvalidLengthError, match="expected 8"):
        decode_record(bytes.fromhex(GROUP3), too_short)
    # a variable-length tagged field that does not fill its size (type 8 AssignmentEpochs)
    value = bytes.fromhex("0000" "00000005" "00000004" "00" "02" "00000000000000000000000000000001"
                          "0300000000" "00000001" "01" "000a03000000030000000500" "01" "00")
    with pytest.raises(InvalidLengthError) as e:
        decode_record(bytes.fromhex("000800016700016d"), value)
    assert e.value.path == "assignedPartitions[0].assignmentEpochs"


def test_invalid_utf8_names_the_field():
    key = bytes.fromhex("0001" "0002" "c328" "0001" "74" "00000000")
    with pytest.raises(InvalidUtf8Error) as e:
        decode_record(key, None)
    assert (e.value.stage, e.value.path) == ("key", "group")


def test_null_in_non_nullable_string_and_negative_lengths():
    with pytest.raises(InvalidLengthError, match="non-nullable"):
        decode_record(bytes.fromhex("0003ffff"), None)
    with pytest.raises(InvalidLengthError):
        decode_record(bytes.fromhex("0003fffe"), None)
    # compact string longer than 32767 (uvarint 0x8001 + 1)
    with pytest.raises(InvalidLengthError):
        decode_record(bytes.fromhex("000a000167000168"), bytes.fromhex("0000" "82800200"))


def test_forged_array_count_does_not_allocate():
    # type 7: TopicPartitions count 2^31 with 2 bytes left
    with pytest.raises(TruncatedError) as e:
        decode_record(bytes.fromhex("000700016700016d"), bytes.fromhex("0000" "8080808008" "0000"))
    assert e.value.needed == (1 << 31) - 1 and e.value.remaining == 2
    with pytest.raises(InvalidLengthError):  # 5th uvarint byte with more than 4 bits
        decode_record(bytes.fromhex("000700016700016d"), bytes.fromhex("0000" "ffffffff7f" "00"))


def test_trailing_bytes_are_counted():
    rec = decode_record(bytes.fromhex(GROUP3), bytes.fromhex("00000000000a00" "beef"))
    assert rec.trailing_bytes == 2 and rec.value == {"epoch": 10, "metadataHash": 0}
    rec = decode_record(bytes.fromhex(GROUP3 + "00"), None)
    assert rec.key_trailing_bytes == 1


def test_historical_share_layouts_are_selected():
    # type 11 in 4.0: Epoch only
    rec = decode_record(bytes.fromhex("000b000167"), bytes.fromhex("0000" "00000007" "00"))
    assert rec.layout == "historical/4.0" and rec.value == {"epoch": 7}
    assert encode_record(rec)[1].hex() == "00000000000700"
    # type 15 in 4.0: InitializedTopics, DeletingTopics
    rec = decode_record(bytes.fromhex("000f000167"),
                        bytes.fromhex("0000" "02" "00000000000000000000000000000001" "0274" "020000000000" "01" "00"))
    assert rec.layout == "historical/4.0"
    assert rec.value["initializedTopics"][0]["partitions"] == [0]
    # type 9 in 3.9 and its removed trunk layout
    rec = decode_record(bytes.fromhex("0009000167"), bytes.fromhex("0000" "01" "01" "00"))
    assert rec.layout == "historical/3.9"
    rec = decode_record(bytes.fromhex("0009000167"), bytes.fromhex("0000" "01" "00"))
    assert rec.layout == "removed" and rec.value == {"topics": []}


def test_historical_370_current_assignment():
    # type 8 in 3.7.0: MemberEpoch, PreviousMemberEpoch, TargetMemberEpoch, 3 arrays, Error,
    # MetadataVersion, MetadataBytes
    value = bytes.fromhex("0000" "00000003" "00000002" "00000003" "01" "01" "01" "00" "0001" "01" "00")
    rec = decode_record(bytes.fromhex("000800016700016d"), value)
    assert rec.layout == "historical/3.7.0"
    assert rec.value["targetMemberEpoch"] == 3 and rec.value["metadataBytes"] == b""
    assert encode_record(rec)[1] == value

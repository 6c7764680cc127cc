"""Kafka JSON converter rules not already pinned by the golden vectors."""

from __future__ import annotations

import uuid

from decoders import CoordinatorRecord, decode_record
from decoders.kafka_json import dumps, key_json, record_json, uuid_json, value_json


def test_uuid_is_url_safe_base64_without_padding():
    assert uuid_json(uuid.UUID(int=0)) == "AAAAAAAAAAAAAAAAAAAAAA"
    # 0xfb.. bytes produce '-' and '_' in the URL-safe alphabet
    assert uuid_json(uuid.UUID("fbffbfff-ffff-ffff-ffff-fffffffffffe")) == "-_-__________________g"


def test_tagged_fields_only_when_not_default():
    rec = decode_record(bytes.fromhex("0011000167"),
                        bytes.fromhex("0000" "00000003" "0000000000000007" "01" "020400000005"))
    assert value_json(rec)["data"] == {"epoch": 3, "metadataHash": 7, "storedDescriptionTopologyEpoch": 5}


def test_fields_absent_from_version_are_omitted():
    rec = CoordinatorRecord(1, "OffsetCommit", {"group": "g", "topic": "t", "partition": 0}, 2,
                            {"offset": 1, "metadata": "", "commitTimestamp": 2})
    assert dumps(value_json(rec)) == '{"version":2,"data":{"offset":1,"metadata":"","commitTimestamp":2}}'


def test_non_ascii_is_kept_and_output_is_compact():
    rec = CoordinatorRecord(3, "ConsumerGroupMetadata", {"groupId": "grüppe"}, None, None)
    assert dumps(record_json(rec)) == '{"key":{"type":3,"data":{"groupId":"grüppe"}},"value":null}'
    assert key_json(rec) == {"type": 3, "data": {"groupId": "grüppe"}}


def test_historical_layout_renders_its_own_fields():
    rec = decode_record(bytes.fromhex("000b000167"), bytes.fromhex("00000000000700"))
    assert dumps(value_json(rec)) == '{"version":0,"data":{"epoch":7}}'

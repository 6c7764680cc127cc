"""Tagged fields whose Kafka schema says ``"default": null``: absent vs explicit null vs a value.

Kafka's generator reads a JSON-null default as unspecified, so the default is the empty struct
(``ClassicMemberMetadata``) or the empty array (``AssignmentEpochs``, ``LastAssignmentConfigs``):
an absent tag reads as that empty value and JSON omits it; an explicit null is written (struct: tag
payload ``00``; array: compact length ``00``), reads back as None and prints as ``null``.
Hex is literal: the type-5 null case is what a Kafka 4.3.1 broker wrote, the type-8 list case is
the reference appendix vector; each row is decoded, rendered both ways and re-encoded.
"""

from __future__ import annotations

import uuid

import pytest

from decoders import decode_record, encode_record, encode_value
from decoders.json_text import value_json_text
from decoders.kafka_json import dumps, value_json

# Kafka 4.3.1, a KIP-848 consumer-protocol member (rdkafka), from tests/test_dump.py
T5_KEY = ("0005" "0017" "636f6e73756d65722d70726f746f636f6c2d67726f7570"
          "0016" "6f585971797666555259756844754e4676574e4d3151")
T5_HEAD = "0000" "00" "00" "0872646b61666b61" "0b2f3132372e302e302e31" "02076f7264657273" "01" "000493e0" "00"
T5_DATA = {"instanceId": None, "rackId": None, "clientId": "rdkafka", "clientHost": "/127.0.0.1",
           "subscribedTopicNames": ["orders"], "subscribedTopicRegex": "",
           "rebalanceTimeoutMs": 300000, "serverAssignor": None}
EMPTY_CLASSIC = {"sessionTimeoutMs": 0, "supportedProtocols": []}

T8_KEY = "000800016700016d"
T8_HEAD = "0000" "00000005" "00000004" "00" "02" "00000000000000000000000000000001" "03" "00000000" "00000001"
T8_TAIL = "01" "00"  # empty partitionsPendingRevocation, empty top-level tag section
T8_TOPIC = {"topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "partitions": [0, 1]}

T17_KEY = "0011" "0001" "67"
T17_HEAD = "0000" "00000007" "0000000000000009"

# (case, key hex, value hex, decoded field path, decoded value, expected JSON data)
CASES = [
    ("type 5 explicit null (Kafka 4.3.1)", T5_KEY, T5_HEAD + "01" "00" "01" "00",
     ("classicMemberMetadata",), None, {**T5_DATA, "classicMemberMetadata": None}),
    ("type 5 tag absent", T5_KEY, T5_HEAD + "00",
     ("classicMemberMetadata",), EMPTY_CLASSIC, T5_DATA),
    ("type 8 AssignmentEpochs [3, 5] (appendix)", T8_KEY, T8_HEAD + "01" "00" "09" "03" "00000003" "00000005" + T8_TAIL,
     ("assignedPartitions", 0, "assignmentEpochs"), [3, 5],
     {"memberEpoch": 5, "previousMemberEpoch": 4, "state": 0,
      "assignedPartitions": [{**T8_TOPIC, "assignmentEpochs": [3, 5]}], "partitionsPendingRevocation": []}),
    ("type 8 AssignmentEpochs absent (pre-4.3)", T8_KEY, T8_HEAD + "00" + T8_TAIL,
     ("assignedPartitions", 0, "assignmentEpochs"), [],
     {"memberEpoch": 5, "previousMemberEpoch": 4, "state": 0,
      "assignedPartitions": [T8_TOPIC], "partitionsPendingRevocation": []}),
    ("type 8 AssignmentEpochs explicit null", T8_KEY, T8_HEAD + "01" "00" "01" "00" + T8_TAIL,
     ("assignedPartitions", 0, "assignmentEpochs"), None,
     {"memberEpoch": 5, "previousMemberEpoch": 4, "state": 0,
      "assignedPartitions": [{**T8_TOPIC, "assignmentEpochs": None}], "partitionsPendingRevocation": []}),
    ("type 17 LastAssignmentConfigs absent", T17_KEY, T17_HEAD + "00",
     ("lastAssignmentConfigs",), [], {"epoch": 7, "metadataHash": 9}),
    ("type 17 LastAssignmentConfigs explicit null", T17_KEY, T17_HEAD + "01" "01" "01" "00",
     ("lastAssignmentConfigs",), None, {"epoch": 7, "metadataHash": 9, "lastAssignmentConfigs": None}),
]


def _at(value, path):
    for step in path:
        value = value[step]
    return value


@pytest.mark.parametrize("case,key,value,path,decoded,data", CASES, ids=[c[0] for c in CASES])
def test_tagged_default_decodes_renders_and_reencodes(case, key, value, path, decoded, data):
    rec = decode_record(bytes.fromhex(key), bytes.fromhex(value))
    assert rec.layout == "current" and not rec.unknown_tags, case
    assert _at(rec.value, path) == decoded
    if decoded is None:
        assert _at(rec.value, path) is None
    expected = {"version": 0, "data": data}
    assert value_json(rec) == expected
    assert value_json_text(rec) == dumps(expected)
    assert encode_record(rec) == (bytes.fromhex(key), bytes.fromhex(value))


def test_type5_explicit_null_prints_like_kafka_dump_log():
    rec = decode_record(bytes.fromhex(T5_KEY), bytes.fromhex(T5_HEAD + "01000100"))
    assert value_json_text(rec).endswith('"serverAssignor":null,"classicMemberMetadata":null}}')


def test_a_value_equal_to_the_default_is_not_written():
    # Kafka writes a tagged field only when it differs from the default: [] and the empty struct
    # give no tag at all; None gives the null encoding.
    topic = {"topicId": uuid.UUID(int=1), "partitions": [0, 1], "assignmentEpochs": []}
    t8 = {"memberEpoch": 5, "previousMemberEpoch": 4, "state": 0,
          "assignedPartitions": [topic], "partitionsPendingRevocation": []}
    assert encode_value(8, 0, t8) == bytes.fromhex(T8_HEAD + "00" + T8_TAIL)
    assert encode_value(5, 0, {**T5_DATA, "classicMemberMetadata": dict(EMPTY_CLASSIC)}) == \
        bytes.fromhex(T5_HEAD + "00")
    assert encode_value(5, 0, T5_DATA) == bytes.fromhex(T5_HEAD + "00")
    assert encode_value(5, 0, {**T5_DATA, "classicMemberMetadata": None}) == \
        bytes.fromhex(T5_HEAD + "01000100")


def test_absent_defaults_are_fresh_per_record():
    a = decode_record(bytes.fromhex(T5_KEY), bytes.fromhex(T5_HEAD + "00")).value
    b = decode_record(bytes.fromhex(T5_KEY), bytes.fromhex(T5_HEAD + "00")).value
    a["classicMemberMetadata"]["supportedProtocols"].append("x")
    assert b["classicMemberMetadata"] == EMPTY_CLASSIC

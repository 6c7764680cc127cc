"""Golden byte tables from ../shared/reference/wire-format.md section 3 (TV-01..TV-19, appendix).

Hex literals are Kafka's own serializer output; the expected JSON is what Kafka's formatters print.
Each row is decoded (JSON compared) and the decoded record re-encoded (bytes compared).
"""

from __future__ import annotations

import json
import uuid

import pytest

from decoders import (DecodeError, InvalidLengthError, TruncatedError, UnknownRecord,
                      UnknownVersionError, decode_record, encode_key, encode_record)
from decoders.kafka_json import dumps, key_json, record_json, value_json

OFFSET_KEY_1 = "0001000867726f75702d69640003666f6f00000001"
GROUP_KEY = "0002000867726f75702d6964"
SUB_V3 = ("0003" "00000001" "0003666f6f" "ffffffff" "00000001" "0003666f6f" "00000001" "00000000"
          "00000000" "00047261636b")
ASSIGN_V3 = "0003" "00000001" "0003666f6f" "00000001" "00000000" "ffffffff"
TV17_VALUE = ("0004" "09636f6e73756d6572" "0000000a" "0672616e6765" "076d656d626572" "ffffffffffffffff"
              "02" "076d656d626572" "09696e7374616e6365" "07636c69656e74" "05686f7374" "000003e8"
              "00000064" "2b" + SUB_V3 + "18" + ASSIGN_V3 + "00" "00")
TV13_DATA_V0 = {"protocolType": "consumer", "generation": 1, "protocol": "range", "leader": "leader",
                "members": [{"memberId": "member-1", "clientId": "client-1", "clientHost": "host-1",
                             "sessionTimeout": 1500, "subscription": "AAE=", "assignment": "AQI="}]}


def _gm(version: int, *, ts: bool, instance: bool, rebalance: bool) -> dict:
    data = json.loads(json.dumps(TV13_DATA_V0))
    if ts:
        data = {**{k: data[k] for k in ("protocolType", "generation", "protocol", "leader")},
                "currentStateTimestamp": 1234, "members": data["members"]}
    m = data["members"][0]
    m2 = {"memberId": m["memberId"]}
    if instance:
        m2["groupInstanceId"] = "group-instance-1"
    m2.update(clientId=m["clientId"], clientHost=m["clientHost"])
    if rebalance:
        m2["rebalanceTimeout"] = 1000
    m2.update(sessionTimeout=1500, subscription="AAE=", assignment="AQI=")
    data["members"] = [m2]
    return {"version": version, "data": data}


OFFSET_DATA = {"offset": 100, "metadata": "metadata", "commitTimestamp": 1234}

# (case, key hex, value hex or None, expected key JSON, expected value JSON or None)
VECTORS = [
    ("TV-01 type 3", "00030003666f6f", "00000000000a00",
     {"type": 3, "data": {"groupId": "foo"}}, {"version": 0, "data": {"epoch": 10}}),
    ("TV-08 type 0 v0", "0000000867726f75702d69640003666f6f00000001",
     "0000000000000000006400086d6574616461746100000000000004d2",
     {"type": 0, "data": {"group": "group-id", "topic": "foo", "partition": 1}},
     {"version": 0, "data": OFFSET_DATA}),
    ("TV-09 type 1 v1", OFFSET_KEY_1,
     "0001000000000000006400086d6574616461746100000000000004d2000000000000162e",
     {"type": 1, "data": {"group": "group-id", "topic": "foo", "partition": 1}},
     {"version": 1, "data": {**OFFSET_DATA, "expireTimestamp": 5678}}),
    ("TV-09 type 1 v0", OFFSET_KEY_1, "0000000000000000006400086d6574616461746100000000000004d2",
     None, {"version": 0, "data": OFFSET_DATA}),
    ("TV-09 type 1 v2", OFFSET_KEY_1, "0002000000000000006400086d6574616461746100000000000004d2",
     None, {"version": 2, "data": OFFSET_DATA}),
    ("TV-10 type 1 v3", OFFSET_KEY_1, "000300000000000000640000000a00086d6574616461746100000000000004d2",
     None, {"version": 3, "data": {"offset": 100, "leaderEpoch": 10, "metadata": "metadata",
                                   "commitTimestamp": 1234}}),
    ("TV-11 type 1 v4", OFFSET_KEY_1,
     "000400000000000000640000000a096d6574616461746100000000000004d201001030a5f1d5f224432d89f635c784af26d7",
     None, {"version": 4, "data": {"offset": 100, "leaderEpoch": 10, "metadata": "metadata",
                                   "commitTimestamp": 1234, "topicId": "MKXx1fIkQy2J9jXHhK8m1w"}}),
    ("TV-12 offset tombstone", OFFSET_KEY_1, None,
     {"type": 1, "data": {"group": "group-id", "topic": "foo", "partition": 1}}, None),
    ("TV-13 group v0", GROUP_KEY,
     "00000008636f6e73756d657200000001000572616e676500066c65616465720000000100086d656d6265722d310008636c69656e742d310006686f73742d31000005dc000000020001000000020102",
     {"type": 2, "data": {"group": "group-id"}}, {"version": 0, "data": TV13_DATA_V0}),
    ("TV-13 group v1", GROUP_KEY,
     "00010008636f6e73756d657200000001000572616e676500066c65616465720000000100086d656d6265722d310008636c69656e742d310006686f73742d31000003e8000005dc000000020001000000020102",
     None, _gm(1, ts=False, instance=False, rebalance=True)),
    ("TV-13 group v2", GROUP_KEY,
     "00020008636f6e73756d657200000001000572616e676500066c656164657200000000000004d20000000100086d656d6265722d310008636c69656e742d310006686f73742d31000003e8000005dc000000020001000000020102",
     None, _gm(2, ts=True, instance=False, rebalance=True)),
    ("TV-13 group v3", GROUP_KEY,
     "00030008636f6e73756d657200000001000572616e676500066c656164657200000000000004d20000000100086d656d6265722d31001067726f75702d696e7374616e63652d310008636c69656e742d310006686f73742d31000003e8000005dc000000020001000000020102",
     None, _gm(3, ts=True, instance=True, rebalance=True)),
    ("TV-13 group v4", GROUP_KEY,
     "000409636f6e73756d6572000000010672616e6765076c656164657200000000000004d202096d656d6265722d311167726f75702d696e7374616e63652d3109636c69656e742d3107686f73742d31000003e8000005dc0300010301020000",
     None, _gm(4, ts=True, instance=True, rebalance=True)),
    ("TV-13 group tombstone", GROUP_KEY, None, {"type": 2, "data": {"group": "group-id"}}, None),
    ("TV-19 type 10", "000a000867726f75702d696400096d656d6265722d6964",
     "0000077261636b2d610a636c69656e742d696408312e322e332e340206746f70696300",
     {"type": 10, "data": {"groupId": "group-id", "memberId": "member-id"}},
     {"version": 0, "data": {"rackId": "rack-a", "clientId": "client-id", "clientHost": "1.2.3.4",
                             "subscribedTopicNames": ["topic"]}}),
    ("TV-19 type 13", "000d000867726f75702d696400096d656d6265722d6964",
     "00000200000000000000000000000000000001030000000000000001" "0000",
     None, {"version": 0, "data": {"topicPartitions": [
         {"topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "partitions": [0, 1]}]}}),
    ("TV-19 type 11", "000b000867726f75702d6964", "0000" "00000001" "0000000000000001" "00",
     {"type": 11, "data": {"groupId": "group-id"}},
     {"version": 0, "data": {"epoch": 1, "metadataHash": 1}}),
    ("TV-19 type 11 tombstone", "000b000867726f75702d6964", None, None, None),
    ("appendix type 3 hash", "00030003666f6f", "00000000000a0100080102030405060708",
     None, {"version": 0, "data": {"epoch": 10, "metadataHash": 72623859790382856}}),
    ("appendix type 1 v4 zero topicId", "000100016700017400000000",
     "00040000000000000005ffffffff0100000000000003e800",
     {"type": 1, "data": {"group": "g", "topic": "t", "partition": 0}},
     {"version": 4, "data": {"offset": 5, "leaderEpoch": -1, "metadata": "", "commitTimestamp": 1000}}),
    ("appendix type 4 tombstone", "0004000167", None, {"type": 4, "data": {"groupId": "g"}}, None),
    ("appendix type 5 classic", "000500016700016d",
     "000000000263026802027400000493e008756e69666f726d010011010000afc8020672616e67650300030000",
     {"type": 5, "data": {"groupId": "g", "memberId": "m"}},
     {"version": 0, "data": {"instanceId": None, "rackId": None, "clientId": "c", "clientHost": "h",
                             "subscribedTopicNames": ["t"], "subscribedTopicRegex": None,
                             "rebalanceTimeoutMs": 300000, "serverAssignor": "uniform",
                             "classicMemberMetadata": {"sessionTimeoutMs": 45000, "supportedProtocols": [
                                 {"name": "range", "metadata": "AAM="}]}}}),
    ("appendix type 8 epochs", "000800016700016d",
     "000000000005000000040002000000000000000000000000000000010300000000000000010100090300000003000000050100",
     None, {"version": 0, "data": {"memberEpoch": 5, "previousMemberEpoch": 4, "state": 0,
                                   "assignedPartitions": [{"topicId": "AAAAAAAAAAAAAAAAAAAAAQ",
                                                           "partitions": [0, 1], "assignmentEpochs": [3, 5]}],
                                   "partitionsPendingRevocation": []}}),
    ("appendix type 15", "000f000167", "000001020000000000000000000000000000000102740200000000000100",
     None, {"version": 0, "data": {"initializingTopics": [], "initializedTopics": [
         {"topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "topicName": "t", "partitions": [0]}], "deletingTopics": []}}),
    ("appendix type 16", "00100001670005666f6f2e2a", "00000205666f6f31000000000000002a00000000000003e800",
     {"type": 16, "data": {"groupId": "g", "regularExpression": "foo.*"}},
     {"version": 0, "data": {"topics": ["foo1"], "version": 42, "timestamp": 1000}}),
    ("appendix type 17 tags", "0011000167", "0000000000030000000000000007020004000000010106020261026200",
     None, {"version": 0, "data": {"epoch": 3, "metadataHash": 7, "validatedTopologyEpoch": 1,
                                   "lastAssignmentConfigs": [{"key": "a", "value": "b"}]}}),
    ("appendix type 19 endpoint", "001300016700016d",
     "000000027202630268000003e8000000020270010268ffff0002026b02760000",
     None, {"version": 0, "data": {"instanceId": None, "rackId": "r", "clientId": "c", "clientHost": "h",
                                   "rebalanceTimeoutMs": 1000, "topologyEpoch": 2, "processId": "p",
                                   "userEndpoint": {"host": "h", "port": 65535},
                                   "clientTags": [{"key": "k", "value": "v"}]}}),
    ("appendix type 19 null endpoint", "001300016700016d", "0000010102630268ffffffff000000000270ff0100",
     None, {"version": 0, "data": {"instanceId": "", "rackId": "", "clientId": "c", "clientHost": "h",
                                   "rebalanceTimeoutMs": -1, "topologyEpoch": 0, "processId": "p",
                                   "userEndpoint": None, "clientTags": []}}),
    ("appendix type 23", "0017000167",
     "0000000000010202300203696e010203636c00000000000001000101020200000101000000",
     None, {"version": 0, "data": {"epoch": 1, "subtopologies": [{
         "subtopologyId": "0", "sourceTopics": ["in"], "sourceTopicRegex": [],
         "stateChangelogTopics": [{"name": "cl", "partitions": 0, "replicationFactor": 0, "topicConfigs": []}],
         "repartitionSinkTopics": [], "repartitionSourceTopics": [],
         "copartitionGroups": [{"sourceTopics": [0], "sourceTopicRegex": [], "repartitionSourceTopics": []}]}]}}),
]


@pytest.mark.parametrize("case,key_hex,value_hex,key_expected,value_expected", VECTORS,
                         ids=[v[0] for v in VECTORS])
def test_vector_decodes_to_kafka_json_and_reencodes(case, key_hex, value_hex, key_expected, value_expected):
    key = bytes.fromhex(key_hex)
    value = None if value_hex is None else bytes.fromhex(value_hex)
    rec = decode_record(key, value)
    assert rec.trailing_bytes == 0 and rec.layout == "current"
    if key_expected is not None:
        assert key_json(rec) == key_expected
    assert value_json(rec, decode_embedded=False) == value_expected
    assert rec.is_tombstone == (value is None)
    assert encode_record(rec) == (key, value)


def test_tv12_tombstone_line_matches_formatter_output():
    rec = decode_record(bytes.fromhex(OFFSET_KEY_1), None)
    assert dumps(record_json(rec)) == (
        '{"key":{"type":1,"data":{"group":"group-id","topic":"foo","partition":1}},"value":null}')


def test_tv08_full_formatter_line():
    rec = decode_record(bytes.fromhex(VECTORS[1][1]), bytes.fromhex(VECTORS[1][2]))
    assert dumps(record_json(rec)) == (
        '{"key":{"type":0,"data":{"group":"group-id","topic":"foo","partition":1}},'
        '"value":{"version":0,"data":{"offset":100,"metadata":"metadata","commitTimestamp":1234}}}')


def test_tv02_key_framing():
    assert encode_key(3, {"groupId": "group"}).hex() == "0003000567726f7570"
    assert encode_key(3, {"groupId": "foo"}).hex() == "00030003666f6f"


def test_tv03_unknown_type_is_a_result():
    key, value = bytes.fromhex("00ff" + "00" * 62), bytes(64)
    rec = decode_record(key, value)
    assert isinstance(rec, UnknownRecord)
    assert (rec.record_type, rec.key, rec.value) == (255, key, value)
    assert key_json(rec) is None and value_json(rec) is None
    assert isinstance(decode_record(bytes.fromhex("7fff"), b""), UnknownRecord)


def test_tv04_empty_key():
    with pytest.raises(TruncatedError) as e:
        decode_record(b"", bytes(64))
    assert (e.value.needed, e.value.remaining, e.value.stage) == (2, 0, "key")


def test_tv05_truncated_key():
    with pytest.raises(TruncatedError) as e:
        decode_record(bytes.fromhex("0003"), bytes.fromhex("0000"))
    assert e.value.stage == "key" and e.value.path == "groupId"


def test_tv06_truncated_value():
    with pytest.raises(TruncatedError) as e:
        decode_record(bytes.fromhex("00030003666f6f"), bytes.fromhex("0000"))
    assert (e.value.stage, e.value.needed, e.value.remaining) == ("value", 4, 0)


@pytest.mark.parametrize("value_hex,version", [("0001", 1), ("ffff", -1)])
def test_tv07_unknown_value_version(value_hex, version):
    with pytest.raises(UnknownVersionError) as e:
        decode_record(bytes.fromhex("00030003666f6f"), bytes.fromhex(value_hex))
    assert (e.value.record_type, e.value.version) == (3, version)


def test_type0_value_v1_is_rejected_like_trunk():
    with pytest.raises(UnknownVersionError) as e:
        decode_record(bytes.fromhex("000000016700017400000000"),
                      bytes.fromhex("00010000000000000005000000000000000003e800000000000007d0"))
    assert (e.value.record_type, e.value.version) == (0, 1)


def test_empty_value_is_not_a_tombstone():
    with pytest.raises(TruncatedError):
        decode_record(bytes.fromhex("00030003666f6f"), b"")


def test_tv17_embedded_consumer_protocol():
    rec = decode_record(bytes.fromhex("0002000567726f7570"), bytes.fromhex(TV17_VALUE))
    expected = ('{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",'
                '"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",'
                '"groupInstanceId":"instance","clientId":"client","clientHost":"host",'
                '"rebalanceTimeout":1000,"sessionTimeout":100,"subscription":{"topics":["foo"],'
                '"userData":null,"ownedPartitions":[{"topic":"foo","partitions":[0]}],'
                '"generationId":0,"rackId":"rack"},"assignment":{"assignedPartitions":'
                '[{"topic":"foo","partitions":[0]}],"userData":null}}]}}')
    got = value_json(rec)
    assert dumps({"version": str(got["version"]), "data": got["data"]}) == expected
    member = rec.value["members"][0]
    assert member["subscription"]["version"] == 3 and member["subscription"]["rackId"] == "rack"
    assert rec.embedded_errors == ()
    assert encode_record(rec)[1].hex() == TV17_VALUE
    plain = value_json(rec, decode_embedded=False)["data"]["members"][0]
    assert plain["assignment"] == "AAMAAAABAANmb28AAAABAAAAAP////8="


def test_tv17_unparseable_blobs_stay_base64():
    sub, asg = b"Subscription".hex(), b"Assignment".hex()
    value = TV17_VALUE.replace("2b" + SUB_V3, "0d" + sub).replace("18" + ASSIGN_V3, "0b" + asg)
    rec = decode_record(bytes.fromhex("0002000567726f7570"), bytes.fromhex(value))
    member = value_json(rec)["data"]["members"][0]
    assert member["subscription"] == "U3Vic2NyaXB0aW9u" and member["assignment"] == "QXNzaWdubWVudA=="
    assert rec.embedded_errors == ("members[0].subscription", "members[0].assignment")
    assert encode_record(rec)[1].hex() == value


def test_tv18_unknown_tag_size_is_bounds_checked():
    with pytest.raises(TruncatedError) as e:
        decode_record(bytes.fromhex("0003000567726f7570"), bytes.fromhex("0000010101010101ffffffff0100"))
    assert (e.value.needed, e.value.remaining, e.value.stage) == (536870911, 1, "value")


def test_type5_classic_metadata_too_short_stays_raw():
    rec = decode_record(bytes.fromhex(VECTORS[21][1]), bytes.fromhex(VECTORS[21][2]))
    protos = rec.value["classicMemberMetadata"]["supportedProtocols"]
    assert protos[0]["metadata"] == b"\x00\x03"
    assert rec.embedded_errors == ("classicMemberMetadata.supportedProtocols[0].metadata",)


def test_uuid_values_are_uuid_objects():
    rec = decode_record(bytes.fromhex(OFFSET_KEY_1), bytes.fromhex(VECTORS[6][2]))
    assert rec.value["topicId"] == uuid.UUID("30a5f1d5-f224-432d-89f6-35c784af26d7")


@pytest.mark.parametrize("key_hex, value_hex, error, reason, stage", [
    (OFFSET_KEY_1[:-2], None, TruncatedError, "truncated", "key"),
    # group length 0x7fff with 5 bytes behind it
    ("0001" "7fff" "67726f7570", None, TruncatedError, "truncated", "key"),
    # group length -2: only -1 (null) is negative and legal, and not for a key's group
    ("0001fffe", None, InvalidLengthError, "invalid_length", "key"),
    (OFFSET_KEY_1, "0063" + "00" * 20, UnknownVersionError, "unknown_version", "value"),
])
def test_bad_input_raises_a_typed_error_that_callers_catch_as_decode_error(
        key_hex, value_hex, error, reason, stage):
    """Callers (dump, the decode stage) catch DecodeError and quarantine with ``reason``/``stage``:
    each failure must arrive as its own type, under that base, with both filled in."""
    value = None if value_hex is None else bytes.fromhex(value_hex)
    with pytest.raises(DecodeError) as caught:
        decode_record(bytes.fromhex(key_hex), value)
    assert type(caught.value) is error
    assert (caught.value.reason, caught.value.stage) == (reason, stage)

"""Types 3-8 and 16: KIP-848 consumer groups (current trunk layouts, value v0, flexible).

Layouts before 3.8.0 reused the same ids; see :mod:`decoders.catalog_historical`.
"""

from __future__ import annotations

from .catalog_historical import ALTERNATIVES
from .schema import EMPTY, F, RecordType, S, Versions, arr

V0 = Versions.parse("0")
FLEX = Versions.parse("0+")
GROUP_ID = F("GroupId", "string", "0")
MEMBER_ID = F("MemberId", "string", "0")


def group_type(record_type: int, name: str, value, *, member: bool = False, extra_key=(),
               status: str = "active") -> RecordType:
    """A v0-only flexible record type keyed by GroupId (and MemberId), as all KIP-848+ types are."""
    key_fields = (GROUP_ID, MEMBER_ID) if member else (GROUP_ID, *extra_key)
    return RecordType(record_type, name, S(name + "Key", *key_fields), value, V0, FLEX,
                      status=status, alternatives=ALTERNATIVES.get(record_type, ()))


def target_assignment_metadata(prefix: str):
    # AssignmentTimestamp (KIP-1263, 4.3) is tagged, so older records simply lack it.
    return S(prefix + "TargetAssignmentMetadataValue",
             F("AssignmentEpoch", "int32"),
             F("AssignmentTimestamp", "int64", tag=0, default=0))


TOPIC_PARTITION = S("TopicPartition", F("TopicId", "uuid"), F("Partitions", "[]int32"))

# KIP-1251: AssignmentEpochs is aligned with Partitions. Kafka's "default": null is unspecified
# (EMPTY): records written before 4.3 lack the tag and read as [], an explicit null is None.
TOPIC_PARTITIONS_WITH_EPOCHS = S(
    "TopicPartitions",
    F("TopicId", "uuid"),
    F("Partitions", "[]int32"),
    F("AssignmentEpochs", "[]int32", nullable="0+", tag=0, default=EMPTY))

PARTITION_METADATA = S("PartitionMetadata", F("Partition", "int32"), F("Racks", "[]string"))

CLASSIC_MEMBER_METADATA = S(
    "ClassicMemberMetadata",
    F("SessionTimeoutMs", "int32"),
    # Metadata is a ConsumerProtocolSubscription blob (decoders.embedded).
    F("SupportedProtocols", arr(S("ClassicProtocol", F("Name", "string"), F("Metadata", "bytes")))))

TYPES = (
    group_type(3, "ConsumerGroupMetadata", S(
        "ConsumerGroupMetadataValue",
        F("Epoch", "int32"),
        F("MetadataHash", "int64", tag=0, default=0))),
    group_type(4, "ConsumerGroupPartitionMetadata", S(
        "ConsumerGroupPartitionMetadataValue",
        F("Topics", arr(S("TopicMetadata",
                          F("TopicId", "uuid"), F("TopicName", "string"),
                          F("NumPartitions", "int32"),
                          F("PartitionMetadata", arr(PARTITION_METADATA)))))),
        status="deprecated"),
    group_type(5, "ConsumerGroupMemberMetadata", S(
        "ConsumerGroupMemberMetadataValue",
        F("InstanceId", "string", nullable="0+"),
        F("RackId", "string", nullable="0+"),
        F("ClientId", "string"),
        F("ClientHost", "string"),
        F("SubscribedTopicNames", "[]string"),
        F("SubscribedTopicRegex", "string", nullable="0+"),
        F("RebalanceTimeoutMs", "int32", default=-1),
        F("ServerAssignor", "string", nullable="0+"),
        # Default EMPTY (Kafka's JSON null): an absent tag is the empty struct; 4.3.1 writes an
        # explicit null for consumer-protocol members (tag payload 00).
        F("ClassicMemberMetadata", CLASSIC_MEMBER_METADATA, nullable="0+", tag=0, default=EMPTY)),
        member=True),
    group_type(6, "ConsumerGroupTargetAssignmentMetadata",
               target_assignment_metadata("ConsumerGroup")),
    group_type(7, "ConsumerGroupTargetAssignmentMember", S(
        "ConsumerGroupTargetAssignmentMemberValue",
        F("TopicPartitions", arr(TOPIC_PARTITION))), member=True),
    group_type(8, "ConsumerGroupCurrentMemberAssignment", S(
        "ConsumerGroupCurrentMemberAssignmentValue",
        F("MemberEpoch", "int32"),
        F("PreviousMemberEpoch", "int32"),
        F("State", "int8"),
        F("AssignedPartitions", arr(TOPIC_PARTITIONS_WITH_EPOCHS)),
        F("PartitionsPendingRevocation", arr(TOPIC_PARTITIONS_WITH_EPOCHS))), member=True),
    group_type(16, "ConsumerGroupRegularExpression", S(
        "ConsumerGroupRegularExpressionValue",
        F("Topics", "[]string"),
        F("Version", "int64"),
        F("Timestamp", "int64")),
        extra_key=(F("RegularExpression", "string", "0"),)),
)

"""Value layouts that reused a type id and version 0 before the current layout.

* 3.7.0 (and 3.6, KIP-848 early access): types 4, 5, 7, 8 had other fields under value v0.
* 3.9: type 9 carried what 4.0 moved to type 15.
* 4.0: type 11 had only ``Epoch``; type 15 had no ``InitializingTopics``.

Kafka itself cannot read these after an upgrade; we try them when the current layout does not
consume a value exactly (rule in :mod:`decoders.codec`).
"""

from __future__ import annotations

from .schema import F, Layout, S, arr

_TOPIC_PARTITIONS_370 = S("TopicPartitions", F("TopicId", "uuid"), F("Partitions", "[]int32"))

CONSUMER_PARTITION_METADATA_370 = S(
    "ConsumerGroupPartitionMetadataValue",
    F("Epoch", "int32"),
    F("Topics", arr(S("TopicMetadata",
                      F("TopicId", "uuid"), F("TopicName", "string"), F("NumPartitions", "int32"),
                      F("PartitionMetadata", arr(S("PartitionMetadata", F("Partition", "int32"),
                                                   F("Racks", "[]string"))))))))

CONSUMER_MEMBER_METADATA_370 = S(
    "ConsumerGroupMemberMetadataValue",
    F("InstanceId", "string", nullable="0+"),
    F("RackId", "string", nullable="0+"),
    F("ClientId", "string"),
    F("ClientHost", "string"),
    F("SubscribedTopicNames", "[]string"),
    F("SubscribedTopicRegex", "string", nullable="0+"),
    F("RebalanceTimeoutMs", "int32", default=-1),
    F("ServerAssignor", "string", nullable="0+"),
    F("Assignors", arr(S("Assignor", F("Name", "string"), F("MinimumVersion", "int16"),
                         F("MaximumVersion", "int16"), F("Reason", "int8"),
                         F("Version", "int16"), F("Metadata", "bytes")))))

CONSUMER_TARGET_MEMBER_370 = S(
    "ConsumerGroupTargetAssignmentMemberValue",
    F("Error", "int8"),
    F("TopicPartitions", arr(S("TopicPartition", F("TopicId", "uuid"), F("Partitions", "[]int32")))),
    F("MetadataVersion", "int16"),
    F("MetadataBytes", "bytes"))

CONSUMER_CURRENT_ASSIGNMENT_370 = S(
    "ConsumerGroupCurrentMemberAssignmentValue",
    F("MemberEpoch", "int32"),
    F("PreviousMemberEpoch", "int32"),
    F("TargetMemberEpoch", "int32"),
    F("AssignedPartitions", arr(_TOPIC_PARTITIONS_370)),
    F("PartitionsPendingRevocation", arr(_TOPIC_PARTITIONS_370)),
    F("PartitionsPendingAssignment", arr(_TOPIC_PARTITIONS_370)),
    F("Error", "int8"),
    F("MetadataVersion", "int16"),
    F("MetadataBytes", "bytes"))

_TOPIC_PARTITIONS_INFO = S("TopicPartitionsInfo", F("TopicId", "uuid"), F("TopicName", "string"),
                           F("Partitions", "[]int32"))
_TOPIC_INFO = S("TopicInfo", F("TopicId", "uuid"), F("TopicName", "string"))

SHARE_PARTITION_METADATA_39 = S("ShareGroupPartitionMetadataValue",
                                F("InitializedTopics", arr(_TOPIC_PARTITIONS_INFO)),
                                F("DeletingTopics", arr(_TOPIC_INFO)))

SHARE_METADATA_40 = S("ShareGroupMetadataValue", F("Epoch", "int32"))

SHARE_STATE_PARTITION_METADATA_40 = S("ShareGroupStatePartitionMetadataValue",
                                      F("InitializedTopics", arr(_TOPIC_PARTITIONS_INFO)),
                                      F("DeletingTopics", arr(_TOPIC_INFO)))

ALTERNATIVES: dict[int, tuple[Layout, ...]] = {
    4: (Layout("historical/3.7.0", CONSUMER_PARTITION_METADATA_370),),
    5: (Layout("historical/3.7.0", CONSUMER_MEMBER_METADATA_370),),
    7: (Layout("historical/3.7.0", CONSUMER_TARGET_MEMBER_370),),
    8: (Layout("historical/3.7.0", CONSUMER_CURRENT_ASSIGNMENT_370),),
    9: (Layout("historical/3.9", SHARE_PARTITION_METADATA_39),),
    11: (Layout("historical/4.0", SHARE_METADATA_40),),
    15: (Layout("historical/4.0", SHARE_STATE_PARTITION_METADATA_40),),
}

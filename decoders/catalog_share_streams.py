"""Types 9-15 (KIP-932 share groups) and 17-24 (KIP-1071 streams groups).

9 and 18 were removed from trunk (we keep their last layout); 24 is only known from a public code
index (status ``unverified``).
"""

from __future__ import annotations

from .catalog_consumer import TOPIC_PARTITION, group_type, target_assignment_metadata
from .schema import EMPTY, F, S, arr

_TOPIC_PARTITIONS_INFO = S("TopicPartitionsInfo", F("TopicId", "uuid"), F("TopicName", "string"),
                           F("Partitions", "[]int32"))
_TOPIC_INFO = S("TopicInfo", F("TopicId", "uuid"), F("TopicName", "string"))

SHARE_TYPES = (
    group_type(9, "ShareGroupPartitionMetadata", S(
        "ShareGroupPartitionMetadataValue",
        F("Topics", arr(S("TopicMetadata",
                          F("TopicId", "uuid"), F("TopicName", "string"),
                          F("NumPartitions", "int32"),
                          F("PartitionMetadata", arr(S("PartitionMetadata", F("Partition", "int32"),
                                                       F("Racks", "[]string")))))))),
        status="removed"),
    group_type(10, "ShareGroupMemberMetadata", S(
        "ShareGroupMemberMetadataValue",
        F("RackId", "string", nullable="0+"),
        F("ClientId", "string"),
        F("ClientHost", "string"),
        F("SubscribedTopicNames", "[]string")), member=True),
    group_type(11, "ShareGroupMetadata", S(
        "ShareGroupMetadataValue",
        F("Epoch", "int32"),
        F("MetadataHash", "int64"))),
    group_type(12, "ShareGroupTargetAssignmentMetadata", target_assignment_metadata("ShareGroup")),
    group_type(13, "ShareGroupTargetAssignmentMember", S(
        "ShareGroupTargetAssignmentMemberValue",
        F("TopicPartitions", arr(TOPIC_PARTITION))), member=True),
    group_type(14, "ShareGroupCurrentMemberAssignment", S(
        "ShareGroupCurrentMemberAssignmentValue",
        F("MemberEpoch", "int32"),
        F("PreviousMemberEpoch", "int32"),
        F("State", "int8"),
        F("AssignedPartitions", arr(S("TopicPartitions", F("TopicId", "uuid"),
                                      F("Partitions", "[]int32"))))), member=True),
    group_type(15, "ShareGroupStatePartitionMetadata", S(
        "ShareGroupStatePartitionMetadataValue",
        F("InitializingTopics", arr(_TOPIC_PARTITIONS_INFO)),
        F("InitializedTopics", arr(_TOPIC_PARTITIONS_INFO)),
        F("DeletingTopics", arr(_TOPIC_INFO)))),
)

_TASK_IDS = S("TaskIds", F("SubtopologyId", "string"), F("Partitions", "[]int32"))
_TASK_IDS_WITH_EPOCHS = S("TaskIds", F("SubtopologyId", "string"), F("Partitions", "[]int32"),
                          F("AssignmentEpochs", "[]int32", nullable="0+", tag=0, default=EMPTY))
_TOPIC_CONFIG = S("TopicConfig", F("key", "string"), F("value", "string"))
_STREAMS_TOPIC_INFO = S("TopicInfo", F("Name", "string"), F("Partitions", "int32"),
                        F("ReplicationFactor", "int16"), F("TopicConfigs", arr(_TOPIC_CONFIG)))
_KEY_VALUE = S("KeyValue", F("Key", "string"), F("Value", "string"))

STREAMS_TYPES = (
    group_type(17, "StreamsGroupMetadata", S(
        "StreamsGroupMetadataValue",
        F("Epoch", "int32"),
        F("MetadataHash", "int64"),
        F("ValidatedTopologyEpoch", "int32", tag=0, default=-1),
        F("LastAssignmentConfigs", arr(S("LastAssignmentConfig", F("Key", "string"),
                                         F("Value", "string"))),
          nullable="0+", tag=1, default=EMPTY),
        F("StoredDescriptionTopologyEpoch", "int32", tag=2, default=-1),
        F("FailedDescriptionTopologyEpoch", "int32", tag=3, default=-1))),
    group_type(18, "StreamsGroupPartitionMetadata", S(
        "StreamsGroupPartitionMetadataValue",
        F("Topics", arr(S("TopicMetadata", F("TopicId", "uuid"), F("TopicName", "string"),
                          F("NumPartitions", "int32"))))),
        status="removed"),
    group_type(19, "StreamsGroupMemberMetadata", S(
        "StreamsGroupMemberMetadataValue",
        F("InstanceId", "string", nullable="0+"),
        F("RackId", "string", nullable="0+"),
        F("ClientId", "string"),
        F("ClientHost", "string"),
        F("RebalanceTimeoutMs", "int32", default=-1),
        F("TopologyEpoch", "int32"),
        F("ProcessId", "string"),
        F("UserEndpoint", S("Endpoint", F("Host", "string"), F("Port", "uint16")),
          nullable="0+", default=None),
        F("ClientTags", arr(_KEY_VALUE))), member=True),
    group_type(20, "StreamsGroupTargetAssignmentMetadata",
               target_assignment_metadata("StreamsGroup")),
    group_type(21, "StreamsGroupTargetAssignmentMember", S(
        "StreamsGroupTargetAssignmentMemberValue",
        F("ActiveTasks", arr(_TASK_IDS)),
        F("StandbyTasks", arr(_TASK_IDS)),
        F("WarmupTasks", arr(_TASK_IDS))), member=True),
    group_type(22, "StreamsGroupCurrentMemberAssignment", S(
        "StreamsGroupCurrentMemberAssignmentValue",
        F("MemberEpoch", "int32"),
        F("PreviousMemberEpoch", "int32"),
        F("State", "int8"),
        *(F(name, arr(_TASK_IDS_WITH_EPOCHS)) for name in (
            "ActiveTasks", "StandbyTasks", "WarmupTasks", "ActiveTasksPendingRevocation",
            "StandbyTasksPendingRevocation", "WarmupTasksPendingRevocation"))), member=True),
    group_type(23, "StreamsGroupTopology", S(
        "StreamsGroupTopologyValue",
        F("Epoch", "int32"),
        F("Subtopologies", arr(S(
            "Subtopology",
            F("SubtopologyId", "string"),
            F("SourceTopics", "[]string"),
            F("SourceTopicRegex", "[]string"),
            F("StateChangelogTopics", arr(_STREAMS_TOPIC_INFO)),
            F("RepartitionSinkTopics", "[]string"),
            F("RepartitionSourceTopics", arr(_STREAMS_TOPIC_INFO)),
            F("CopartitionGroups", arr(S("CopartitionGroup",
                                         F("SourceTopics", "[]int16"),
                                         F("SourceTopicRegex", "[]int16"),
                                         F("RepartitionSourceTopics", "[]int16"))))))))),
    group_type(24, "StreamsGroupTargetAssignmentResolvedTopicIds", S(
        "StreamsGroupTargetAssignmentResolvedTopicIdsValue",
        F("AssignmentEpoch", "int32"),
        F("ResolvedTopicIdsBySubtopology", arr(S("ResolvedTopicIds",
                                                 F("SubtopologyId", "string"),
                                                 F("TopicIds", "[]uuid"))))),
        status="unverified"),
)

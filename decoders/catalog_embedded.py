"""Client-owned blobs embedded in coordinator values (never flexible, version-prefixed int16).

``GroupMetadataValue.members[].subscription/assignment`` when ``protocolType == "consumer"`` and
``ConsumerGroupMemberMetadataValue.ClassicMemberMetadata.SupportedProtocols[].Metadata``.
"""

from __future__ import annotations

from .schema import F, S, Versions, arr

EMBEDDED_VERSIONS = Versions.parse("0-3")
_TOPIC_PARTITION = S("TopicPartition", F("Topic", "string"), F("Partitions", "[]int32"))

SUBSCRIPTION = S(
    "ConsumerProtocolSubscription",
    F("Topics", "[]string"),
    F("UserData", "bytes", nullable="0+", default=None),
    F("OwnedPartitions", arr(S("TopicPartition", F("Topic", "string", "1+"),
                               F("Partitions", "[]int32", "1+"))), "1+"),
    F("GenerationId", "int32", "2+", default=-1),
    F("RackId", "string", "3+", nullable="3+", default=None))

ASSIGNMENT = S(
    "ConsumerProtocolAssignment",
    F("AssignedPartitions", arr(_TOPIC_PARTITION)),
    F("UserData", "bytes", nullable="0+", default=None))

"""Types 0-2: offset commits and classic-protocol group metadata (the pre-KIP-848 records).

Ids 0 and 1 shared one schema before 4.1; trunk gives id 0 its own ``LegacyOffsetCommit*`` schema
with value version 0 only, and we follow trunk (type 0 + value v1 is an unknown version).
"""

from __future__ import annotations

from .schema import F, RecordType, S, Versions, arr

OFFSET_KEY_FIELDS = (F("group", "string", "0"), F("topic", "string", "0"),
                     F("partition", "int32", "0"))

LEGACY_OFFSET_COMMIT = RecordType(
    0, "LegacyOffsetCommit",
    key=S("LegacyOffsetCommitKey", *OFFSET_KEY_FIELDS),
    value=S("LegacyOffsetCommitValue",
            F("offset", "int64", "0"),
            F("metadata", "string", "0"),
            F("commitTimestamp", "int64", "0")),
    valid_versions=Versions.parse("0"), flexible_versions=Versions.parse("none"),
    status="legacy")

OFFSET_COMMIT = RecordType(
    1, "OffsetCommit",
    key=S("OffsetCommitKey", *OFFSET_KEY_FIELDS),
    value=S("OffsetCommitValue",
            F("offset", "int64"),
            F("leaderEpoch", "int32", "3+", default=-1),
            F("metadata", "string"),
            F("commitTimestamp", "int64"),
            # v1 only: v2 (KIP-211) dropped the explicit expiry again.
            F("expireTimestamp", "int64", "1", default=-1),
            F("topicId", "uuid", "4+", tag=0)),
    valid_versions=Versions.parse("0-4"), flexible_versions=Versions.parse("4+"))

MEMBER_METADATA = S(
    "MemberMetadata",
    F("memberId", "string"),
    F("groupInstanceId", "string", "3+", nullable="3+", default=None),
    F("clientId", "string"),
    F("clientHost", "string"),
    F("rebalanceTimeout", "int32", "1+", default=-1),
    F("sessionTimeout", "int32"),
    # Opaque to the coordinator; decoded by decoders.embedded when protocolType is "consumer".
    F("subscription", "bytes"),
    F("assignment", "bytes"))

GROUP_METADATA = RecordType(
    2, "GroupMetadata",
    key=S("GroupMetadataKey", F("group", "string", "0")),
    value=S("GroupMetadataValue",
            F("protocolType", "string"),
            F("generation", "int32"),
            F("protocol", "string", nullable="0+"),
            F("leader", "string", nullable="0+"),
            F("currentStateTimestamp", "int64", "2+", default=-1),
            F("members", arr(MEMBER_METADATA))),
    valid_versions=Versions.parse("0-4"), flexible_versions=Versions.parse("4+"))

TYPES = (LEGACY_OFFSET_COMMIT, OFFSET_COMMIT, GROUP_METADATA)

"""The fencing and consistency rule catalogue (reference §4.3), plus the replay's own checks.

Ids follow ``../shared/reference/replay-fencing-downgrade.md`` §4.3; ``RP-`` rules are
offsetlake's names for the two replay checks the catalogue does not number. The replay engine
writes its violations under these ids (``VIOLATION_RULES`` maps the two older kind names).
"""

from __future__ import annotations

from jobs.audits.registry import Rule, register

STATE, HISTORY = False, True

register(
    Rule("CG-01", "critical", "partition owned by two members",
         "No partition is in two members' assigned or pending-revocation partitions at once.",
         "ConsumerGroup partition-ownership index (IllegalStateException on replay); KIP-848", STATE),
    Rule("CG-02", "critical", "partition both assigned and revoking",
         "A member's assigned partitions and partitions pending revocation never overlap.",
         "ConsumerGroup ownership index; CurrentAssignmentBuilder", STATE),
    Rule("CG-03", "high", "member epoch ahead of the group",
         "A member epoch (when >= 0) never exceeds the target assignment epoch, which never "
         "exceeds the group epoch.", "KIP-848 epoch model; CurrentAssignmentBuilder", STATE),
    Rule("CG-04", "high", "impossible member epoch",
         "A live member epoch is 0, -2 (static members only) or positive, and its previous epoch "
         "is not newer than it.", "GroupMetadataManager heartbeat and static leave", STATE),
    Rule("CG-05", "medium", "member state contradicts its partitions",
         "State is STABLE, UNREVOKED_PARTITIONS or UNRELEASED_PARTITIONS; UNREVOKED_PARTITIONS "
         "exactly when partitions are pending revocation; a STABLE member at the target epoch "
         "owns its target.", "CurrentAssignmentBuilder; MemberState", STATE),
    Rule("CG-06", "high", "partition targeted to two members",
         "The target assignment gives each partition to at most one member.",
         "ConsumerGroupPartitionAssignor contract; TargetAssignmentBuilder", STATE),
    Rule("CG-07", "critical", "member records out of step",
         "Member metadata is removed only after its current and target assignment; a current "
         "assignment or target exists only for a member; instance ids are unique.",
         "GroupMetadataManager replay checks; static member map", STATE),
    Rule("CG-08", "critical", "group removed while it still has state",
         "A group (or its target assignment) is tombstoned only after its members and target "
         "members are.", "GroupMetadataManager replay (createGroupTombstoneRecords order)", STATE),
    Rule("CG-09", "high", "epoch regression",
         "Group and target epochs never decrease within one incarnation; a member epoch only "
         "decreases to -2, 0 or on removal; a retained partition keeps its assignment epoch.",
         "KIP-848; KIP-1251 (ConsumerGroupMember assignment epochs)", HISTORY),
    Rule("CG-10", "high", "assignment epochs out of range",
         "AssignmentEpochs has one entry per partition, each >= 0, not above the member epoch "
         "(when it is >= 1) nor the target epoch.",
         "KIP-1251; Utils.assignmentFromTopicPartitions (ERROR log and fallback)", STATE),
    Rule("CG-11", "high", "partition handed over within one epoch",
         "A partition leaving member A at epoch e is given to another member at an assignment "
         "epoch greater than e.", "CurrentAssignmentBuilder: revoke at the old epoch, assign at a "
         "newer target epoch", HISTORY),
    Rule("CG-12", "medium", "partitions held by a departed static member",
         "A static member at epoch -2 holds its partitions no longer than the session timeout.",
         "GroupMetadataManager static member leave (group.consumer.session.timeout.ms)", STATE),
    Rule("OF-01", "high", "commit for a partition nobody owns",
         "While a consumer group has members, offsets are committed only for partitions some "
         "member owns.", "ConsumerGroup.validateOffsetCommit (no ownership check on the equal-"
         "epoch path); KIP-848 fencing intent", HISTORY),
    Rule("OF-02", "high", "commit in a hand-over gap",
         "No offset is committed for a partition between its previous owner's release and its "
         "next owner's acquisition.", "ConsumerGroup.validateOffsetCommit; KIP-1251", HISTORY),
    Rule("OF-03", "high", "committed offset went backwards",
         "A committed offset moves backwards only by an admin reset of an empty group, a topic "
         "recreation or the owning member itself.", "KIP-848 fencing intent; OffsetMetadataManager",
         HISTORY),
    Rule("OF-05", "medium", "classic commit outside the assignment",
         "While a classic group has members, offsets are committed only for partitions of the "
         "current generation's assignment.", "ClassicGroup.validateOffsetCommit (no ownership "
         "check)", HISTORY),
    Rule("WIN-01", "info", "lagging-commit window",
         "Under KIP-1251 a member's commits for a partition are accepted for any client epoch from "
         "the partition's assignment epoch up to the member epoch; the width is the exposure.",
         "KIP-1251; ConsumerGroup.validateOffsetCommit, StreamsGroup.createAssignmentEpochValidator",
         STATE),
    Rule("TX-01", "high", "hanging transaction",
         "Transactional offsets get a COMMIT or ABORT marker within transaction.max.timeout.ms.",
         "OffsetMetadataManager pending transactional offsets", STATE),
    Rule("TX-02", "info", "transactional offset not installed",
         "A COMMIT marker installs a pending offset only if it is newer in the log than the "
         "installed one.", "OffsetMetadataManager.replayEndTransactionMarker", STATE),
    Rule("TX-03", "high", "transactional commit for a partition nobody owns",
         "While a consumer group has members, transactional offsets are committed only for "
         "partitions some member owns.", "ConsumerGroup.validateOffsetCommit (unfenced "
         "transactional commits since KAFKA-18060)", HISTORY),
    Rule("CL-01", "high", "partition owned by two classic members",
         "Within one classic GroupMetadata no partition is in two members' ownedPartitions.",
         "cooperative rebalance protocol (KIP-429)", STATE),
    Rule("CL-02", "high", "partition handed over without revocation",
         "Within one classic GroupMetadata a partition owned by one member is not assigned to "
         "another.", "ConsumerCoordinator cooperative assignment validation (KIP-429)", STATE),
    Rule("CL-03", "high", "partition assigned to two classic members",
         "Within one classic GroupMetadata each partition is assigned to at most one member.",
         "ConsumerPartitionAssignor contract", STATE),
    Rule("CL-04", "medium", "inconsistent classic generation",
         "Generations increase within an incarnation; a non-empty group has a leader among its "
         "members and a protocol; a member's subscription generation is older than the group's.",
         "ClassicGroup; ConsumerProtocolSubscription v2+", HISTORY),
    Rule("MG-01", "critical", "classic and consumer records mixed",
         "A group id is one group type at a time: no modern-group record for a live non-simple "
         "classic group, no record of one modern type for a group of another, and no classic "
         "tombstone for a live modern group.",
         "GroupMetadataManager.getOrMaybeCreatePersistedConsumerGroup (KAFKA-17306, KAFKA-21117)",
         STATE),
    Rule("MG-02", "medium", "conversion with an unexpected shape",
         "An online upgrade sets group, target and member epochs to the classic generation; an "
         "online downgrade writes generation = group epoch and no leader.",
         "ConsumerGroupMigrationPolicy conversions in GroupMetadataManager", HISTORY),
    Rule("MG-03", "info", "orphan offsets",
         "Offsets outlive their group only until expiry: offsets left after the group's "
         "tombstone are loaded without a group.", "GroupMetadataManager.deleteGroups (offset "
         "tombstones first); OffsetMetadataManager.replay", STATE),
    Rule("RP-01", "info", "record type unknown to the loader",
         "Every record type in the log is one the coordinator replays; others are skipped with "
         "a warning.", "CoordinatorLoaderImpl (UnknownRecordTypeException: WARN and skip)", STATE),
    Rule("RP-02", "medium", "producer id and transactional flag disagree",
         "A batch carries a producer id exactly when it is transactional.",
         "OffsetMetadataManager keys pending offsets on the producer id alone", STATE),
)

# Replay violation kinds written before the registry existed, and the rule that now names them.
VIOLATION_RULES = {"UNKNOWN_RECORD_TYPE": "RP-01", "TX-FLAG": "RP-02"}


def rule_of_violation(kind: str) -> str:
    return VIOLATION_RULES.get(kind, kind)

from jobs.audits import insights as _insights  # noqa: E402, F401  (the insight rules: EX-, GH-, TP-, CH-)

"""The insight rules: findings computed in SQL over a snapshot's tables and the ``sql/`` views
(``sql/rules/<rule id>.sql``), declared here like every other rule of the registry.

Each file is one ``select`` with the ``findings`` columns (``jobs.lake.findings``) in order; it
reads the views registered for the audited snapshot and the one-row ``settings`` view (broker
settings and thresholds, from the ``insights`` section of conf/). :mod:`jobs.stages.insights`
runs them for ``offsetlake audit``. The forecasts and thresholds they rest on, and the Kafka
source of each fact, are in the header of the view each rule reads.
"""

from __future__ import annotations

from pathlib import Path

from jobs.audits.registry import Rule, register

RULES_DIR = Path(__file__).resolve().parents[2] / "sql" / "rules"
STATE = False

register(
    Rule("EX-01", "medium", "committed offsets expire soon",
         "No committed offset of a group with members, or with a record within "
         "`recent_activity_hours`, expires within `expiry_warning_hours` of the snapshot "
         "(sql/offset_expiry.sql; one finding per group and topic).",
         "OffsetMetadataManager.cleanupExpiredOffsets; OffsetExpirationConditionImpl."
         "isOffsetExpired; offsetExpirationCondition and isSubscribedToTopic of ClassicGroup, "
         "ConsumerGroup, StreamsGroup; GroupCoordinatorShard.cleanupGroupMetadata; "
         "GroupCoordinatorConfig (offsets.retention.minutes)", STATE),
    Rule("GH-01", "low", "ghost group",
         "A group with committed offsets has had members within `ghost_idle_hours` "
         "(sql/ghost_groups.sql; a group that never had members, only offsets, is a notice).",
         "GroupMetadataManager.getOrMaybeCreateClassicGroup (a commit creates an empty simple "
         "group); GroupCoordinatorShard.cleanupGroupMetadata -> OffsetMetadataManager."
         "cleanupExpiredOffsets -> GroupMetadataManager.maybeDeleteGroup (the group stays until "
         "its offsets expire)", STATE),
    Rule("TP-01", "high", "offset of a recreated topic",
         "A group's current committed offset carries the topic's current id: deleting a topic "
         "tombstones its offsets, so an older id survives only where the coordinator missed the "
         "deletion, and a fetch by the new id answers -1 (sql/recreated_topics.sql).",
         "OffsetMetadataManager.onTopicsDeleted; OffsetMetadataManager.fetchOffsets "
         "(isMismatchedTopicId); KafkaApis.handleOffsetCommitRequest; KIP-516", STATE),
    Rule("CH-01", "medium", "rebalance storm",
         "A group's epoch plus classic generation moves fewer than "
         "`storm_epoch_bumps_per_hour` times in any hour (sql/group_churn.sql; compaction keeps "
         "only the latest epoch records, so a compacted log can hide a past storm, never invent "
         "one).",
         "GroupMetadataManager.updateSubscriptionMetadata and consumerGroupFenceMembers "
         "(newConsumerGroupEpochRecord); ClassicGroup.initNextGeneration from "
         "completeClassicGroupJoin", STATE),
)


def rule_files(rules_dir: Path = RULES_DIR) -> dict[str, Path]:
    """``sql/rules/<rule id>.sql`` by rule id, in id order."""
    return {p.stem: p for p in sorted(Path(rules_dir).glob("*.sql"))}

"""The group-history tables the replay writes: column contracts as data.

``TABLE_COLUMNS`` is the single description of every replay table (Spark derives its schemas from
it, ``docs/tables.md`` is generated from it with :mod:`jobs.lake.history_docs`). Types are Spark
SQL type names. The Spark job adds ``SNAPSHOT_COLUMN`` in front of every row.

Every row carries the log position of the record it came from as ``log_partition``/``log_offset``
(named so because ``partition`` is the topic partition in ``offsets`` and ``member_assignments``);
rows of final-state tables carry the position of the record that last changed them.
"""

from __future__ import annotations

SNAPSHOT_COLUMN = ("snapshot_id", "string")
_POSITION = [("log_partition", "int"), ("log_offset", "bigint")]

TABLE_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "groups": [
        ("group_id", "string"), ("group_type", "string"), ("group_state", "string"),
        ("is_simple", "boolean"), ("group_epoch", "int"), ("target_assignment_epoch", "int"),
        ("generation", "int"), ("protocol_type", "string"), ("protocol", "string"),
        ("leader", "string"), ("current_state_timestamp", "bigint"), ("member_count", "int"),
        *_POSITION],
    "members": [
        ("group_id", "string"), ("member_id", "string"), ("instance_id", "string"),
        ("rack_id", "string"), ("client_id", "string"), ("client_host", "string"),
        ("subscribed_topic_names", "array<string>"), ("subscribed_topic_regex", "string"),
        ("server_assignor", "string"), ("rebalance_timeout_ms", "int"),
        ("session_timeout_ms", "int"), ("uses_classic_protocol", "boolean"),
        ("member_epoch", "int"), ("previous_member_epoch", "int"), ("member_state", "string"),
        *_POSITION],
    "member_assignments": [
        ("group_id", "string"), ("member_id", "string"), ("topic_id", "string"),
        ("topic_name", "string"), ("subtopology_id", "string"), ("partition", "int"),
        ("assignment_epoch", "int"), ("assignment_epoch_source", "string"),
        ("is_pending_revocation", "boolean"), *_POSITION],
    "target_assignments": [
        ("group_id", "string"), ("member_id", "string"), ("topic_id", "string"),
        ("topic_name", "string"), ("subtopology_id", "string"), ("partition", "int"),
        ("target_assignment_epoch", "int"), *_POSITION],
    "offsets": [
        ("group_id", "string"), ("topic", "string"), ("partition", "int"),
        ("committed_offset", "bigint"), ("leader_epoch", "int"), ("metadata", "string"),
        ("commit_timestamp", "bigint"), ("expire_timestamp", "bigint"), ("topic_id", "string"),
        ("producer_id", "bigint"), ("is_transactional", "boolean"), *_POSITION],
    "offset_commits": [
        ("group_id", "string"), ("topic", "string"), ("partition", "int"),
        ("committed_offset", "bigint"), ("leader_epoch", "int"), ("metadata", "string"),
        ("commit_timestamp", "bigint"), ("expire_timestamp", "bigint"), ("topic_id", "string"),
        ("record_type", "int"), ("value_version", "int"), ("is_tombstone", "boolean"),
        ("producer_id", "bigint"), ("is_transactional", "boolean"), ("outcome", "string"),
        ("is_installed", "boolean"), ("marker_log_offset", "bigint"), *_POSITION,
        ("log_timestamp", "bigint")],
    "epochs": [
        ("group_id", "string"), ("member_id", "string"), ("epoch_kind", "string"),
        ("epoch", "int"), ("previous_epoch", "int"), *_POSITION, ("log_timestamp", "bigint")],
    "transactions": [
        ("group_id", "string"), ("producer_id", "bigint"), ("first_log_offset", "bigint"),
        ("last_log_offset", "bigint"), ("marker_log_offset", "bigint"), ("outcome", "string"),
        ("offset_count", "int"), *_POSITION],
    "violations": [
        ("rule_id", "string"), ("severity", "string"), ("group_id", "string"),
        ("member_id", "string"), ("message", "string"), *_POSITION],
}

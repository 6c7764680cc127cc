"""One-line meanings of every replay table and column; ``render_tables_doc()`` writes
``docs/tables.md`` from these and :data:`jobs.lake.history.TABLE_COLUMNS` (a test keeps them equal).
"""

from __future__ import annotations

from jobs.lake.history import SNAPSHOT_COLUMN, TABLE_COLUMNS

POSITION = {"log_partition": "`__consumer_offsets` partition of the record the row comes from",
            "log_offset": "log offset of that record (final-state tables: the record that last "
                          "changed the row)"}
OFFSET_FIELDS = {
    "topic": "topic name (offset records are keyed by name)",
    "partition": "topic partition",
    "committed_offset": "the committed offset (null for a tombstone)",
    "leader_epoch": "leader epoch sent with the commit (null when -1 / absent)",
    "metadata": "client metadata string",
    "commit_timestamp": "commit time (broker clock, ms)",
    "expire_timestamp": "explicit expiry time (value v1 only; null otherwise)",
    "topic_id": "topic id (value v4, 4.1+; else resolved from other records; null if unknown)",
    "producer_id": "producer id of the batch (-1 = not transactional)",
}
PARTITION_FIELDS = {
    "topic_id": "topic id (consumer and share groups)",
    "topic_name": "topic name when known (type 4/15 metadata, offset commits, cluster metadata)",
    "subtopology_id": "streams groups: subtopology of the active task (topic columns null)",
    "partition": "partition (streams: task partition)",
}

TABLE_DOCS: dict[str, tuple[str, dict[str, str]]] = {
    "groups": ("One row per group alive at the end of the snapshot.", {
        "group_id": "group id",
        "group_type": "Kafka's group type: classic, consumer, share or streams",
        "group_state": "derived state in Kafka's words: Empty, Assigning, Reconciling, Stable "
                       "(classic/share: Empty or Stable; streams also NotReady)",
        "is_simple": "classic group without protocol type and members (created by offset commits)",
        "group_epoch": "group epoch (modern groups; null for classic)",
        "target_assignment_epoch": "target assignment epoch (-1 after its tombstone; null for "
                                   "classic)",
        "generation": "classic generation (null for modern groups)",
        "protocol_type": "classic protocol type (e.g. consumer, connect); null if empty",
        "protocol": "classic protocol (assignor) name",
        "leader": "classic group leader member id",
        "current_state_timestamp": "classic currentStateTimestamp (ms), null when absent",
        "member_count": "number of members",
        **POSITION}),
    "members": ("One row per member of a live group.", {
        "group_id": "group id", "member_id": "member id",
        "instance_id": "static member instance id (group.instance.id)",
        "rack_id": "client rack", "client_id": "client id", "client_host": "client host",
        "subscribed_topic_names": "subscribed topics (sorted)",
        "subscribed_topic_regex": "subscribed regular expression",
        "server_assignor": "server-side assignor requested by the member",
        "rebalance_timeout_ms": "rebalance timeout (ms)",
        "session_timeout_ms": "session timeout of classic-protocol members (ms)",
        "uses_classic_protocol": "member speaks the classic protocol (classic group, or "
                                 "ClassicMemberMetadata with supported protocols in a "
                                 "consumer group)",
        "member_epoch": "member epoch (-1 after its assignment tombstone, -2 static leave; null "
                        "for classic members)",
        "previous_member_epoch": "previous member epoch",
        "member_state": "Kafka's MemberState: STABLE, UNREVOKED_PARTITIONS, "
                        "UNRELEASED_PARTITIONS, UNKNOWN (streams: *_TASKS)",
        **POSITION}),
    "member_assignments": ("One row per member x owned partition (assigned or pending "
                           "revocation); classic members from their decoded assignment.", {
        "group_id": "group id", "member_id": "member id", **PARTITION_FIELDS,
        "assignment_epoch": "KIP-1251 effective assignment epoch (classic: the generation)",
        "assignment_epoch_source": "explicit, legacy_null (member epoch, clamped at 0), "
                                   "length_mismatch (member epoch), member_epoch (share), classic",
        "is_pending_revocation": "partition is in PartitionsPendingRevocation",
        **POSITION}),
    "target_assignments": ("One row per member x partition of the target assignment.", {
        "group_id": "group id", "member_id": "member id", **PARTITION_FIELDS,
        "target_assignment_epoch": "the group's target assignment epoch",
        **POSITION}),
    "offsets": ("Latest committed offset per group, topic and partition (after COMMIT "
                "tie-breaks; open transactions excluded).", {
        "group_id": "group id", **OFFSET_FIELDS,
        "is_transactional": "installed by a committed transaction",
        **POSITION}),
    "offset_commits": ("Every offset-commit record (incl. tombstones and transactional ones) "
                       "in log order.", {
        "group_id": "group id", **OFFSET_FIELDS,
        "record_type": "0 (legacy key) or 1", "value_version": "OffsetCommitValue version",
        "is_tombstone": "record is a tombstone (offset deleted or expired)",
        "is_transactional": "batch is transactional",
        "outcome": "committed, aborted, open, non_transactional or tombstone",
        "is_installed": "the record reached the main store (false when aborted, open, skipped "
                        "by the tie-break or wiped by a tombstone)",
        "marker_log_offset": "offset of the COMMIT/ABORT marker that resolved it",
        **POSITION, "log_timestamp": "record timestamp (ms)"}),
    "epochs": ("One row per record that changes a group, target assignment, member epoch or "
               "classic generation.", {
        "group_id": "group id", "member_id": "member id (null for group-level epochs)",
        "epoch_kind": "group, target_assignment, member or generation",
        "epoch": "new value", "previous_epoch": "value before the record (null if none)",
        **POSITION, "log_timestamp": "record timestamp (ms)"}),
    "transactions": ("One row per group x producer transaction.", {
        "group_id": "group id", "producer_id": "producer id",
        "first_log_offset": "offset of its first offset record",
        "last_log_offset": "offset of its last offset record",
        "marker_log_offset": "offset of the marker (null while open)",
        "outcome": "committed, aborted or open (no marker by the end of the snapshot)",
        "offset_count": "number of offset records in the transaction",
        **POSITION}),
    "violations": ("Inconsistencies the coordinator would refuse to load (replay carried on), "
                   "and replay notes.", {
        "rule_id": "audit rule id (CG-01, CG-02, CG-07, CG-08, CG-10, MG-01, TX-02) or a "
                   "descriptive code (UNKNOWN_RECORD_TYPE, TX-FLAG)",
        "severity": "CRITICAL, HIGH, MEDIUM or INFO",
        "group_id": "group id (null when unknown)", "member_id": "member id when relevant",
        "message": "what was found and what replay did", **POSITION}),
}


def render_tables_doc() -> str:
    lines = ["# Replay tables", "",
             "Generated from `jobs/replay/tables.py` (`TABLE_COLUMNS`) and "
             "`jobs/lake/history_docs.py`; `tests/test_replay_docs.py` keeps this file in sync.",
             f"Every table also starts with `{SNAPSHOT_COLUMN[0]}` ({SNAPSHOT_COLUMN[1]}), added "
             "by the Spark job.", ""]
    for table, columns in TABLE_COLUMNS.items():
        summary, meanings = TABLE_DOCS[table]
        lines += [f"## `{table}`", "", summary, "", "| column | type | meaning |",
                  "|---|---|---|"]
        lines += [f"| `{name}` | {dtype} | {meanings[name]} |" for name, dtype in columns]
        lines.append("")
    return "\n".join(lines)

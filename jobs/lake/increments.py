"""The incremental lake's own tables: which snapshots it holds, in what order, and what each one
held of the records the lake keeps once (docs/lake.md, "Across snapshots").

In an incremental lake ``raw_records`` holds each record of ``__consumer_offsets`` once, keyed by
``(partition, offset)``, under the ``snapshot_id`` of the snapshot that first saw it. A record is
in snapshot S when it was first seen by S or an earlier snapshot (``snapshots.seq``) and
compaction had not removed it by S (``record_removals``): compaction only removes records, so a
record is present in one unbroken run of snapshots. ``batches`` identifies every batch the lake
has read (:mod:`decoders.log.index`), so the next snapshot skips the ones it holds unchanged.

Every table is partitioned by ``snapshot_id`` and replaced per snapshot like the others; a run
writes ``snapshots`` last, so a snapshot listed there is complete.
"""

from __future__ import annotations

from jobs.lake.bronze import RAW_RECORDS_COLUMNS
from jobs.lake.findings import FINDINGS_COLUMNS
from jobs.lake.tables import spark_type

SNAPSHOTS = "snapshots"
SNAPSHOTS_COLUMNS = (
    ("snapshot_id", "string", "id of the snapshot"),
    ("seq", "int", "its place in the lake's order of snapshots, from 1"),
    ("cluster_id", "string", "the Kafka cluster it was taken from (meta.properties, or a "
                             "capture's manifest); null when the snapshot does not say"),
    ("source", "string", "segments or capture"),
    ("records", "bigint", "records (data and control) the snapshot held"),
    ("new_records", "bigint", "of those, records the lake did not hold before"),
    ("removed_records", "bigint", "records the previous snapshot held and this one does not "
                                  "(compaction removed them)"),
    ("batches_skipped", "bigint", "batches the lake held unchanged (same base offset, checksum "
                                  "and length), not read again"),
    ("bytes_read", "bigint", "segment bytes read (the rest was skipped)"),
    ("newest_timestamp", "bigint", "the newest record timestamp the snapshot held (ms)"),
)

# The size of the largest record each snapshot read: an incremental run reads the lake's rows a
# batch of rows at a time (Spark's vectorized Parquet reader) only when the largest row any
# snapshot read allows it (jobs.stages.increment.columnar_rows).
LARGEST_RECORDS = "largest_records"
LARGEST_RECORDS_COLUMNS = (
    ("snapshot_id", "string", "id of the snapshot"),
    ("largest_row_bytes", "bigint", "raw key and value bytes of the largest record the snapshot "
                                    "read (its new records and any it read again); null when not "
                                    "known (a capture) until the next run fills it in from the "
                                    "records the snapshot was the first to hold"),
)

# The topic id -> name pairs the offset commits of each snapshot's new records give (history, as
# offset_commits is: a snapshot writes the pairs of the records it was the first to hold). An
# incremental run looks up its replayed groups' topic ids here, not in every offset commit the
# lake holds (jobs.stages.increment_run._topic_names). Every snapshot also writes one row of
# nulls, so a snapshot written before the table (its pairs read from offset_commits) is told
# apart from one whose commits name no topic id.
COMMIT_TOPIC_IDS = "commit_topic_ids"
COMMIT_TOPIC_IDS_COLUMNS = (
    ("snapshot_id", "string", "the snapshot that first held the commits"),
    ("topic_id", "string", "a topic id its new offset commits name; null in the snapshot's one "
                           "row of nulls"),
    ("topic", "string", "the topic those commits name with it"),
)

# The raw_records rows of each snapshot's new records that are not offset commits (the key's type is
# neither 0 nor 1): group membership records (every other type), transaction markers, and records
# whose key names no type. About 1% of a lake's records, and the only held records whose bytes every
# incremental run reads: the replay decodes the held membership records of its groups again, and the
# fencing audit reads every marker (jobs.stages.increment.non_commit_rows). History, as raw_records
# is; every snapshot also writes one row null but for its snapshot_id, so a snapshot written before
# the table (read from raw_records) is told apart from one with no such record.
RAW_NON_COMMIT_RECORDS = "raw_non_commit_records"
RAW_NON_COMMIT_RECORDS_COLUMNS = tuple((name, spark_type(dtype), doc)
                                       for name, dtype, doc in RAW_RECORDS_COLUMNS)

SNAPSHOT_PARTITIONS = "snapshot_partitions"
SNAPSHOT_PARTITIONS_COLUMNS = (
    ("snapshot_id", "string", "id of the snapshot"),
    ("partition", "int", "partition of __consumer_offsets"),
    ("log_start_offset", "bigint", "the first offset of the partition's first batch in the "
                                   "snapshot"),
    ("log_end_offset", "bigint", "one past the last offset of its last batch"),
    ("records", "bigint", "records the snapshot held in the partition"),
    ("new_records", "bigint", "of those, records the lake did not hold before"),
    ("removed_records", "bigint", "records of the partition the previous snapshot held and this "
                                  "one does not"),
    ("last_held_offset", "bigint", "the newest offset the lake has held a record at in the "
                                   "partition, up to this snapshot"),
    ("late_records", "bigint", "new records at offsets below the previous snapshot's "
                               "last_held_offset: they fill gaps an earlier snapshot left "
                               "(normally 0)"),
)

BATCHES = "batches"
BATCHES_COLUMNS = (
    ("snapshot_id", "string", "the snapshot that first read the batch"),
    ("partition", "int", "partition of __consumer_offsets"),
    ("base_offset", "bigint", "the batch's base offset (a legacy message's offset)"),
    ("last_offset", "bigint", "its last offset (kept by compaction)"),
    ("crc", "bigint", "its stored checksum: a rewrite by the log cleaner has another"),
    ("length", "int", "its bytes on disk, prefix included"),
    ("magic", "tinyint", "record format: 0, 1 or 2"),
    ("records", "int", "records in it (magic 2 recordsCount; null for legacy)"),
)

RECORD_REMOVALS = "record_removals"
RECORD_REMOVALS_COLUMNS = (
    ("snapshot_id", "string", "the first snapshot without the record"),
    ("partition", "int", "partition of __consumer_offsets"),
    ("offset", "bigint", "log offset of the record (a row of raw_records)"),
)

GAPS = "gaps"
GAPS_COLUMNS = (
    ("snapshot_id", "string", "the snapshot that found the gap: the offsets between the lake's "
                              "newest record before it and its new records"),
    ("partition", "int", "partition of __consumer_offsets"),
    ("start_offset", "bigint", "first offset no snapshot had held a record at"),
    ("end_offset", "bigint", "one past the last (the offset of the next record held)"),
)

REPLAYED_GROUPS = "replayed_groups"
REPLAYED_GROUPS_COLUMNS = (
    ("snapshot_id", "string", "a snapshot that replayed the group again: it brought new records "
                              "of the group, removed one its state rests on (a membership "
                              "record, a tombstone, a commit its group row rests on or the "
                              "only one naming a topic id), or changed what "
                              "its fencing findings depend on (the regime, the snapshot's time, "
                              "a gap of the lake filled); its state rows were written again"),
    ("group_id", "string", "the group"),
    ("findings_valid_from", "bigint", "its fencing findings hold for snapshots whose newest "
                                      "timestamp (ms) is at least this; null: no lower bound"),
    ("findings_valid_until", "bigint", "and below this; null: no upper bound. Rules that wait "
                                       "for a deadline (TX-01, CG-12, MG-03) bound it: a later "
                                       "snapshot outside it audits the group again"),
    ("evidence_partition", "int", "the partition of __consumer_offsets holding the group's "
                                  "records; null when none of its findings could turn partial"),
    ("evidence_from", "bigint", "its findings that are not partial rest on the offsets from "
                                "this one"),
    ("evidence_until", "bigint", "up to this one (exclusive): a gap there would make one "
                                 "partial (the lake keeps what compaction removes: only a "
                                 "snapshot's own audit, offsetlake audit --snapshot, loses "
                                 "evidence there)"),
)

GROUP_TOPIC_NAMES = "group_topic_names"
GROUP_TOPIC_NAMES_COLUMNS = (
    ("snapshot_id", "string", "a snapshot that replayed the group (per-group state, as "
                              "replayed_groups lists it)"),
    ("group_id", "string", "the group"),
    ("topic_id", "string", "a topic id the group's own records name (type 4/15 metadata, an "
                           "offset commit with a topic id)"),
    ("topic_name", "string", "its name there. A topic id names one topic in a cluster: these "
                             "pairs, of every group as of a snapshot, name the assignment rows "
                             "of groups whose own records do not; a run that changes them "
                             "replays the groups whose rows they name again"),
)

FENCING_FOLDS = "fencing_folds"
FENCING_FOLDS_COLUMNS = (
    ("snapshot_id", "string", "a snapshot that kept the group's fold: it audited the group from "
                              "its first record, or read many records since its last fold"),
    ("group_id", "string", "the group"),
    ("log_partition", "int", "the partition of __consumer_offsets holding its records"),
    ("folded_until", "bigint", "the log offset of the last record its fencing audit read"),
    ("open_producers", "array<bigint>", "producer ids of the transactions of the group it left "
                                        "open: their later markers end them"),
    ("regime", "string", "the fencing regime it was audited under"),
    ("code_version", "string", "sha256 of the code that audited it: another version audits "
                               "the group's history again instead of resuming"),
    ("topic_reads", "string", "JSON: the topic ids and names the audit looked up, with what "
                              "the topic names it ran under gave; the next snapshot resumes "
                              "only under names that give the same"),
    ("fold", "binary", "the audit's state before its checks at the end of the log (Python's "
                       "pickle, zlib-compressed): the next snapshot's audit of the group "
                       "starts from it and reads only the records after folded_until"),
)

VACUUMS = "vacuums"
VACUUMS_COLUMNS = (
    ("snapshot_id", "string", "a snapshot offsetlake vacuum dropped the per-snapshot state of: "
                              "its records and history stay, its own view is gone"),
    ("vacuumed_at", "bigint", "when (ms since the epoch)"),
)

BACKFILLS = "backfills"
BACKFILLS_COLUMNS = (
    ("snapshot_id", "string", "a snapshot older than the lake's newest, run with --backfill: "
                              "stored whole under its id, as a full run stores it, beside the "
                              "snapshots the lake lists in order, which it leaves unchanged"),
    ("cluster_id", "string", "the Kafka cluster it was taken from; null when it does not say"),
    ("newest_then", "string", "the lake's newest snapshot when it was backfilled"),
    ("records", "bigint", "records (data and control) it held"),
    ("backfilled_at", "bigint", "when (ms since the epoch)"),
)

# The replay's tables in an incremental lake. Per-group state: a snapshot writes the rows of the
# groups it replayed (replayed_groups); a group's state at snapshot S is its rows at the latest
# snapshot up to S that replayed it. History: a snapshot writes the rows of the records it was
# the first to hold, so the lake keeps every record's row once, compaction or not.
# fencing_findings is stored as per-group state, and is the fencing audit of each group's
# history: every record of it the lake has held (docs/lake.md, "Fencing findings of history").
GROUP_STATE_TABLES = ("groups", "members", "member_assignments", "target_assignments", "offsets",
                      "fencing_findings")
HISTORY_TABLES = ("offset_commits", "epochs", "transactions", "violations")

# The history audit (offsetlake audit --history): the fencing rules over every record the lake
# has held up to a snapshot, removed by compaction since or not; a rule's evidence is partial
# only across the lake's gaps. The columns of findings (jobs.lake.findings).
HISTORY_FINDINGS = "history_findings"
HISTORY_FINDINGS_COLUMNS = tuple(
    {"snapshot_id": ("snapshot_id", "string", "the snapshot the audited history runs through: "
                                              "every record the lake held up to it"),
     "verdict": ("verdict", "string", "violation; partial (the evidence spans a gap of the "
                                      "lake: offsets no snapshot held); notice")}.get(c[0], c)
    for c in FINDINGS_COLUMNS)

INCREMENT_TABLES = {SNAPSHOTS: SNAPSHOTS_COLUMNS, SNAPSHOT_PARTITIONS: SNAPSHOT_PARTITIONS_COLUMNS,
                    LARGEST_RECORDS: LARGEST_RECORDS_COLUMNS,
                    COMMIT_TOPIC_IDS: COMMIT_TOPIC_IDS_COLUMNS,
                    RAW_NON_COMMIT_RECORDS: RAW_NON_COMMIT_RECORDS_COLUMNS,
                    BATCHES: BATCHES_COLUMNS, RECORD_REMOVALS: RECORD_REMOVALS_COLUMNS,
                    GAPS: GAPS_COLUMNS, REPLAYED_GROUPS: REPLAYED_GROUPS_COLUMNS,
                    GROUP_TOPIC_NAMES: GROUP_TOPIC_NAMES_COLUMNS,
                    FENCING_FOLDS: FENCING_FOLDS_COLUMNS, VACUUMS: VACUUMS_COLUMNS,
                    BACKFILLS: BACKFILLS_COLUMNS, HISTORY_FINDINGS: HISTORY_FINDINGS_COLUMNS}

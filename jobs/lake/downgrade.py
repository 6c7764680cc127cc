"""The ``downgrade_findings`` contract: what an older group coordinator would do with a snapshot.

One row per (target version, ``__consumer_offsets`` partition, group, rule, class, failure mode,
severity), written by ``offsetlake audit`` with :func:`jobs.lake.replace_snapshot` (partitioned by
``snapshot_id``). Rules and classes: :mod:`jobs.audits.downgrade`.
"""

from __future__ import annotations

import pyarrow as pa

DOWNGRADE_FINDINGS = "downgrade_findings"

DOWNGRADE_FINDINGS_COLUMNS: tuple[tuple[str, pa.DataType, str], ...] = (
    ("snapshot_id", pa.string(), "id of the snapshot audited"),
    ("target_version", pa.string(), "downgrade target: 3.9, 3.9+new-coordinator, 4.0, ..."),
    ("partition", pa.int32(), "partition of __consumer_offsets (a BREAK affects all its groups)"),
    ("group_id", pa.string(), "group whose records are the evidence; null if the key is unreadable"),
    ("rule_id", pa.string(), "DU-1 .. DU-6 (jobs.audits.registry)"),
    ("class", pa.string(), "BREAK, DROP, RESURRECT, READ-AS-LATEST or INFO"),
    ("failure_mode", pa.string(), "for BREAK: fail-open (Scala: loaded empty) or fail-closed "
                                  "(Java: partition unavailable); else null"),
    ("severity", pa.string(), "info, low, medium, high or critical"),
    ("record_count", pa.int64(), "records (on disk, superseded ones included) behind the row"),
    ("live_record_count", pa.int64(), "of those, the latest record of their key"),
    ("first_offset", pa.int64(), "log offset of the first evidence record"),
    ("last_offset", pa.int64(), "log offset of the last evidence record"),
    ("evidence_offsets", pa.list_(pa.int64()), "log offsets of the evidence, first 20"),
    ("record_types", pa.list_(pa.int16()), "record types of the evidence"),
    ("message", pa.string(), "the finding in an operator's words"),
    ("details", pa.string(), "JSON: record type counts and the distinct reasons"),
)

DOWNGRADE_FINDINGS_SCHEMA = pa.schema([pa.field(name, dtype)
                                       for name, dtype, _ in DOWNGRADE_FINDINGS_COLUMNS])

# record_facts: what the downgrade audit needs of each data record beyond its bytes, kept by the
# decode stage of ``offsetlake run`` (jobs.audits.downgrade_facts.KEPT_FIELDS, same types), so
# ``offsetlake audit --target-version`` reads them instead of decoding every record again.
RECORD_FACTS = "record_facts"
RECORD_FACTS_COLUMNS: tuple[tuple[str, pa.DataType, str], ...] = (
    ("snapshot_id", pa.string(), "id of the snapshot"),
    ("partition", pa.int32(), "partition of __consumer_offsets"),
    ("offset", pa.int64(), "log offset of the record (a data record: raw_records, not a marker)"),
    ("group_id", pa.string(), "group of the key; null when the key does not decode"),
    ("member_id", pa.string(), "member of the key, for member records"),
    ("layout", pa.string(), "value layout our decoder matched (current, or an older layout of a "
                            "reused type id); null for a tombstone or a value that did not decode"),
    ("decode_error", pa.string(), "our decoder's reason when the record did not decode"),
    ("tagged_fields", pa.list_(pa.string()), "tagged fields present with a non-default value, as "
                                             "paths; ?path#tag for tags no schema knows"),
    ("protocol_type", pa.string(), "type 2: protocolType ('' for a simple group)"),
    ("classic_members", pa.int32(), "type 2: number of members"),
    ("owned_partitions", pa.list_(pa.string()), "type 8: topicId:partition, assigned and pending "
                                                "revocation"),
    ("pending_overlap", pa.bool_(), "type 8: a partition both assigned and pending revocation"),
)

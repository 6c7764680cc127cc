"""Every lake table's contract as one type: :class:`Table` (name, columns with Spark SQL types and
meanings, who writes it), registered in :data:`TABLES`, ``records`` included.

The column lists themselves stay beside their subject (:mod:`jobs.lake.bronze`,
:mod:`jobs.lake.history` with :mod:`jobs.lake.history_docs`, :mod:`jobs.lake.findings`,
:mod:`jobs.lake.downgrade`, and for ``records`` the decoder's own output schema); this module
gives them one shape, so code that needs "the columns of table T" (placeholder views, fixtures,
the schema test of every written table) asks one place.

    TABLES["records"].names()[:3]     # ['snapshot_id', 'partition', 'offset']
    TABLES["findings"].ddl()          # "`snapshot_id` string, `rule_id` string, ..."
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from decoders.batch_decode import OUTPUT_SCHEMA
from jobs.lake.bronze import QUARANTINE_COLUMNS, RAW_RECORDS_COLUMNS
from jobs.lake.downgrade import (DOWNGRADE_FINDINGS, DOWNGRADE_FINDINGS_COLUMNS, RECORD_FACTS,
                                 RECORD_FACTS_COLUMNS)
from jobs.lake.findings import (FENCING_AUDITS, FENCING_AUDITS_COLUMNS, FENCING_FINDINGS,
                                FENCING_FINDINGS_COLUMNS, FINDINGS, FINDINGS_COLUMNS,
                                INSIGHT_AUDITS, INSIGHT_AUDITS_COLUMNS, INSIGHT_FINDINGS,
                                INSIGHT_FINDINGS_COLUMNS)
from jobs.lake.history import SNAPSHOT_COLUMN, TABLE_COLUMNS
from jobs.lake.history_docs import POSITION, TABLE_DOCS


@dataclass(frozen=True)
class Column:
    name: str
    type: str          # Spark SQL type name: string, int, bigint, array<string>, variant, ...
    doc: str = ""


@dataclass(frozen=True)
class Table:
    """One lake table: partitioned by ``snapshot_id`` (its first column) and replaced per
    snapshot (:func:`jobs.lake.delta.replace_snapshot`)."""

    name: str
    doc: str
    written_by: str
    columns: tuple[Column, ...]

    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def pairs(self) -> list[tuple[str, str]]:
        """``(name, Spark SQL type)`` per column."""
        return [(c.name, c.type) for c in self.columns]

    def ddl(self) -> str:
        return ", ".join(f"`{c.name}` {c.type}" for c in self.columns)


_SPARK_NAMES = {pa.string(): "string", pa.int8(): "tinyint", pa.int16(): "smallint",
                pa.int32(): "int", pa.int64(): "bigint", pa.bool_(): "boolean",
                pa.binary(): "binary", pa.float64(): "double"}


def spark_type(dtype: pa.DataType) -> str:
    """The Spark SQL type name Spark reads an Arrow type as (``array<...>`` for lists)."""
    if pa.types.is_list(dtype):
        return f"array<{spark_type(dtype.value_type)}>"
    return _SPARK_NAMES[dtype]


def _arrow_columns(columns) -> tuple[Column, ...]:
    return tuple(Column(name, spark_type(dtype), doc) for name, dtype, doc in columns)


# records: the envelope of each data record (as in raw_records), the decoder's columns (offset
# commit fields renamed so they cannot be mistaken for the log position), the value as VARIANT.
RECORDS = "records"
RECORDS_ENVELOPE = ("snapshot_id", "partition", "offset", "timestamp", "timestamp_type",
                    "producer_id", "producer_epoch", "is_transactional", "source_file",
                    "file_position")
RECORDS_RENAMED = {"partition": "topic_partition", "offset": "committed_offset"}
RECORDS_NOT_KEPT = ("value_json", "error_reason", "error_message")   # value_json becomes value


def _records_columns() -> tuple[Column, ...]:
    raw = {name: (dtype, doc) for name, dtype, doc in RAW_RECORDS_COLUMNS}
    envelope = [Column(name, spark_type(raw[name][0]), raw[name][1]) for name in RECORDS_ENVELOPE]
    decoded = [Column(RECORDS_RENAMED.get(f.name, f.name), spark_type(f.type),
                      "decoded (decoders.batch_decode)")
               for f in OUTPUT_SCHEMA if f.name not in RECORDS_NOT_KEPT]
    return (*envelope, *decoded,
            Column("value", "variant", "the value in Kafka's JSON shape ({version, data})"))


def _history(name: str) -> Table:
    doc, column_docs = TABLE_DOCS[name]
    docs = {**POSITION, **column_docs}
    return Table(name, doc, "offsetlake run (replay)",
                 (Column(*SNAPSHOT_COLUMN, "id of the snapshot"),
                  *(Column(col, dtype, docs.get(col, "")) for col, dtype in TABLE_COLUMNS[name])))


# lag: a capture's committed offsets against the log offsets it read (jobs.stages.lag). Lag is
# what Kafka's kafka-consumer-groups --describe prints (4.3.1,
# ConsumerGroupCommand.ConsumerGroupService.getLag: end - committed, not clamped, none for -1).
LAG = "lag"
LAG_COLUMNS = (
    Column("snapshot_id", "string", "id of the snapshot (a capture)"),
    Column("group_id", "string", "group that committed the offset"),
    Column("topic", "string", "topic name (offset commits are keyed by name)"),
    Column("partition", "int", "topic partition"),
    Column("committed_offset", "bigint", "the group's committed offset at the capture's cut "
                                         "(as in offsets)"),
    Column("log_start_offset", "bigint", "the partition's log start offset as read by the "
                                         "capture; null when the cluster listed no such partition"),
    Column("log_end_offset", "bigint", "the partition's end offset read read_committed: the last "
                                       "stable offset; null as log_start_offset"),
    Column("lag", "bigint", "log_end_offset - committed_offset, not clamped: it counts the "
                            "offsets below the log start a group committed before them "
                            "(see is_committed_below_log_start), is negative when the commit is "
                            "past the end; null when committed_offset is -1 or the end is unknown"),
    Column("read_at", "bigint", "when the end offsets were read (capture's clock, ms)"),
    Column("is_committed_below_log_start", "boolean", "committed_offset < log_start_offset: the "
                                                      "records from the commit up to the log "
                                                      "start are gone, the group cannot read "
                                                      "them"),
)

# broker_configs: the broker settings a capture read (manifest.json's broker_configs, through
# jobs.stages.broker_configs), by their Kafka names; the settings view prefers them to conf/.
BROKER_CONFIGS = "broker_configs"
BROKER_CONFIGS_COLUMNS = (
    Column("snapshot_id", "string", "id of the snapshot (a capture)"),
    Column("name", "string", "broker config name, e.g. offsets.retention.minutes"),
    Column("value", "string", "its value as the broker reported it (DescribeConfigs)"),
    Column("source", "string", "where the broker took it from, Kafka's ConfigSource name: "
                               "STATIC_BROKER_CONFIG (server.properties), DEFAULT_CONFIG, "
                               "DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG"),
)

TABLES: dict[str, Table] = {
    "raw_records": Table("raw_records", "one row per record read, bytes as read",
                         "offsetlake run (ingest)", _arrow_columns(RAW_RECORDS_COLUMNS)),
    "quarantine": Table("quarantine", "what could not be read or decoded, with its bytes",
                        "offsetlake run (ingest, decode)", _arrow_columns(QUARANTINE_COLUMNS)),
    RECORDS: Table(RECORDS, "one row per data record that decoded", "offsetlake run (decode)",
                   _records_columns()),
    RECORD_FACTS: Table(RECORD_FACTS, "what the downgrade audit reads of each data record "
                        "beyond its bytes", "offsetlake run (decode)",
                        _arrow_columns(RECORD_FACTS_COLUMNS)),
    **{name: _history(name) for name in TABLE_COLUMNS},
    FENCING_AUDITS: Table(FENCING_AUDITS, "one row per snapshot the run audited for fencing: "
                          "its regime", "offsetlake run (replay)",
                          tuple(Column(*c) for c in FENCING_AUDITS_COLUMNS)),
    FENCING_FINDINGS: Table(FENCING_FINDINGS, "the fencing audit's findings, found by the run",
                            "offsetlake run (replay)",
                            tuple(Column(*c) for c in FENCING_FINDINGS_COLUMNS)),
    INSIGHT_AUDITS: Table(INSIGHT_AUDITS, "one row per snapshot the run ran the insight rules on: "
                          "what they read beside it", "offsetlake run (insights)",
                          tuple(Column(*c) for c in INSIGHT_AUDITS_COLUMNS)),
    INSIGHT_FINDINGS: Table(INSIGHT_FINDINGS, "the insight rules' findings, found by the run",
                            "offsetlake run (insights)",
                            tuple(Column(*c) for c in INSIGHT_FINDINGS_COLUMNS)),
    FINDINGS: Table(FINDINGS, "one row per audit finding", "offsetlake audit",
                    tuple(Column(*c) for c in FINDINGS_COLUMNS)),
    DOWNGRADE_FINDINGS: Table(DOWNGRADE_FINDINGS, "what an older coordinator does with the records",
                              "offsetlake audit --target-version",
                              _arrow_columns(DOWNGRADE_FINDINGS_COLUMNS)),
    LAG: Table(LAG, "per group and partition, lag at capture time (captures with log offsets)",
               "offsetlake run (lag)", LAG_COLUMNS),
    BROKER_CONFIGS: Table(BROKER_CONFIGS, "the broker settings a capture read, with their source",
                          "offsetlake run (broker_configs)", BROKER_CONFIGS_COLUMNS),
}

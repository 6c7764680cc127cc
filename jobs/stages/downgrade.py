"""Downgrade stage in Spark: ``raw_records`` -> ``downgrade_findings`` rows for some targets.

Two Arrow bodies, both pure code from :mod:`jobs.audits`: ``mapInArrow`` turns raw rows and what
the run's decode stage kept of each (``record_facts``) into record facts
(:func:`jobs.audits.downgrade_facts.facts_from_kept`, nothing decoded again; a lake without
``record_facts`` has each record decoded here, :func:`~jobs.audits.downgrade_facts.facts_from_arrow`);
then, per ``(partition, group_id)`` (:func:`jobs.stages.grouping.map_groups`), liveness is
marked (every record of a key shares its group) and the group audited for each target. The facts
come from ``raw_records`` rather than ``records``: records that matter most here (unknown types,
unknown versions) are exactly the ones ``records`` lacks (they are in ``quarantine``), and each
target reads the value bytes with its own reader.
"""

from __future__ import annotations

import pyarrow as pa

from jobs.audits.downgrade import aggregate, audit_facts
from jobs.audits.downgrade_facts import (FACTS_SCHEMA, KEPT_FIELDS, facts_from_arrow,
                                         facts_from_kept, facts_from_table, mark_live)
from jobs.audits.downgrade_targets import parse_target
from jobs.lake.downgrade import DOWNGRADE_FINDINGS_SCHEMA
from jobs.stages.grouping import map_groups

RAW_COLUMNS = ("partition", "offset", "key", "value", "producer_id", "is_control", "control_type")


def facts_body(batches):
    """mapInArrow body: raw data rows -> record facts (each record decoded)."""
    for batch in batches:
        yield facts_from_arrow(batch)


def kept_facts_body(batches):
    """mapInArrow body: raw rows with their ``record_facts`` -> record facts (nothing decoded)."""
    for batch in batches:
        yield facts_from_kept(batch)


def audit_body(snapshot_id: str, targets: list[str]):
    """The function for one (partition, group): facts -> findings rows."""
    def body(table: pa.Table) -> pa.Table:
        facts = mark_live(facts_from_table(table))
        rows = aggregate(audit_facts(facts, targets, alike=True), snapshot_id)
        return pa.Table.from_pylist(rows, schema=DOWNGRADE_FINDINGS_SCHEMA)
    return body


def downgrade_findings(spark, records_df, raw_df, snapshot_id: str, target_versions: list[str],
                       kept_df=None):
    """``downgrade_findings`` rows of one snapshot for ``target_versions`` (validated here, on
    the driver). ``records_df`` is accepted for the audit command's uniform call but not read
    (see the module docstring); ``raw_df`` is the snapshot's ``raw_records``; ``kept_df`` its
    ``record_facts`` (what the run's decode stage kept of each record), or None for a lake
    written before the table existed: then each record is decoded here.

    >>> rows = downgrade_findings(spark, records, raw, "s1", ["3.9", "4.0"])  # doctest: +SKIP
    """
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    targets = [parse_target(t).name for t in target_versions]
    data = raw_df.where(F.col("snapshot_id") == snapshot_id).select(*RAW_COLUMNS)
    if kept_df is None:
        facts = data.mapInArrow(facts_body, from_arrow_schema(FACTS_SCHEMA))
    else:
        kept = kept_df.where(F.col("snapshot_id") == snapshot_id).select(
            "partition", "offset", *KEPT_FIELDS)
        facts = data.join(kept, ["partition", "offset"], "left").mapInArrow(
            kept_facts_body, from_arrow_schema(FACTS_SCHEMA))
    # Materialized once: the marker join below reads the facts twice.
    facts = facts.localCheckpoint(eager=True)
    return map_groups(facts.transform(_markers_to_groups), ["partition", "group_id"],
                      audit_body(snapshot_id, targets), from_arrow_schema(DOWNGRADE_FINDINGS_SCHEMA))


def _markers_to_groups(facts):
    """Each transaction marker once per group its producer wrote transactional records for
    (``split_by_group`` in the pure code does the same): a group's load then sees its markers."""
    from pyspark.sql import functions as F

    is_marker = F.col("control").isNotNull()
    records = facts.where(~is_marker)
    # The set of (partition, producer, group) triples: one marker copy per group, not per record.
    writers = (records.where(F.col("producer_id") != -1)
               .select("partition", "producer_id", "group_id").distinct())
    # A left join: a marker whose transaction's records are gone still reaches the loader, with
    # the records no group can be named for (group_id null), as split_by_group does.
    markers = (facts.where(is_marker).drop("group_id")
               .join(writers, ["partition", "producer_id"], "left")
               .select(*facts.columns))
    return records.unionByName(markers)

"""Insight findings in Spark: each ``sql/rules/<rule id>.sql`` (:mod:`jobs.audits.insights`) over
one snapshot's views, as ``findings`` rows.

The views are registered for the snapshot first (:func:`jobs.lake.views.register_lake`: the
lake's tables, or the frames a run holds), so a rule reads only the audited snapshot. Each rule's
rows are checked against the ``findings`` contract (columns, rule id, severity at most the
rule's) when they are made; the verdict follows the severity, as for every other rule (``info``:
a notice, else a violation).

The run finds them once, over the tables it has just written (:func:`insight_frames`:
``insight_audits``, ``insight_findings``); the audit reads those rows while
:func:`insight_fingerprint`, what the rules read beside the snapshot, is still the run's.
"""

from __future__ import annotations

from pathlib import Path

from jobs.audits.insights import rule_files
from jobs.audits.registry import NOTICE, RULES, SEVERITIES, VIOLATION
from jobs.lake.findings import FINDINGS_COLUMNS, INSIGHT_AUDITS, INSIGHT_FINDINGS
from jobs.lake.tables import TABLES


class InsightRuleError(ValueError):
    """A rule file whose rows do not fit the ``findings`` contract."""


def insight_findings(spark, lake: Path, snapshot_id: str, frames: dict | None = None,
                     settings: dict | None = None, rules_dir: Path | None = None):
    """The snapshot's insight findings (``findings`` columns, ``snapshot_id`` first), or None
    when no rule file exists (``rules_dir``: default ``sql/rules``)."""
    from functools import reduce

    from pyspark.sql import functions as F

    from jobs.lake.views import register_lake

    files = rule_files() if rules_dir is None else rule_files(rules_dir)
    if not files:
        return None
    texts = {rule_id: path.read_text() for rule_id, path in files.items()}
    register_lake(spark, lake, snapshot_id, frames=frames, settings=settings, materialize=True,
                  needed_by=texts.values())
    names = [name for name, _, _ in FINDINGS_COLUMNS]
    parts = []
    for rule_id, path in files.items():
        rule = RULES.get(rule_id)
        if rule is None:
            raise InsightRuleError(f"{path}: rule {rule_id} is not in the registry")
        df = spark.sql(texts[rule_id])
        if df.columns != names:
            raise InsightRuleError(f"{path}: columns {df.columns}, expected {names}")
        allowed = list(SEVERITIES[:SEVERITIES.index(rule.severity) + 1])
        severity = F.col("severity")
        parts.append(df.where(F.col("snapshot_id") == snapshot_id).select(
            *[F.col(n) for n in names[:1]], F.lit(rule_id).alias("rule_id"),
            F.when(severity.isin(*allowed), severity).otherwise(
                F.raise_error(F.concat(F.lit(f"{rule_id}: severity "), severity,
                                       F.lit(f" is not one of {allowed}")))).alias("severity"),
            F.when(severity == "info", F.lit(NOTICE)).otherwise(F.lit(VIOLATION)).alias("verdict"),
            *[F.col(n).cast(dtype).alias(n) for n, dtype, _ in FINDINGS_COLUMNS[4:]]))
    return reduce(lambda a, b: a.unionByName(b), parts)


def insight_fingerprint(settings: dict | None = None) -> str:
    """sha256 of what the insight findings of a snapshot depend on beside its tables: the
    ``insights`` section of conf/ (``settings`` instead, when given) and the text of every view
    and rule file. Equal fingerprints, same snapshot: same findings."""
    import hashlib
    import json

    from jobs.lake.views import view_files
    from jobs.runtime.config import load_section

    section = load_section("insights") if settings is None else settings
    digest = hashlib.sha256(json.dumps(section, sort_keys=True, default=str).encode())
    for kind, files in (("view", view_files()), ("rule", rule_files())):
        for name, path in files.items():
            digest.update(f"\0{kind} {name}\0".encode() + path.read_bytes())
    return digest.hexdigest()


def insight_frames(spark, lake: Path, snapshot_id: str, frames: dict):
    """The run's insight findings (``insight_audits``, ``insight_findings``) over the tables it
    has just written (``frames``: table name -> the DataFrame it was written from): exactly what
    :func:`insight_findings` finds from those tables in the lake, found once, by the run. The
    findings are held (a local checkpoint) and counted; both frames come with ``snapshot_id``
    first."""
    found = insight_findings(spark, lake, snapshot_id, frames)
    if found is None:
        found = spark.createDataFrame([], TABLES[INSIGHT_FINDINGS].ddl())
    found = found.localCheckpoint(eager=True)
    audits = spark.createDataFrame([(snapshot_id, insight_fingerprint(), found.count())],
                                   TABLES[INSIGHT_AUDITS].ddl())
    return audits, found

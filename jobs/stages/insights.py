"""Insight findings in Spark: each ``sql/rules/<rule id>.sql`` (:mod:`jobs.audits.insights`) over
one snapshot's views, as ``findings`` rows.

The views are registered for the snapshot first (:func:`jobs.lake.views.register_lake`: the
lake's tables, or the frames a run holds), so a rule reads only the audited snapshot. Each rule's
rows are checked against the ``findings`` contract (columns, rule id, severity at most the
rule's) when they are made; the verdict follows the severity, as for every other rule (``info``:
a notice, else a violation).
"""

from __future__ import annotations

from pathlib import Path

from jobs.audits.insights import rule_files
from jobs.audits.registry import NOTICE, RULES, SEVERITIES, VIOLATION
from jobs.lake.findings import FINDINGS_COLUMNS


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
    register_lake(spark, lake, snapshot_id, frames=frames, settings=settings, materialize=True)
    names = [name for name, _, _ in FINDINGS_COLUMNS]
    parts = []
    for rule_id, path in files.items():
        rule = RULES.get(rule_id)
        if rule is None:
            raise InsightRuleError(f"{path}: rule {rule_id} is not in the registry")
        df = spark.sql(path.read_text())
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

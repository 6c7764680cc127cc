"""The ``findings`` table contract: one row per audit finding of a snapshot, as data.

Written by :mod:`jobs.stages.audit` with ``replace_snapshot`` (a rerun replaces the snapshot's
findings). Types are Spark SQL type names, as in ``jobs.replay.TABLE_COLUMNS``.
"""

from __future__ import annotations

FINDINGS = "findings"

FINDINGS_COLUMNS: list[tuple[str, str, str]] = [
    ("snapshot_id", "string", "id of the snapshot audited"),
    ("rule_id", "string", "rule of the registry (docs/audits.md), e.g. CG-01"),
    ("severity", "string", "info, low, medium, high or critical (this finding's grade)"),
    ("verdict", "string", "violation; partial (the evidence spans a compacted range); notice"),
    ("group_id", "string", "the group, when the finding concerns one"),
    ("member_id", "string", "the member, when the finding concerns one"),
    ("topic", "string", "topic name (resolved across the snapshot when only the id was written)"),
    ("topic_id", "string", "topic id, or the streams subtopology id for streams tasks"),
    ("partition", "int", "topic partition (or streams task partition)"),
    ("log_partition", "int", "__consumer_offsets partition of the deciding record"),
    ("log_offset", "bigint", "log offset of the deciding record"),
    ("evidence_log_offsets", "array<bigint>", "every log offset the finding rests on"),
    ("message", "string", "the invariant and the evidence in an operator's words"),
    ("details", "string", "JSON object with the figures behind the message"),
]

ROW_COLUMNS = [(name, dtype) for name, dtype, _ in FINDINGS_COLUMNS if name != "snapshot_id"]

# The fencing audit as the run finds it (jobs.stages.pipeline): the run replays every group, so it
# audits them too, under the regime it reads from the snapshot; ``offsetlake audit`` then reads
# these rows instead of replaying the groups again. ``fencing_audits`` has one row per snapshot
# the run audited (so "audited, no finding" differs from "not audited"); ``fencing_findings`` its
# findings, the fencing rows ``findings`` receives.
FENCING_AUDITS = "fencing_audits"
FENCING_AUDITS_COLUMNS: list[tuple[str, str, str]] = [
    ("snapshot_id", "string", "id of the snapshot the run audited"),
    ("regime", "string", "the fencing regime read from the snapshot (jobs.audits.validators."
                         "regime_of): strict, relaxed, or per group type"),
    ("findings", "bigint", "rows of fencing_findings for the snapshot"),
]
FENCING_FINDINGS = "fencing_findings"
FENCING_FINDINGS_COLUMNS = FINDINGS_COLUMNS

# The insight rules as the run finds them (jobs.stages.pipeline), over the tables it has just
# written: they depend on nothing but the snapshot, conf/'s ``insights`` section and the SQL of
# sql/, so ``offsetlake audit`` reads these rows instead of running the rules again when the
# fingerprint of those is still the run's. One row per snapshot the run audited, as for fencing.
INSIGHT_AUDITS = "insight_audits"
INSIGHT_AUDITS_COLUMNS: list[tuple[str, str, str]] = [
    ("snapshot_id", "string", "id of the snapshot the run audited"),
    ("fingerprint", "string", "sha256 of what the rules read beside the snapshot: conf/'s "
                              "insights section and the text of sql/ and sql/rules/"),
    ("findings", "bigint", "rows of insight_findings for the snapshot"),
]
INSIGHT_FINDINGS = "insight_findings"
INSIGHT_FINDINGS_COLUMNS = FINDINGS_COLUMNS


def findings_ddl() -> str:
    """The row columns (no snapshot id) as a Spark DDL string."""
    return ", ".join(f"`{name}` {dtype}" for name, dtype in ROW_COLUMNS)

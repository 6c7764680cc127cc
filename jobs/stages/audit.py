"""Audit stage in Spark: the lake's ``records`` and ``raw_records`` of a snapshot → ``findings``.

Groups are audited in parallel, each on an executor by the pure code of :mod:`jobs.audits`
(:func:`jobs.stages.grouping.map_groups` over each group's events,
:mod:`jobs.stages.group_events`: offset commits as the replay resolved them, membership records,
markers). What one group cannot know is computed once per snapshot on the driver and shipped
with the function: the fencing regime, the compacted ranges of each partition, the snapshot
time and every topic id/name pair
the lake knows (so a group that never committed still gets topic names).

:func:`audit_lake` is the audit's API (``offsetlake audit`` and ``offsetlake run --audit`` call
it): read the snapshot, write ``findings`` (the fencing audit's and the insight rules' of
:mod:`jobs.stages.insights`; and ``downgrade_findings`` for downgrade targets),
return an :class:`AuditResult`. Filtering, formatting and gating belong to the command. The run
has already audited fencing and run the insight rules over the tables it wrote
(``fencing_findings``, ``insight_findings``): the audit reads those rows when they were found
as it would find them, and finds them itself otherwise (a lake of an older offsetlake, another
regime, other settings or SQL).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from jobs.lake import RAW_RECORDS, RECORDS, replace_snapshot
from jobs.lake.findings import (FENCING_AUDITS, FENCING_FINDINGS, FINDINGS, FINDINGS_COLUMNS,
                                INSIGHT_AUDITS, INSIGHT_FINDINGS, findings_ddl)
from jobs.lake.downgrade import RECORD_FACTS
from jobs.lake.tables import TABLES
from jobs.stages.group_events import arrow_events, group_event_rows
from jobs.stages.grouping import map_groups, map_groups_here
from jobs.stages.insights import insight_findings

# One row per finding (``row``: its JSON), and one per group whose findings depend on more than
# its records (``row`` null): the snapshot times they hold for, the offsets where a gap would make
# one partial (jobs.audits.engine.audit_group_window).
WINDOW_COLUMNS = (("group_id", pa.string()), ("valid_from", pa.int64()), ("valid_until", pa.int64()),
                  ("evidence_partition", pa.int32()), ("evidence_from", pa.int64()),
                  ("evidence_until", pa.int64()))
# With folds kept (an incremental lake), a group's row also carries its fold as it was before its
# finishing checks (jobs.audits.engine.freeze), to resume from at a later snapshot: a group audited
# from its first record, and a resumed one once it has read FOLD_EVERY records since its fold
# (the fold of a group is a few KiB: one per replay would grow the lake by more than its records).
FOLD_COLUMNS = (("log_partition", pa.int32()), ("folded_until", pa.int64()),
                ("open_producers", pa.list_(pa.int64())), ("topic_reads", pa.string()),
                ("fold", pa.binary()))
OUTPUT_SCHEMA = pa.schema([("row", pa.string()), *WINDOW_COLUMNS, *FOLD_COLUMNS])
OUTPUT_DDL = "row string, group_id string, valid_from bigint, valid_until bigint, " \
    "evidence_partition int, evidence_from bigint, evidence_until bigint, log_partition int, " \
    "folded_until bigint, open_producers array<bigint>, topic_reads string, fold binary"
GROUP_KEYS = ["partition", "group_id"]
DOWNGRADE_FINDINGS = "downgrade_findings"
NAME_TABLES = (("offset_commits", "topic"), ("member_assignments", "topic_name"),
               ("target_assignments", "topic_name"))
FOLD_EVERY = 5_000
FOLD = "fold"   # the event rows' column that carries a group's kept fold (one row, offset null)


def audit_body(regime: str, topic_names: dict[str, str], gaps: dict[int, list], snapshot_time_ms,
               keep_folds: bool = False):
    """The per-group function, closed over the snapshot-wide facts. A group whose rows include
    a kept fold (column :data:`FOLD`) resumes it with the rows after it; ``keep_folds``: each
    group's fold is returned with its window, when it is new or has read :data:`FOLD_EVERY`
    records since the one it resumed."""
    names = {uuid.UUID(tid): name for tid, name in topic_names.items()}

    def body(events: pa.Table) -> pa.Table:
        import pyarrow.compute as pc

        from jobs.audits import engine
        from jobs.audits.evidence import LogCoverage

        group_id = events.column("group_id")[0].as_py()
        partition = events.column("partition")[0].as_py()
        facts = {"topic_names": names, "snapshot_time_ms": snapshot_time_ms,
                 "coverage": LogCoverage({p: [tuple(g) for g in gs] for p, gs in gaps.items()})}
        kept = None
        if FOLD in events.column_names:
            carried = pc.is_valid(events.column(FOLD))
            if pc.any(carried).as_py():
                kept = pc.filter(events.column(FOLD), carried)[0].as_py()
                events = events.filter(pc.invert(carried))
            events = events.drop_columns([FOLD])
        a = engine.thaw(kept, **facts) if kept is not None else engine.open_fold(regime=regime,
                                                                                  **facts)
        later = arrow_events(events)
        engine.fold(a, later)
        fold = None
        if keep_folds and group_id is not None and (kept is None or len(later) >= FOLD_EVERY):
            fold = (partition, a.folded_until, engine.open_producers(a),
                    json.dumps(engine.topic_reads(a, names)), engine.freeze(a))
        findings, (valid_from, valid_until, evidence) = engine.finish(a)
        rows = [json.dumps(f, default=str, ensure_ascii=False) for f in findings]
        columns = (*WINDOW_COLUMNS, *FOLD_COLUMNS)
        window = [[None] * len(rows) for _ in columns]
        if valid_from is not None or valid_until is not None or evidence is not None or fold:
            rows.append(None)
            values = (group_id, valid_from, valid_until, *(evidence or (None, None, None)),
                      *(fold or (None,) * len(FOLD_COLUMNS)))
            for column, value in zip(window, values):
                column.append(value)
        return pa.table([pa.array(rows, pa.string()),
                         *(pa.array(c, t) for c, (_, t) in zip(window, columns))],
                        schema=OUTPUT_SCHEMA)
    return body


def compacted_ranges(raw) -> dict[int, list[tuple[int, int]]]:
    """Missing offsets ``[start, end)`` per partition: a log that starts after 0 or skips
    offsets lost records to the cleaner (control records keep their offsets)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    previous = F.lag("offset").over(Window.partitionBy("partition").orderBy("offset"))
    gaps = (raw.select("partition", "offset").withColumn("previous", F.coalesce(previous, F.lit(-1)))
            .where(F.col("offset") > F.col("previous") + 1)
            .select("partition", (F.col("previous") + 1).alias("start"), "offset"))
    result: dict[int, list[tuple[int, int]]] = {}
    for row in gaps.orderBy("partition", "start").collect():
        result.setdefault(row["partition"], []).append((row["start"], row["offset"]))
    return result


def snapshot_regime(records) -> str:
    """The fencing regime per group type: :func:`jobs.audits.validators.regime_of` over the
    snapshot's current-assignment records (types 8 and 22, a few per member; ``records.value``
    holds ``{"version", "data"}``), read on the driver until both types are decided."""
    from pyspark.sql import functions as F

    from jobs.audits.validators import regime_of

    rows = (records.where(F.col("record_type").isin(8, 22))
            .select("record_type", F.to_json(F.variant_get("value", "$.data", "variant"))
                    .alias("data")).toLocalIterator())
    return regime_of((row["record_type"], json.loads(row["data"] or "null")) for row in rows)


def lake_topic_names(tables: dict) -> dict[str, str]:
    """Every topic id -> name pair of the snapshot's replay tables (``{name: DataFrame}``), in one
    Spark job; an id named in several tables takes its name from the first of
    :data:`NAME_TABLES` (then the smallest name)."""
    from functools import reduce

    from pyspark.sql import functions as F

    pairs = [df.where(F.col("topic_id").isNotNull() & F.col(column).isNotNull())
             .select("topic_id", F.struct(F.lit(rank).alias("rank"), F.col(column).alias("name"))
                     .alias("pick"))
             for rank, (table, column) in enumerate(NAME_TABLES)
             if (df := tables.get(table)) is not None]
    if not pairs:
        return {}
    picked = reduce(lambda a, b: a.unionByName(b), pairs).groupBy("topic_id").agg(
        F.min("pick").alias("pick"))
    return {row["topic_id"]: row["pick"]["name"] for row in picked.collect()}


def audit_snapshot(records, raw, commits, snapshot_id: str, *, regime: str | None = None,
                   topic_names: dict[str, str] | None = None, here: bool = False,
                   membership=None, gaps: dict | None = None, snapshot_time: int | None = None):
    """The ``findings`` rows of one snapshot (``snapshot_id`` first, then ``findings_ddl``);
    ``commits`` is the snapshot's ``offset_commits``, ``membership`` the run's staged decoded
    membership records or None (:func:`jobs.stages.group_events.group_event_rows`).
    ``here``: each group audited in the driver, for a snapshot the driver holds (a small one),
    so no Python worker starts; the same function on the same rows either way. ``gaps`` (the
    snapshot's :func:`compacted_ranges`) and ``snapshot_time`` (its newest timestamp), when the
    caller knows them, are not computed from ``raw``."""
    return findings_of(audit_rows(records, raw, commits, regime=regime, topic_names=topic_names,
                                  here=here, membership=membership, gaps=gaps,
                                  snapshot_time=snapshot_time), snapshot_id)


def audit_rows(records, raw, commits, *, regime: str | None = None,
               topic_names: dict[str, str] | None = None, here: bool = False,
               membership=None, gaps: dict | None = None, snapshot_time: int | None = None,
               folds=None, keep_folds: bool = False):
    """:func:`audit_snapshot`'s audit as the groups' rows of :data:`OUTPUT_DDL`: their findings
    (:func:`findings_of`) and the snapshot times they hold for (:func:`windows_of`). ``folds``
    (``partition, group_id, folded_until, fold``): groups whose audit resumes a kept fold with
    their events after ``folded_until``; ``keep_folds``: each group's fold is kept
    (:func:`folds_of`)."""
    from pyspark.sql import functions as F

    regime = regime or snapshot_regime(records)
    if snapshot_time is None:
        snapshot_time = raw.agg(F.max("timestamp")).first()[0]
    body = audit_body(regime, topic_names or {}, compacted_ranges(raw) if gaps is None else gaps,
                      snapshot_time, keep_folds)
    events = group_event_rows(records, raw, commits, membership)
    if folds is not None:
        events = resumed_event_rows(events, folds, records, raw)
    if here:
        return map_groups_here(records.sparkSession, events, GROUP_KEYS, body, OUTPUT_SCHEMA)
    return map_groups(events, GROUP_KEYS, body, OUTPUT_DDL)


def resumed_event_rows(events, folds, records, raw):
    """``events`` (:func:`jobs.stages.group_events.group_event_rows` of ``records`` and ``raw``)
    of the groups of ``folds`` after their ``folded_until``, the others' whole, and each fold as
    one more row of its group (column :data:`FOLD`, null on the others). A fold's group also gets
    the later markers of the transactions it left open (``open_producers``), which its records
    the audit reads may no longer name (compaction removed them: a fold of every record reads
    them)."""
    from pyspark.sql import functions as F

    from jobs.replay import ABORT, COMMIT
    from jobs.stages.group_events import RAW_EVENT_COLUMNS, marker_event_rows

    until = F.broadcast(folds.select("group_id", "folded_until"))
    later = (events.join(until, ["group_id"], "left")
             .where(F.col("folded_until").isNull() | (F.col("offset") > F.col("folded_until")))
             .drop("folded_until"))
    position = ["group_id", "partition", "offset"]
    open_ = folds.select("partition", "group_id", "folded_until",
                         F.explode("open_producers").alias("producer_id"))
    ended = (raw.where(F.col("is_control") & F.col("control_type").isin(COMMIT, ABORT))
             .select(*RAW_EVENT_COLUMNS).join(F.broadcast(open_), ["partition", "producer_id"])
             .where(F.col("offset") > F.col("folded_until")).drop("folded_until")
             .join(marker_event_rows(records, raw).select(*position), position, "left_anti"))
    carried = folds.select("partition", "group_id", FOLD)
    return (later.unionByName(ended, allowMissingColumns=True)
            .unionByName(carried, allowMissingColumns=True))


def findings_of(rows, snapshot_id: str):
    """The findings of :func:`audit_rows`' rows, ``snapshot_id`` first."""
    from pyspark.sql import functions as F

    return (rows.where(F.col("row").isNotNull()).select(F.from_json("row", findings_ddl()).alias("f"))
            .select(F.lit(snapshot_id).alias("snapshot_id"), "f.*"))


def windows_of(rows):
    """:data:`WINDOW_COLUMNS` of :func:`audit_rows`' rows: the groups whose findings depend on
    the snapshot's time or on where compaction leaves gaps, and how."""
    from pyspark.sql import functions as F

    return rows.where(F.col("row").isNull()).select(*(name for name, _ in WINDOW_COLUMNS))


def folds_of(rows):
    """Each group's kept fold in :func:`audit_rows`' rows (``keep_folds``): ``group_id`` and
    :data:`FOLD_COLUMNS`."""
    from pyspark.sql import functions as F

    return rows.where(F.col("row").isNull() & F.col(FOLD).isNotNull()).select(
        "group_id", *(name for name, _ in FOLD_COLUMNS))


def fencing_frames(frames: dict, snapshot_id: str, *, here: bool = False, membership=None):
    """The run's fencing audit (``fencing_audits``, ``fencing_findings``) over the tables it has
    just written (``frames``: table name -> the DataFrame it was written from) and its decoded
    membership records (``membership``, as :func:`audit_snapshot` takes them), under the regime
    read from the snapshot: exactly what :func:`audit_lake` finds from those tables, found once,
    by the run. The findings are held (a local checkpoint) and counted; both frames are returned
    with ``snapshot_id`` first."""

    records = frames[RECORDS]
    regime = snapshot_regime(records)
    names = lake_topic_names({t: frames.get(t) for t, _ in NAME_TABLES})
    found = audit_snapshot(records, frames[RAW_RECORDS], frames["offset_commits"], snapshot_id,
                           regime=regime, topic_names=names, here=here, membership=membership)
    found = found.localCheckpoint(eager=True)
    audits = records.sparkSession.createDataFrame(
        [(snapshot_id, regime, found.count())], TABLES[FENCING_AUDITS].ddl())
    return audits, found


def _staged(table, snapshot_id: str, audits_name: str, findings_name: str, accept):
    """``(row, findings)``: the run's row of ``audits_name`` for the snapshot and its findings in
    ``findings_name`` (``table(name)`` reads a table of the snapshot), or None: the run wrote none
    (a lake of an older offsetlake), ``accept(row)`` is false (found under other conditions than
    the audit's), or the two tables disagree."""
    audits, findings = table(audits_name), table(findings_name)
    if audits is None or findings is None:
        return None
    row = audits.where(audits.snapshot_id == snapshot_id).first()
    if row is None or not accept(row):
        return None
    findings = findings.where(findings.snapshot_id == snapshot_id).select(
        *(name for name, _, _ in FINDINGS_COLUMNS))
    # The two tables are written apart: a run that died between them left them disagreeing.
    if findings.count() != row["findings"]:
        return None
    return row, findings


def _audits_history(spark, lake: Path, snapshot_id: str) -> bool:
    """Whether the run's ``fencing_findings`` of the snapshot audit more than the snapshot holds:
    in an incremental lake, every snapshot after its first audits each group's history (what
    compaction removed since included, docs/lake.md), so the snapshot's own audit is found from
    its records instead."""
    from jobs.lake.snapshot_views import LakeOrder, is_incremental

    if not is_incremental(lake):
        return False
    ids = LakeOrder.read(spark, lake).ids
    return snapshot_id in ids[1:]


def _staged_fencing(table, snapshot_id: str, regime: str):
    """``(regime, findings)`` of the run's fencing audit of the snapshot, or None: the run wrote
    none, or it was audited under another regime than the one asked for (:func:`_staged`)."""
    staged = _staged(table, snapshot_id, FENCING_AUDITS, FENCING_FINDINGS,
                     lambda row: regime in ("auto", row["regime"]))
    return None if staged is None else (staged[0]["regime"], staged[1])


def _staged_insights(table, snapshot_id: str):
    """The run's insight findings of the snapshot, or None: the run found none, or conf/'s
    ``insights`` section or the SQL of the views and rules changed since (:func:`_staged`)."""
    from jobs.stages.insights import insight_fingerprint

    staged = _staged(table, snapshot_id, INSIGHT_AUDITS, INSIGHT_FINDINGS,
                     lambda row: row["fingerprint"] == insight_fingerprint())
    return None if staged is None else staged[1]


def _kept_facts(kept):
    """The snapshot's ``record_facts`` rows (``kept``: read for the snapshot), or None when the
    run that wrote the lake kept none (an older offsetlake): the downgrade stage then decodes."""
    return None if kept is None or not kept.take(1) else kept


class AuditInputError(LookupError):
    """The lake cannot be audited as asked: no such snapshot, or no tables yet."""


def _snapshot(spark, lake: Path, wanted: str | None) -> str:
    from jobs.lake.views import snapshot_ids

    ids = snapshot_ids(spark, lake, RECORDS)
    if wanted is not None:
        if wanted not in ids:
            raise AuditInputError(f"snapshot {wanted} is not in {lake} (snapshots: {', '.join(ids)})")
        return wanted
    if len(ids) != 1:
        raise AuditInputError(f"{lake} holds {len(ids)} snapshots ({', '.join(ids) or 'none'}); "
                          "pick one with --snapshot")
    return ids[0]


def _optional(spark, lake: Path, table: str, snapshot_id: str):
    """The snapshot's rows of ``table`` (as of it, in an incremental lake), or None before the
    replay wrote it."""
    from jobs.lake.snapshot_views import read_as_of

    if not (Path(lake) / table / "_delta_log").is_dir():
        return None
    return read_as_of(spark, lake, table, snapshot_id)


@dataclass
class AuditResult:
    """What :func:`audit_lake` found in one snapshot: every finding (as written to ``findings``,
    without the snapshot id) and downgrade finding (as written to ``downgrade_findings``), sorted
    by log position and by target, partition, group and rule."""

    snapshot_id: str
    regime: str
    targets: list[str]
    findings: list[dict] = field(default_factory=list)
    downgrade_findings: list[dict] = field(default_factory=list)
    history: bool = False   # the lake's history up to the snapshot (audit_history)


def audit_lake(spark, lake: Path, snapshot_id: str | None = None, targets: list[str] = (),
               regime: str = "auto", frames: dict | None = None) -> AuditResult:
    """Audit one snapshot of the lake: write its ``findings`` (and, with ``targets``, its
    ``downgrade_findings``) and return them. ``snapshot_id`` None: the lake's only snapshot;
    ``regime``: ``auto`` (from the snapshot), ``strict`` or ``relaxed``; ``frames``: the
    snapshot's tables as the run that just wrote them holds them (``run_pipeline``'s ``then``),
    read instead of the lake's. Raises :class:`AuditInputError` when the lake has no such
    snapshot or was not run yet.

    >>> result = audit_lake(spark, Path("lake"), targets=["3.9", "4.0"])  # doctest: +SKIP
    >>> [f["rule_id"] for f in result.findings]  # doctest: +SKIP
    """
    from jobs.stages.downgrade import downgrade_findings

    frames = frames or {}
    if not frames:
        for table in (RECORDS, "offset_commits"):
            if not (Path(lake) / table / "_delta_log").is_dir():
                raise AuditInputError(f"{lake} has no {table} table; run 'offsetlake run "
                                      f"SNAPSHOT --lake {lake}' first")
        snapshot_id = _snapshot(spark, lake, snapshot_id)
    elif snapshot_id is None:
        raise ValueError("audit_lake: frames of a run come with its snapshot id")

    def table(name: str):
        return frames[name] if name in frames else _optional(spark, lake, name, snapshot_id)

    records, raw, commits = table(RECORDS), table(RAW_RECORDS), table("offset_commits")
    staged = (None if not frames and _audits_history(spark, lake, snapshot_id)
              else _staged_fencing(table, snapshot_id, regime))
    if staged is not None:   # the run's own fencing audit: the groups are not replayed again
        regime, found = staged
    else:
        regime = snapshot_regime(records) if regime == "auto" else regime
        names = lake_topic_names({t: table(t) for t, _ in NAME_TABLES})
        found = audit_snapshot(records, raw, commits, snapshot_id, regime=regime,
                               topic_names=names)
    insights = _staged_insights(table, snapshot_id)
    if insights is None:   # not the run's: the rules run here
        insights = insight_findings(spark, lake, snapshot_id, frames)
    if insights is not None:
        found = found.unionByName(insights)
    # Materialized once: written, then returned, without auditing (or reading) twice.
    found = found.localCheckpoint(eager=True)
    replace_snapshot(found, lake, FINDINGS, snapshot_id)
    rows = [r.asDict() for r in found.drop("snapshot_id").collect()]
    rows.sort(key=lambda r: (r["group_id"] or "", r["log_partition"] or 0, r["log_offset"] or 0,
                             r["rule_id"]))
    result = AuditResult(snapshot_id, regime, list(targets), rows)
    if targets:
        df = downgrade_findings(spark, records, raw, snapshot_id, list(targets),
                                kept_df=_kept_facts(table(RECORD_FACTS))).localCheckpoint(eager=True)
        replace_snapshot(df, lake, DOWNGRADE_FINDINGS, snapshot_id)
        result.downgrade_findings = sorted(
            (r.asDict() for r in df.collect()),
            key=lambda r: (r["target_version"], r["partition"], r["group_id"] or "", r["rule_id"],
                           r["class"], r["first_offset"]))
    return result


def audit_history(spark, lake: Path, through: str | None = None,
                  regime: str = "auto") -> AuditResult:
    """Audit the history of an incremental lake: the fencing rules over every record it has held
    up to snapshot ``through`` (default: its newest), the ones compaction removed since included,
    as one log per group. A rule whose evidence compaction removed from a snapshot but the lake
    kept gets its full verdict; evidence spanning a gap of the lake (offsets no snapshot held)
    stays partial. Writes ``history_findings`` under ``through`` and returns them; the insight
    rules and downgrade readiness belong to a snapshot (:func:`audit_lake`). Raises
    :class:`AuditInputError` for a lake of full runs, or no such snapshot.

    >>> audit_history(spark, Path("lake")).findings  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    from jobs.lake import read_table
    from jobs.lake.increments import HISTORY_FINDINGS
    from jobs.lake.snapshot_views import LakeOrder, in_ids, is_incremental

    if not is_incremental(lake):
        raise AuditInputError(f"{lake} is not an incremental lake: the history audit reads every "
                              "record its snapshots held, and a lake of full runs keeps each "
                              "snapshot apart (audit one with --snapshot)")
    order = LakeOrder.read(spark, lake)
    through = through or (order.rows[-1][0] if order.rows else None)
    if through is None:
        raise AuditInputError(f"{lake} lists no snapshot yet; run 'offsetlake run SNAPSHOT "
                              f"--lake {lake}' first")
    try:
        upto = order.upto(through)
    except KeyError as error:
        raise AuditInputError(error.args[0]) from None

    def held(table: str):
        rows = read_table(spark, lake, table)
        return (rows.where(in_ids("snapshot_id", upto))
                .withColumn("snapshot_id", F.lit(through)).select(*rows.columns))
    records, raw, commits = held(RECORDS), held(RAW_RECORDS), held("offset_commits")
    regime = snapshot_regime(records) if regime == "auto" else regime
    try:
        names = lake_topic_names({t: _optional(spark, lake, t, through) for t, _ in NAME_TABLES})
    except KeyError as error:   # a vacuumed snapshot: its group state is gone
        raise AuditInputError(error.args[0]) from None
    # The gaps of the history are the lake's: compacted_ranges over every record it held.
    found = audit_snapshot(records, raw, commits, through, regime=regime,
                           topic_names=names).localCheckpoint(eager=True)
    replace_snapshot(found, lake, HISTORY_FINDINGS, through)
    rows = [r.asDict() for r in found.drop("snapshot_id").collect()]
    rows.sort(key=lambda r: (r["group_id"] or "", r["log_partition"] or 0, r["log_offset"] or 0,
                             r["rule_id"]))
    return AuditResult(through, regime, [], rows, history=True)


def summary_line(result: AuditResult, shown: list[dict]) -> str:
    """``audit: snapshot S, fencing R: N finding(s) shown (n high, ...)`` (``history through
    snapshot S`` for the history audit)."""
    counts: dict[str, int] = {}
    for r in shown:
        counts[r["severity"]] = counts.get(r["severity"], 0) + 1
    scope = "history through snapshot" if result.history else "snapshot"
    return (f"audit: {scope} {result.snapshot_id}, fencing {result.regime}: {len(shown)} "
            "finding(s) shown" + ("" if not counts else " (" + ", ".join(
                f"{n} {s}" for s, n in sorted(counts.items())) + ")"))

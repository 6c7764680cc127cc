"""Audit entry points (pure Python, per group): replay the log record by record and check every
rule of the registry on the way.

Example::

    findings = audit_group(scenario.events(), topic_names=scenario.topic_names)
    [(f["rule_id"], f["member_id"], f["log_offset"]) for f in findings]

The replay engine's own checks (the coordinator's load failures, TX-02, unknown types) arrive as
its ``violations`` rows and become findings of the same registry. The fencing regime is
``strict`` (up to 4.2) or ``relaxed`` (KIP-1251, 4.3+); by default it is detected from the
records (:func:`jobs.audits.validators.detect_regime`), the Spark stage decides it per snapshot.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
import uuid
import zlib
from collections.abc import Iterable
from pathlib import Path

from jobs.audits import classic, fencing, history, state
from jobs.audits.context import AuditContext
from jobs.audits.evidence import LogCoverage, finding
from jobs.audits.rules import rule_of_violation
from jobs.audits.validators import detect_regime
from jobs.replay import apply_event, split_by_group
from jobs.replay.context import ReplayContext

GROUP_TOMBSTONE_TYPES = (2, 3, 11, 17)


def audit_group(events: Iterable, *, regime: str | None = None,
                topic_names: dict[uuid.UUID, str] | None = None,
                coverage: LogCoverage | None = None,
                snapshot_time_ms: int | None = None) -> list[dict]:
    """Findings (rows of ``jobs.lake.findings`` without the snapshot id) for one group's events
    in log order, markers included. ``coverage`` says which offsets compaction removed (default:
    none); ``snapshot_time_ms`` is when the snapshot was taken (default: the last record's time)."""
    return audit_group_window(events, regime=regime, topic_names=topic_names, coverage=coverage,
                              snapshot_time_ms=snapshot_time_ms)[0]


def audit_group_window(events: Iterable, *, regime: str | None = None,
                       topic_names: dict[uuid.UUID, str] | None = None,
                       coverage: LogCoverage | None = None,
                       snapshot_time_ms: int | None = None) -> tuple[list[dict], tuple]:
    """:func:`audit_group`'s findings and what else they depend on, ``(valid_from, valid_until,
    evidence)``: the snapshot times (ms, None unbounded) for which the same events audit to the
    same findings (the rules that compare the snapshot's time with a deadline set them,
    :meth:`jobs.audits.context.AuditContext.past`), and ``(partition, from, until)``, the
    offsets where a record compaction removes would make a finding partial (None: nowhere). An
    incremental lake audits a group whose records it did not change again when its time leaves
    the window or compaction removes a record in that range."""
    events = list(events)
    a = open_fold(regime=regime or detect_regime(events), topic_names=topic_names,
                  coverage=coverage, snapshot_time_ms=snapshot_time_ms)
    fold(a, events)
    return finish(a)


def open_fold(*, regime: str, topic_names: dict[uuid.UUID, str] | None = None,
              coverage: LogCoverage | None = None,
              snapshot_time_ms: int | None = None) -> AuditContext:
    """An audit of one group before its first event: :func:`fold` its events in log order, then
    :func:`finish` it (or :func:`freeze` it first, to fold later events into it another time)."""
    return AuditContext(ReplayContext(topic_names=dict(topic_names or {}), commit_history=False),
                        regime, coverage or LogCoverage(), snapshot_time_ms)


def fold(a: AuditContext, events: Iterable) -> None:
    """Check and replay ``events`` (the group's next ones, in log order)."""
    for event in events:
        _audit_event(a, event)
        a.folded_until = event.offset


def finish(a: AuditContext) -> tuple[list[dict], tuple]:
    """The checks on the group as its last event leaves it (they change ``a``: :func:`freeze`
    before): :func:`audit_group_window`'s findings and window."""
    fencing.flush_gap_commits(a)
    if a.snapshot_time_ms is None:
        a.snapshot_time_ms = a.last_timestamp
    state.check_groups(a)
    state.check_offsets(a)
    _replay_violations(a)
    findings = sorted(a.findings, key=lambda f: (f["log_partition"] or 0, f["log_offset"] or 0,
                                                  f["rule_id"], f["member_id"] or "",
                                                  f["partition"] if f["partition"] is not None
                                                  else -1))
    return findings, (a.valid_from, a.valid_until, a.evidence)


# Resuming a fold (docs/lake.md, "Resumed audits"). What a fold has seen is its context, less the
# replay's history rows, which the audit never reads. A resumed fold is the fold of every event
# when it resumes under the same regime, the same gaps up to its last event, code of the same
# version and topic names that answer every lookup it made as the names it ran under did: the
# caller checks those (:func:`resumable` for the names), this module only keeps the context.

@functools.cache
def fold_version() -> str:
    """sha256 of the code a kept fold depends on: the audit, the replay, the decoders and how
    events are read from the lake's rows. A fold kept by other code is not resumed."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for path in sorted([*root.glob("jobs/audits/*.py"), *root.glob("jobs/replay/*.py"),
                        root / "jobs" / "stages" / "group_events.py",
                        *root.glob("decoders/**/*.py")]):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def freeze(a: AuditContext) -> bytes:
    """``a`` as bytes, before :func:`finish`: :func:`thaw` gives it back. What the next
    snapshot gives again is left out (the topic names given, the gaps), and so is what the audit
    never reads (the replay's history rows)."""
    replay = a.replay
    kept = (replay.epochs, replay.transactions, replay.event, replay.topic_names, a.coverage)
    written = {tid for tid, _ in replay.pairs_written}
    replay.epochs, replay.transactions, replay.event = [], [], None
    replay.topic_names = {tid: name for tid, name in replay.topic_names.items() if tid in written}
    a.coverage = LogCoverage()
    try:
        return zlib.compress(pickle.dumps(a, protocol=pickle.HIGHEST_PROTOCOL), 6)
    finally:
        replay.epochs, replay.transactions, replay.event, replay.topic_names, a.coverage = kept


def thaw(blob: bytes, *, topic_names: dict[uuid.UUID, str] | None = None,
         coverage: LogCoverage | None = None,
         snapshot_time_ms: int | None = None) -> AuditContext:
    """The context :func:`freeze` kept, to fold the group's later events under this snapshot's
    facts: its gaps, its time and its topic names, as a fold of every event under them would
    hold them at that point (the names given, then the pairs the group's records gave)."""
    a = pickle.loads(zlib.decompress(blob))
    names = dict(topic_names or {})
    names.update(a.replay.topic_names)   # only the pairs its records gave (freeze)
    a.replay.topic_names = names
    a.coverage = coverage or LogCoverage()
    a.snapshot_time_ms = snapshot_time_ms
    return a


def open_producers(a: AuditContext) -> list[int]:
    """The producer ids of the transactions ``a`` holds open: a later COMMIT or ABORT marker of
    one ends it in the group, whatever else of the group's records remain."""
    return sorted({pid for store in a.replay.offsets.values() for pid in store.open_transactions})


def topic_reads(a: AuditContext, topic_names: dict[uuid.UUID, str] | None) -> dict:
    """What the fold asked of the topic names it ran under (``topic_names``), as JSON values:
    ``ids``, each topic id it looked up or its records named, with its name there (None: not
    there); ``names``, each name it looked up, with the ids of that name there; ``ambiguous``,
    whether a name it looked up could have answered with two ids (which one then depends on the
    names' order: such a fold is not resumed)."""
    given = topic_names or {}
    replay = a.replay
    ids = replay.ids_read | {tid for tid, _ in replay.pairs_written}
    candidates: dict[str, set] = {}
    for tid, name in (*given.items(), *replay.topic_names.items(), *replay.pairs_written):
        if name in replay.names_read:
            candidates.setdefault(name, set()).add(tid)
    return {"ids": {str(tid): given.get(tid) for tid in ids},
            "names": {name: sorted(str(tid) for tid, n in given.items() if n == name)
                      for name in sorted(replay.names_read)},
            "ambiguous": any(len(tids) > 1 for tids in candidates.values())}


def resumable(reads: dict, topic_names: dict[str, str]) -> bool:
    """Whether a fold whose :func:`topic_reads` are ``reads`` may resume under ``topic_names``
    (topic id as a string -> name): every id it read names the same topic or none, and every
    name it looked up has the same ids."""
    if reads["ambiguous"]:
        return False
    if any(topic_names.get(tid) != name for tid, name in reads["ids"].items()):
        return False
    wanted = reads["names"]
    named: dict[str, list[str]] = {name: [] for name in wanted}
    for tid, name in topic_names.items():
        if name in named:
            named[name].append(tid)
    return all(sorted(named[name]) == tids for name, tids in wanted.items())


def audit_partition(events: Iterable, *, regime: str | None = None,
                    topic_names: dict[uuid.UUID, str] | None = None) -> list[dict]:
    """Every group of one ``__consumer_offsets`` partition; gaps are read from the events."""
    events = list(events)
    coverage = LogCoverage.from_events(events)
    regime = regime or detect_regime(events)
    last = max((e.timestamp for e in events), default=None)
    by_group, orphans = split_by_group(events)
    findings = []
    for _, group_events in sorted(by_group.items()):
        findings += audit_group(group_events, regime=regime, topic_names=topic_names,
                                coverage=coverage, snapshot_time_ms=last)
    findings += audit_group(orphans, regime=regime, coverage=coverage, snapshot_time_ms=last)
    return findings


def _audit_event(a: AuditContext, event) -> None:
    a.replay.event = event
    record = event.record
    record_type = getattr(record, "record_type", None) if isinstance(
        getattr(record, "key", None), dict) else None
    if event.timestamp is not None and event.timestamp >= 0:
        a.last_timestamp = max(a.last_timestamp or event.timestamp, event.timestamp)
    if record_type in (0, 1) and record.value is not None:
        fencing.check_commit(a, event, record)
    elif record_type == 2:
        classic.check_group_metadata(a, event, record)
    elif record_type in (3, 6, 8):
        classic.check_upgrade(a, event, record)
    elif record_type == 23:
        _topology(a, record)
    was = history.before(a, record) if record_type is not None else None
    apply_event(a.replay, event)
    history.after(a, event, record, was)
    if record_type is not None and record_type >= 2:
        group_id = record.key.get("group", record.key.get("groupId"))
        a.last_record_kind[group_id] = (record_type, record.value is None)
        if record_type in GROUP_TOMBSTONE_TYPES and record.value is None:
            a.group_tombstones[group_id] = event.position


def _topology(a: AuditContext, record) -> None:
    """Streams commits name topics; tasks are (subtopology, partition): map every topic a
    subtopology reads, its source topics and its repartition source topics, as
    ``StreamsTopology.sourceTopicMap`` does for the commit validator."""
    group_id = record.key["groupId"]
    if record.value is None:
        a.topologies.pop(group_id, None)
        return
    mapping = {}
    for sub in record.value.get("subtopologies") or ():
        for topic in sub.get("sourceTopics") or ():
            mapping[topic] = sub["subtopologyId"]
        for topic in sub.get("repartitionSourceTopics") or ():
            mapping[topic["name"]] = sub["subtopologyId"]
    a.topologies[group_id] = mapping


def _replay_violations(a: AuditContext) -> None:
    for v in a.replay.violations:
        a.add(finding(rule_of_violation(v["rule_id"]), v["group_id"],
                      (v["log_partition"], v["log_offset"]), v["message"],
                      member_id=v["member_id"], severity=v["severity"].lower()))

"""Downgrade readiness: what an older group coordinator does with this snapshot's records.

For each target (:mod:`downgrade_targets`) every record still on disk is classified the way that
coordinator's loader would treat it (``../shared/reference/replay-fencing-downgrade.md`` §5.3 and
its corrections box). Breaking rules look at every physical record, because the loader replays
superseded records and tombstones too; dropping rules weigh *live* records (the latest of their
key), because those are the state that is lost now and read again after a re-upgrade.

Classes: ``BREAK`` (the partition does not load: ``fail-open`` = Scala marks it loaded and empty,
``fail-closed`` = Java leaves its groups unavailable), ``DROP`` (skipped with a WARN),
``RESURRECT`` (dropped now, replayed again after re-upgrade: it cannot be tombstoned meanwhile),
``READ-AS-LATEST`` (unknown version read with the newest layout), ``INFO``.

    findings = audit_group(facts_of_one_group, parse_target("3.9"))
    rows = aggregate(findings, snapshot_id="s1")           # DOWNGRADE_FINDINGS_COLUMNS rows
    print("\\n".join(verdict_lines(rows, ["3.9"])))
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from jobs.audits.downgrade_facts import RecordFacts
from jobs.audits.java_load import LoadOutcome, LogEntry, load
from jobs.audits.java_releases import java_release
from jobs.audits.downgrade_targets import (
    CONSUMER_TYPES,
    SCALA,
    SHARE_TYPES,
    STREAMS_TYPES,
    TAG_SEMANTICS,
    TAG_SINCE,
    Target,
    group_kind,
    parse_target,
)
from jobs.audits.downgrade_verdict import aggregate, verdict_lines
from jobs.audits.registry import Rule, register

BREAK, DROP, RESURRECT, READ_AS_LATEST, INFO = "BREAK", "DROP", "RESURRECT", "READ-AS-LATEST", "INFO"
_SOURCE = "KIP-915; replay-fencing-downgrade.md §5"

RULES = register(
    Rule("DU-1", "critical", "unknown record type",
         "Every record type still on disk is one the target's coordinator knows; otherwise it is "
         "skipped (3.4.1+, state lost until re-upgrade) or aborts the load (Scala before 3.4.1).",
         "GroupMetadataManager.readMessageKey (Scala), CoordinatorLoaderImpl (Java); " + _SOURCE, False),
    Rule("DU-2", "critical", "value version above the target's",
         "Every value version is one the target reads; Scala and Java 4.0+ fail the load, Java "
         "3.6-3.9 reads it with its newest layout.",
         "GroupMetadataManager.readOffsetMessageValue (Scala); CoordinatorLoaderImpl (4.0, PR #18786)",
         False),
    Rule("DU-3", "critical", "value layout the target misreads",
         "A record written in a layout that reused its type and version (3.7 vs 3.8+ for types "
         "4/5/7/8, 4.0 vs 4.1+ for 11/15) is misread and fails the load.",
         "generated *Value classes per release; " + _SOURCE, False),
    Rule("DU-4", "critical", "replay the target rejects",
         "Replaying the records the target keeps, in log order, throws nowhere (group typing, "
         "strict tombstones before 4.0, ownership and referential checks).",
         # The snapshot is what the target would load: compaction hides nothing from this rule.
         "GroupMetadataManager.replay, getOrMaybeCreatePersistedConsumerGroup (KAFKA-17306)", False),
    Rule("DU-5", "info", "tagged field the target ignores",
         "A tagged field the target does not know is skipped silently; its semantics are lost.",
         "KIP-482 tagged fields; " + _SOURCE, False),
    Rule("DU-6", "medium", "behaviour that changes on the target",
         "Groups keep behaving as they do now: a consumer/streams group read by a coordinator "
         "without its records becomes a simple group, and KIP-1251 relaxed fencing needs 4.3.",
         "OffsetMetadataManager/ConsumerGroup.validateOffsetCommit; KIP-848, KIP-1251", False),
)


@dataclass(frozen=True)
class Finding:
    """One record's (or one group's) fate on one target."""

    target: str
    partition: int
    group_id: str | None
    rule_id: str
    klass: str
    failure_mode: str | None
    severity: str
    offset: int
    record_type: int | None
    is_live: bool
    detail: str


@dataclass(frozen=True)
class AlikeFindings:
    """The same finding for many records of one group: ``finding`` is the first record's; the
    others differ only in ``offsets`` and ``live`` (log order). Plain offset commits of one shape
    fare alike on a target, and one object for them all costs far less than one per record
    (:func:`jobs.audits.downgrade_verdict.aggregate` reads either; :func:`expand` gives the
    records' own findings)."""

    finding: Finding
    offsets: tuple[int, ...]
    live: tuple[bool, ...]


def expand(findings) -> list[Finding]:
    """Every record's own :class:`Finding`: :class:`AlikeFindings` spelled out."""
    out = []
    for f in findings:
        if isinstance(f, AlikeFindings):
            out += [replace(f.finding, offset=o, is_live=live) for o, live in zip(f.offsets, f.live)]
        else:
            out.append(f)
    return out


def audit_facts(facts: list[RecordFacts], targets: list[str], *, alike: bool = False) -> list:
    """Findings for every group of some partitions' facts (liveness marked) on each target: one
    :class:`Finding` per record, or with ``alike`` the plain commits' as :class:`AlikeFindings`
    (what the Spark stage aggregates)."""
    parsed = [parse_target(t) for t in targets]
    findings = []
    for records in split_by_group(facts).values():
        prepared = PreparedGroup(records)
        for target in parsed:
            findings += prepared.audit(target)
    return findings if alike else expand(findings)


# OffsetCommitValue v0-v4 (type 1): every Java release reads them with today's schema, so a
# record our decoder read is read alike by all of them (an unknown tagged field is skipped).
PLAIN_TYPE, PLAIN_TOP = 1, 4


class PreparedGroup:
    """One group's facts, split once for all targets: the "plain" offset commits (type 1, decoded,
    version <= 4: 95% of a snapshot) by shape (value version, tagged fields present), and the
    rest. A target then looks at each plain shape once, not at each record, and its load sees
    only the plain commits that can change its outcome (:meth:`load_entries`). The findings are
    those of judging every record alone (the differential suite checks the verdicts against the
    releases, ``tests/test_audit_downgrade.py`` the findings record by record)."""

    def __init__(self, records: list[RecordFacts]):
        self.records = records
        self.others: list[RecordFacts] = []
        self.plain: dict[tuple, list[RecordFacts]] = {}
        for f in records:
            if (f.record_type == PLAIN_TYPE and f.control is None and f.decode_error is None
                    and (f.is_tombstone or (f.value_version is not None
                                            and 0 <= f.value_version <= PLAIN_TOP))):
                self.plain.setdefault(_shape(f), []).append(f)
            else:
                self.others.append(f)
        self.reads: dict = {}
        self._entries: list[LogEntry] | None = None
        self.behaviour = _BehaviourFacts(records)

    def audit(self, target: Target) -> list[Finding]:
        out: list[Finding] = []
        kept = []
        for f in self.others:
            if f.record_type is None or f.control is not None:
                continue
            if f.record_type not in target.known_types:
                out += _unknown_type(f, target)
                continue
            kept.append(f)
            if target.coordinator == SCALA or not target.unknown_version_fails:
                out += _version(f, target)
        if target.coordinator == SCALA or not target.unknown_version_fails:
            top = target.max_versions.get(PLAIN_TYPE, 0)
            for (version, _), plain in self.plain.items():
                if version is not None and version > top:
                    out += _alike(_version(plain[0], target), plain)
        for (_, tags), plain in self.plain.items():
            if tags and _lost_tags(PLAIN_TYPE, tags, target):
                live = [f for f in plain if f.is_live and not f.is_tombstone]
                out += _alike(_tag_losses(live[:1], target), live)
        if target.coordinator != SCALA:
            out += self._java_break(target)
        return out + _tag_losses(kept, target) + self.behaviour.findings(target)

    def load_entries(self) -> list[LogEntry]:
        """The entries a failure-only load needs: every record but the plain commits, and of each
        run of plain commits (no other record between them) the first commit of each version and
        the first tombstone. Within a run, a plain commit changes nothing a release checks except
        creating its missing group (the run's first commit does that), and reads as the first
        commit of its version reads: what stays out can neither fail nor make a later record
        fail."""
        if self._entries is None:
            plain_ids = {id(f) for fs in self.plain.values() for f in fs}
            entries, seen = [], set()
            for f in self.records:
                if f.control is None and f.record_type is None:
                    continue
                if id(f) in plain_ids:
                    shape = _shape(f)
                    if shape in seen:
                        continue
                    seen.add(shape)
                else:
                    seen = set()
                entries.append(LogEntry(f.offset, f.producer_id, f.control, f.key, f.value))
            self._entries = entries
        return self._entries

    def _java_break(self, target: Target) -> list[Finding]:
        failure = load(self.load_entries(), java_release(target.release), self.reads).failure
        return [] if failure is None else [_break_finding(self.records, target, failure)]


def _alike(findings: list[Finding], records: list[RecordFacts]) -> list[AlikeFindings]:
    """``findings`` of ``records[0]`` (by shape, every one of ``records`` has them) for all."""
    offsets = tuple(f.offset for f in records)
    live = tuple(f.is_live for f in records)
    return [AlikeFindings(f, offsets, live) for f in findings]


def _shape(f: RecordFacts) -> tuple:
    return (None, ()) if f.is_tombstone else (f.value_version, f.tagged_fields)


class _BehaviourFacts:
    """What DU-6 looks at in a group's live records, gathered once for every target."""

    def __init__(self, records: list[RecordFacts]):
        live = [f for f in records if f.is_live and not f.is_tombstone and f.record_type is not None]
        self.types = {f.record_type for f in live}
        self.first_offset = next((f for f in live if f.record_type in (0, 1)), None)
        self.first_share = next((f for f in live if f.record_type in SHARE_TYPES), None)
        self.first_relaxed = next((f for f in live if f.record_type == 8 and any(
            "assignmentEpochs" in p for p in f.tagged_fields)), None)

    def findings(self, target: Target) -> list[Finding]:
        out = []
        types = self.types
        for family, words in ((CONSUMER_TYPES, "consumer"), (STREAMS_TYPES, "streams")):
            if types & family and not types & family & target.known_types and self.first_offset:
                out.append(_finding(target, self.first_offset, "DU-6", INFO, "medium",
                                    f"the {words} group's offsets stay but {target} sees a simple "
                                    "group: retention by commit timestamp, admin commits accepted"))
        if (types & SHARE_TYPES) and not (types & SHARE_TYPES & target.known_types):
            out.append(_finding(target, self.first_share, "DU-6", INFO, "medium",
                                f"the share group does not exist on {target}"))
        if self.first_relaxed is not None and target.release < (4, 3, 0):
            out.append(_finding(target, self.first_relaxed, "DU-6", INFO, "info",
                                f"{target} fences offset commits by strict epoch equality (no "
                                "KIP-1251): expect more STALE_MEMBER_EPOCH and aborted "
                                "transactions"))
        return out


def split_by_group(facts: list[RecordFacts]) -> dict[tuple, list[RecordFacts]]:
    """``{(partition, group id): facts in log order}``; a transaction marker goes to every group
    its producer wrote transactional records for (replay never crosses groups otherwise, so a
    group's load can be followed alone)."""
    ordered = sorted(facts, key=lambda f: (f.partition, f.offset))
    producers: dict[tuple, set] = {}
    for f in ordered:
        if f.control is None and f.producer_id != -1:
            producers.setdefault((f.partition, f.producer_id), set()).add(f.group_id)
    by_group: dict[tuple, list[RecordFacts]] = {}
    for f in ordered:
        if f.control is None:
            by_group.setdefault((f.partition, f.group_id), []).append(f)
            continue
        # A marker whose transaction's records compaction removed still reaches the loader
        # (3.6 fails on it): it goes with the records no group can be named for.
        for gid in sorted(producers.get((f.partition, f.producer_id), {None}), key=str):
            by_group.setdefault((f.partition, gid), []).append(replace(f, group_id=gid))
    return by_group


def audit_group(records: list[RecordFacts], target: Target) -> list[Finding]:
    """Findings for one group's records (one partition, log order, liveness marked) on ``target``
    (:func:`audit_facts` prepares each group once for all its targets)."""
    return expand(PreparedGroup(records).audit(target))


_RULE_OF = {"UnknownRecordVersionException": "DU-2", "java.lang.RuntimeException": "DU-3"}


def java_group_load(records: list[RecordFacts], target: Target) -> LoadOutcome:
    """The release's own steps (:func:`jobs.audits.java_load.load`) over one group's records and
    its producers' markers: where it stops, what it skips, the group and offsets it keeps."""
    entries = [LogEntry(f.offset, f.producer_id, f.control, f.key, f.value) for f in records
               if f.control is not None or f.record_type is not None]
    return load(entries, java_release(target.release))


def _break_finding(records: list[RecordFacts], target: Target, failure) -> Finding:
    f = next(r for r in records if r.offset == failure.offset)
    rule = _RULE_OF.get(failure.exception, "DU-4") if failure.stage != "control" else "DU-4"
    short = failure.exception.rsplit(".", 1)[-1]
    if rule == "DU-2":
        top = target.max_versions.get(f.record_type, 0)
        text = f"type {f.record_type} value version {f.value_version} is above {target}'s {top}"
    elif rule == "DU-3":
        theirs = target.layout(f.record_type)
        written = f"the {f.layout} layout" if f.layout else "no layout we know"
        text = (f"{target} cannot read this type-{f.record_type} v{f.value_version} record, written in "
                f"{written}" + (f" ({target} reads the {theirs} one)" if theirs != (f.layout or theirs)
                                else "") + f": {failure.message}")
    else:
        text = f"{target}'s replay throws {short}: {failure.message}"
    return _finding(target, f, rule, BREAK, "critical", text, target.failure_mode)


def _finding(target: Target, f: RecordFacts, rule: str, klass: str, severity: str, detail: str,
             mode: str | None = None) -> Finding:
    return Finding(target.name, f.partition, f.group_id, rule, klass, mode, severity, f.offset,
                   f.record_type, f.is_live, detail)


def _unknown_type(f: RecordFacts, target: Target) -> list[Finding]:
    kind = group_kind(f.record_type)
    if target.unknown_type_fails:
        return [_finding(target, f, "DU-1", BREAK, "critical",
                         f"record type {f.record_type} ({kind}) is unknown to {target}, which "
                         "aborts the load on an unknown key", target.failure_mode)]
    if not f.is_live or f.is_tombstone:
        return [_finding(target, f, "DU-1", DROP, "info",
                         f"{'tombstone' if f.is_tombstone else 'superseded record'} of type "
                         f"{f.record_type} ({kind}) skipped by {target}")]
    return [_finding(target, f, "DU-1", DROP, "high",
                     f"live {kind} record (type {f.record_type}) skipped by {target}: its state is lost"),
            _finding(target, f, "DU-1", RESURRECT, "medium",
                     f"live {kind} record (type {f.record_type}) cannot be tombstoned by {target} "
                     "and is replayed again after re-upgrade")]


def _version(f: RecordFacts, target: Target) -> list[Finding]:
    """DU-2 by the version number alone: Scala targets (any break), and Java 3.6-3.9, which read
    an unknown version as their newest (a Java break comes from :func:`_java_break`)."""
    if f.is_tombstone or f.value_version is None:
        return []
    top = target.max_versions.get(f.record_type, 0)
    if f.value_version <= top:
        return []
    text = f"type {f.record_type} value version {f.value_version} is above {target}'s {top}"
    if target.unknown_version_fails:
        return [_finding(target, f, "DU-2", BREAK, "critical", text + ": the load fails",
                         target.failure_mode)]
    return [_finding(target, f, "DU-2", READ_AS_LATEST, "low", text + ": read as version "
                     f"{top} (tagged fields only, so nothing known is lost)")]


def _tag_losses(kept: list[RecordFacts], target: Target) -> list[Finding]:
    out = []
    for f in kept:
        if not f.is_live or f.is_tombstone:
            continue
        lost = _lost_tags(f.record_type, f.tagged_fields, target)
        if lost:
            meaning = "; ".join(TAG_SEMANTICS.get(p.rsplit(".", 1)[-1], p) for p in lost)
            out.append(_finding(target, f, "DU-5", INFO, "info",
                                f"{target} ignores {', '.join(lost)}: {meaning}"))
    return out


def _lost_tags(record_type: int, tagged_fields, target: Target) -> list[str]:
    return [path for path in tagged_fields
            if (record_type, path) not in target.known_tags
            and ((record_type, path) in TAG_SINCE or path.startswith("?"))]


__all__ = ["RULES", "Finding", "AlikeFindings", "expand", "audit_facts", "audit_group", "aggregate",
           "verdict_lines", "BREAK", "DROP", "RESURRECT", "READ_AS_LATEST", "INFO"]

"""State rules, checked on the group as the whole log leaves it (reference §3.4, §4.3):
CG-03..07, CG-10, CG-12, WIN-01 for modern groups; TX-01 and MG-03 for offsets.

Each finding points at the record that last changed what it is about (the member's current
assignment, the group's epoch record, the transaction's first offset).
"""

from __future__ import annotations

from jobs.audits.context import (
    OFFSETS_RETENTION_MS,
    TRANSACTION_MAX_TIMEOUT_MS,
    AuditContext,
)
from jobs.audits.evidence import finding
from jobs.audits.validators import RELAXED, regime_for
from jobs.replay.state import CONSUMER, STREAMS, Group, Member

STATES_IN_RECORDS = {"STABLE", "UNREVOKED_PARTITIONS", "UNRELEASED_PARTITIONS",
                     "UNREVOKED_TASKS", "UNRELEASED_TASKS"}


def check_groups(a: AuditContext) -> None:
    for group_id, group in sorted(a.replay.groups.items()):
        if group.group_type not in (CONSUMER, STREAMS):
            continue
        target_known = group_id in a.target_known
        if target_known and group.target_assignment_epoch > group.group_epoch:
            a.add(finding("CG-03", group_id, group.position,
                          f"target assignment epoch {group.target_assignment_epoch} is ahead of "
                          f"group epoch {group.group_epoch}"))
        _targets(a, group)
        instances: dict[str, str] = {}
        for member_id, m in sorted(group.members.items()):
            _member(a, group, m, target_known)
            if m.instance_id and m.instance_id in instances:
                _add(a, "CG-07", group, m, f"instance id {m.instance_id} is used by members "
                     f"{instances[m.instance_id]} and {member_id}")
            elif m.instance_id:
                instances[m.instance_id] = member_id
            for tp, ap in sorted({**m.pending_revocation, **m.assigned}.items(),
                                 key=lambda kv: (str(kv[0][0]), kv[0][1])):
                _partition(a, group, m, tp, ap, target_known)


def _add(a, rule, group: Group, m: Member | None, message, *, severity=None, tp=None,
         details=None) -> None:
    position = (m.assignment_position or m.metadata_position) if m else group.position
    label = None if tp is None else a.topic_label(tp[0])
    a.add(finding(rule, group.group_id, position, message, member_id=m.member_id if m else None,
                  topic=label, topic_id=None if tp is None else tp[0],
                  partition=None if tp is None else tp[1], severity=severity, details=details))


def _targets(a, group: Group) -> None:
    seen: dict = {}
    for member_id, target in sorted(group.target.items(), key=lambda kv: kv[1].position):
        if member_id not in group.members:
            a.add(finding("CG-07", group.group_id, target.position,
                          f"target assignment for {member_id}, which is not a member",
                          member_id=member_id, severity="high"))
        for tp in sorted(target.partitions, key=lambda t: (str(t[0]), t[1])):
            if tp in seen:
                label = a.topic_label(tp[0])
                a.add(finding("CG-06", group.group_id, target.position,
                              f"{label}-{tp[1]} is in the targets of {seen[tp]} and {member_id}",
                              member_id=member_id, topic=label, topic_id=tp[0], partition=tp[1]))
            seen.setdefault(tp, member_id)


def _member(a, group: Group, m: Member, target_known: bool) -> None:
    epoch, target = m.member_epoch, group.target_assignment_epoch
    if m.assignment_position is not None and m.metadata_position is None:
        _add(a, "CG-07", group, m, f"member {m.member_id} has a current assignment but no member "
             "metadata", severity="high")
    if epoch == -1:
        _add(a, "CG-07", group, m, f"member {m.member_id}'s current assignment was removed but "
             "its member metadata remains", severity="high")
    elif epoch < -2 or (epoch == -2 and not m.instance_id):
        _add(a, "CG-04", group, m, f"member {m.member_id} has epoch {epoch}"
             + (" without an instance id" if epoch == -2 else ""))
    elif epoch >= 1 and m.previous_member_epoch is not None and m.previous_member_epoch > epoch:
        _add(a, "CG-04", group, m, f"member {m.member_id}'s previous epoch "
             f"{m.previous_member_epoch} is newer than its epoch {epoch}")
    if target_known and epoch >= 0 and epoch > target:
        _add(a, "CG-03", group, m, f"member {m.member_id} is at epoch {epoch}, ahead of the "
             f"target assignment epoch {target}")
    if group.group_type == CONSUMER:
        _member_state(a, group, m, target_known)
    if epoch == -2 and m.owned():
        _static_leave(a, group, m)


def _member_state(a, group: Group, m: Member, target_known: bool) -> None:
    state = m.member_state
    if state not in STATES_IN_RECORDS:
        _add(a, "CG-05", group, m, f"member {m.member_id} has state {state}, unknown to this "
             "reader (written by a newer version?)", severity="info")
        return
    if (state == "UNREVOKED_PARTITIONS") != bool(m.pending_revocation) and m.member_epoch != -2:
        _add(a, "CG-05", group, m, f"member {m.member_id} is {state} with "
             f"{len(m.pending_revocation)} partition(s) pending revocation")
    target = group.target.get(m.member_id)
    if state == "STABLE" and target_known and target is not None \
            and m.member_epoch == group.target_assignment_epoch and set(m.assigned) != target.partitions:
        _add(a, "CG-05", group, m, f"member {m.member_id} is STABLE at the target epoch "
             f"{m.member_epoch} but owns {len(m.assigned)} partition(s) instead of its "
             f"{len(target.partitions)} target partition(s)")


def _partition(a, group: Group, m: Member, tp, ap, target_known: bool) -> None:
    epoch, label = m.member_epoch, a.topic_label(tp[0])
    relaxed = regime_for(a.regime, group.group_type) == RELAXED
    if ap.assignment_epoch_source == "explicit":
        problem = None
        if ap.assignment_epoch < 0:
            problem = "is negative"
        elif epoch >= 1 and ap.assignment_epoch > epoch:
            problem = f"is above the member epoch {epoch}"
        elif target_known and ap.assignment_epoch > group.target_assignment_epoch:
            problem = f"is above the target assignment epoch {group.target_assignment_epoch}"
        if problem:
            _add(a, "CG-10", group, m, f"assignment epoch {ap.assignment_epoch} of "
                 f"{label}-{tp[1]} held by {m.member_id} {problem}", tp=tp)
    elif ap.assignment_epoch_source == "legacy_null" and relaxed:
        _add(a, "CG-10", group, m, f"{label}-{tp[1]} held by {m.member_id} was written without "
             "assignment epochs in a snapshot whose coordinator writes them (a record from "
             "before the upgrade, or a mixed-version round trip); a 4.3+ coordinator loading it "
             "logs an ERROR unless the field is an explicit null, and uses the member epoch",
             severity="info", tp=tp)
    if relaxed and epoch >= 1 and 0 <= ap.assignment_epoch < epoch:
        _add(a, "WIN-01", group, m, f"{m.member_id} may commit {label}-{tp[1]} with any client "
             f"epoch from {ap.assignment_epoch} to {epoch} (window {epoch - ap.assignment_epoch})",
             tp=tp, details={"window": epoch - ap.assignment_epoch,
                             "assignment_epoch": ap.assignment_epoch, "member_epoch": epoch})


def _static_leave(a, group: Group, m: Member) -> None:
    left_at = a.static_left_at.get((group.group_id, m.member_id))
    if left_at is None or a.snapshot_time_ms is None:
        return
    held_ms = a.snapshot_time_ms - left_at
    if a.past(left_at + a.session_timeout_ms, timed=True):
        _add(a, "CG-12", group, m, f"static member {m.member_id} (instance {m.instance_id}) left "
             f"{held_ms // 1000} s before the snapshot and still holds {len(m.owned())} "
             f"partition(s); the session timeout is {a.session_timeout_ms // 1000} s",
             details={"held_ms": held_ms, "session_timeout_ms": a.session_timeout_ms})


def check_offsets(a: AuditContext) -> None:
    for group_id, store in sorted(a.replay.offsets.items()):
        for producer_id, txn in sorted(store.open_transactions.items()):
            row = a.replay.offset_commits[txn.commit_rows[0]] if txn.commit_rows else None
            started = row["log_timestamp"] if row else None
            if started is None or a.snapshot_time_ms is None:
                continue
            age = a.snapshot_time_ms - started
            if a.past(started + TRANSACTION_MAX_TIMEOUT_MS, timed=True):
                a.add(finding("TX-01", group_id, txn.first_position,
                              f"producer {producer_id} wrote {txn.offset_count} transactional "
                              f"offset(s) for group {group_id} {age // 60000} min before the "
                              "snapshot and no COMMIT or ABORT marker followed",
                              details={"producer_id": producer_id, "age_ms": age}))
        _orphans(a, group_id, store)


def _orphans(a, group_id: str, store) -> None:
    if not store.main:
        return
    group = a.replay.groups.get(group_id)
    latest = max(store.main.values(), key=lambda e: e.position)
    tombstone = a.group_tombstones.get(group_id)
    if (group is None or group.is_simple) and tombstone is not None and tombstone > latest.position:
        a.add(finding("MG-03", group_id, tombstone, f"group {group_id} was deleted at log offset "
                      f"{tombstone[1]} but {len(store.main)} committed offset(s) remain; a "
                      "coordinator loading this log keeps them without a group until they "
                      "expire", evidence=[latest.position[1]]))
    elif group is not None and group.is_simple and tombstone is None and a.snapshot_time_ms \
            and latest.commit_timestamp is not None \
            and a.past(latest.commit_timestamp + OFFSETS_RETENTION_MS, timed=False):
        a.add(finding("MG-03", group_id, latest.position, f"group {group_id} has no group "
                      f"records and its last commit is older than the default offset retention"))

"""History rules, checked as each record is replayed: CG-09 (epochs only move forward), CG-11
(a partition changes hands only at a newer epoch) and the releases/acquisitions OF-02 needs.

:func:`before` takes what a record may change (the group object, its epochs, its ownership index
and the member the record addresses); :func:`after` compares it with the replayed result. A new
group object (deletion, conversion, re-creation) starts a new incarnation: nothing is compared
across incarnations.
"""

from __future__ import annotations

from dataclasses import dataclass

from jobs.audits.context import AuditContext, Release
from jobs.audits.evidence import finding
from jobs.audits.fencing import on_acquired
from jobs.replay.modern import RECORD_KINDS
from jobs.replay.state import CONSUMER, STREAMS, Group, Member

STATIC_LEAVE, JOIN = -2, 0


@dataclass
class Before:
    group: Group | None
    group_epoch: int | None
    target_epoch: int | None
    ownership: dict
    member: tuple[int | None, dict] | None    # (member epoch, {tp: assignment epoch}) of the record's member


def before(a: AuditContext, record) -> Before | None:
    kind = RECORD_KINDS.get(getattr(record, "record_type", None))
    if kind is None or kind[0] not in (CONSUMER, STREAMS):
        return None
    group = a.replay.groups.get(record.key["groupId"])
    if group is None:
        return Before(None, None, None, {}, None)
    member = group.members.get(record.key.get("memberId", ""))
    held = None
    if member is not None:
        held = (member.member_epoch, {tp: ap.assignment_epoch
                                      for tp, ap in {**member.pending_revocation,
                                                     **member.assigned}.items()})
    return Before(group, group.group_epoch, group.target_assignment_epoch, dict(group.ownership),
                  held)


def after(a: AuditContext, event, record, was: Before | None) -> None:
    if was is None:
        return
    group_id = record.key["groupId"]
    group = a.replay.groups.get(group_id)
    if group is None or group is not was.group:
        _new_incarnation(a, group_id, was)
        if group is None:
            a.group_tombstones[group_id] = event.position
            if was.group is not None:
                a.last_group_epoch[group_id] = was.group.group_epoch
            return
        was = Before(group, None, None, {}, None)
    kind = RECORD_KINDS[record.record_type][1]
    if kind == "target_metadata" and record.value is not None:
        a.target_known.add(group_id)
    _check_group_epochs(a, event, group, was)
    if kind == "current":
        _check_member(a, event, group, record, was)
    _ownership_changes(a, event, group, was)


def _new_incarnation(a: AuditContext, group_id: str, was: Before) -> None:
    for key in [k for k in a.releases if k[0] == group_id]:
        del a.releases[key]
    for key in [k for k in a.epoch_marks if k[0] == group_id]:
        del a.epoch_marks[key]
    a.target_known.discard(group_id)


def _regressed(a, event, group_id, mark_key, new, previous, label, member_id=None) -> None:
    mark = a.epoch_marks.get(mark_key)
    a.epoch_marks[mark_key] = (new, event.position)
    if previous is None or new >= previous:
        return
    since = mark[1] if mark else None
    a.add(finding("CG-09", group_id, event.position,
                  f"{label} of group {group_id} went back from {previous} to {new} at log offset "
                  f"{event.offset} without the group being re-created", member_id=member_id,
                  evidence=[since[1]] if since else [], partial=a.gap_before(event.position, since),
                  details={"previous_epoch": previous, "epoch": new}))


def _check_group_epochs(a, event, group, was) -> None:
    if group.group_epoch != was.group_epoch:
        _regressed(a, event, group.group_id, (group.group_id, "group"), group.group_epoch,
                   was.group_epoch, "group epoch")
    target = group.target_assignment_epoch
    if target != was.target_epoch and target != -1:
        _regressed(a, event, group.group_id, (group.group_id, "target"), target,
                   was.target_epoch if was.target_epoch != -1 else None, "target assignment epoch")


def _check_member(a, event, group, record, was) -> None:
    member_id = record.key["memberId"]
    member = group.members.get(member_id)
    if member is None or record.value is None:
        a.static_left_at.pop((group.group_id, member_id), None)
        return
    if member.member_epoch == STATIC_LEAVE:
        a.static_left_at[(group.group_id, member_id)] = event.timestamp
    else:
        a.static_left_at.pop((group.group_id, member_id), None)
    old_epoch, old_epochs = was.member if was.member else (None, {})
    new_epoch = member.member_epoch
    if old_epoch is not None and old_epoch >= 0 and new_epoch not in (STATIC_LEAVE, JOIN):
        _regressed(a, event, group.group_id, (group.group_id, "member", member_id), new_epoch,
                   old_epoch, f"member epoch of {member_id}", member_id)
    if old_epoch is None or old_epoch < 1 or new_epoch < 1:
        return   # static leave resets assignment epochs to 0; a rejoin copies them
    for tp, ap in {**member.pending_revocation, **member.assigned}.items():
        kept = old_epochs.get(tp)
        if kept is not None and ap.assignment_epoch_source == "explicit" and ap.assignment_epoch != kept:
            a.add(finding("CG-09", group.group_id, event.position,
                          f"member {member_id} kept {a.topic_label(tp[0])}-{tp[1]} but its "
                          f"assignment epoch changed from {kept} to {ap.assignment_epoch} at log "
                          f"offset {event.offset}", member_id=member_id,
                          topic=a.topic_label(tp[0]), topic_id=tp[0], partition=tp[1],
                          details={"previous_assignment_epoch": kept,
                                   "assignment_epoch": ap.assignment_epoch}))


def _ownership_changes(a, event, group, was) -> None:
    now = group.ownership
    for tp, (member_id, epoch) in was.ownership.items():
        if now.get(tp, (None,))[0] != member_id:
            gone = was.group.members.get(member_id) if was.group else None
            if gone is not None and tp in gone.owned():
                continue   # still held: two owners at once, which replay reports as CG-01
            a.releases[(group.group_id, tp)] = Release(
                member_id, epoch, gone.instance_id if gone else None, event.position)
    for tp, (member_id, _) in now.items():
        if was.ownership.get(tp, (None,))[0] == member_id:
            continue
        release = a.releases.pop((group.group_id, tp), None)
        if release is not None and release.member_id != member_id:
            _check_handover(a, event, group, group.members[member_id], tp, release)
        on_acquired(a, group.group_id, tp, event.position)


def _check_handover(a, event, group, member: Member, tp, release: Release) -> None:
    held = member.assigned.get(tp) or member.pending_revocation.get(tp)
    if held is None or member.member_epoch in (STATIC_LEAVE, JOIN):
        return
    if member.instance_id and member.instance_id == release.instance_id:
        return   # a static member's new id takes its own partitions over
    if held.assignment_epoch > release.member_epoch:
        return
    label = a.topic_label(tp[0])
    a.add(finding("CG-11", group.group_id, event.position,
                  f"{label}-{tp[1]} left member {release.member_id} at epoch "
                  f"{release.member_epoch} (log offset {release.position[1]}) and member "
                  f"{member.member_id} took it at assignment epoch {held.assignment_epoch} "
                  f"(log offset {event.offset}): handed over within one epoch",
                  member_id=member.member_id, topic=label, topic_id=tp[0], partition=tp[1],
                  evidence=[release.position[1]],
                  partial=a.gap_before(event.position, release.position),
                  details={"previous_owner": release.member_id,
                           "released_at_epoch": release.member_epoch,
                           "assignment_epoch": held.assignment_epoch}))

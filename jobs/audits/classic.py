"""Checks on classic-group records and on conversions (CL-01..04, MG-02).

A GroupMetadata record (type 2) is a whole generation at once: every member's subscription (with
the partitions it reports owning, ConsumerProtocolSubscription v1+, and the generation of its
last assignment, v2+) and every member's assignment. CL-01..03 read one record; CL-04's
generation order and MG-02's conversion shapes compare it with what came before.
"""

from __future__ import annotations

from jobs.audits.context import AuditContext
from jobs.audits.evidence import finding
from jobs.replay.state import CLASSIC


def _partitions(blob, field: str) -> list[tuple[str, int]]:
    if not isinstance(blob, dict):
        return []
    return [(t["topic"], p) for t in blob.get(field) or () for p in t["partitions"]]


def check_group_metadata(a: AuditContext, event, record) -> None:
    """Before a type-2 record is replayed."""
    group_id = record.key["group"]
    existing = a.replay.groups.get(group_id)
    if record.value is None:
        if existing is not None and existing.group_type == CLASSIC and existing.members:
            a.conversions[group_id] = {"generation": existing.generation,
                                       "members": set(existing.members), "position": event.position}
        return
    value, members = record.value, record.value.get("members") or []
    if value.get("protocolType") == "consumer":
        _ownership(a, event, group_id, members)
    _generation(a, event, group_id, existing, value, members)
    _downgrade_shape(a, event, group_id, value, members)


def _ownership(a, event, group_id, members) -> None:
    owned, assigned = {}, {}
    for m in members:
        generation_id = _generation_id(m)
        for tp in _partitions(m.get("subscription"), "ownedPartitions"):
            owned.setdefault(tp, []).append((generation_id, m["memberId"]))
        for tp in _partitions(m.get("assignment"), "assignedPartitions"):
            assigned.setdefault(tp, []).append(m["memberId"])
    # The cooperative sticky assignor trusts only claims made in the newest generation any
    # member reports, and none that two members make in it (AbstractStickyAssignor.membersData);
    # a partition so owned moves to another member only after its owner revoked it.
    newest = max((_generation_id(m) for m in members), default=None)
    valid = {tp: current[0] for tp, claims in owned.items()
             if len(current := [mid for g, mid in claims if g == newest]) == 1}
    for tp, claims in sorted(owned.items()):
        if len(claims) > 1:
            stale = sorted(claims)[0]
            _add(a, "CL-01", event, group_id, tp, stale[1],
                 f"{tp[0]}-{tp[1]} is reported owned by {len(claims)} members "
                 f"({', '.join(c[1] for c in sorted(claims))}); {stale[1]} (subscription "
                 f"generation {stale[0]}) is the stale claimant", {"claims": claims})
    for tp, holders in sorted(assigned.items()):
        if len(holders) > 1:
            _add(a, "CL-03", event, group_id, tp, holders[1],
                 f"{tp[0]}-{tp[1]} is assigned to {', '.join(holders)}", {"members": holders})
        owner = valid.get(tp)
        if owner is not None and owner not in holders:
            _add(a, "CL-02", event, group_id, tp, holders[0],
                 f"{tp[0]}-{tp[1]} is assigned to {holders[0]} while {owner} still owns it in "
                 f"generation {newest}: handed over without a revocation round",
                 {"owned_by": [owner], "assigned_to": holders})


def _generation_id(member: dict) -> int:
    """The generation a classic member's subscription says its owned partitions are from."""
    subscription = member.get("subscription")
    return subscription.get("generationId", -1) if isinstance(subscription, dict) else -1


def _add(a, rule, event, group_id, tp, member_id, message, details) -> None:
    a.add(finding(rule, group_id, event.position, f"{message} (GroupMetadata at log offset "
                  f"{event.offset})", member_id=member_id, topic=tp[0], partition=tp[1],
                  details=details))


def _generation(a, event, group_id, existing, value, members) -> None:
    generation = value["generation"]
    problems = []
    if existing is not None and existing.group_type == CLASSIC and existing.generation is not None \
            and generation < existing.generation:
        problems.append(f"generation went back from {existing.generation} to {generation}")
    if members:
        ids = {m["memberId"] for m in members}
        if value.get("leader") is not None and value["leader"] not in ids:
            problems.append(f"leader {value['leader']} is not a member")
        if value.get("protocol") is None:
            problems.append("no protocol although the group has members")
        for m in members:
            sub = m.get("subscription")
            gen = sub.get("generationId", -1) if isinstance(sub, dict) else -1
            if gen is not None and gen >= generation:
                problems.append(f"member {m['memberId']} reports subscription generation {gen}, "
                                f"not older than the group's {generation}")
    for problem in problems:
        since = existing.position if existing is not None else None
        a.add(finding("CL-04", group_id, event.position,
                      f"classic group {group_id} at log offset {event.offset}: {problem}",
                      partial=a.gap_before(event.position, since) and "went back" in problem,
                      details={"generation": generation}))


def _downgrade_shape(a, event, group_id, value, members) -> None:
    """Online downgrade: the consumer group's tombstones, then this record (reference §2.5).

    The reference says the leader is null; Kafka 4.3.1 (``ClassicGroup.fromConsumerGroup``, whose
    ``add`` makes the first member the leader) writes a leader, as the bundled sample shows."""
    last = a.last_record_kind.get(group_id)
    if not members or last != (3, True):
        return
    epoch = a.last_group_epoch.get(group_id)
    problems = []
    if epoch is not None and value["generation"] != epoch:
        problems.append(f"generation {value['generation']} differs from the consumer group's "
                        f"epoch {epoch}")
    for problem in problems:
        a.add(finding("MG-02", group_id, event.position,
                      f"online downgrade of {group_id} to a classic group at log offset "
                      f"{event.offset}: {problem}", details={"group_epoch": epoch}))


def check_upgrade(a: AuditContext, event, record) -> None:
    """Online upgrade: after a non-empty classic group's tombstone, the converted consumer group
    starts with group epoch, target epoch and member epochs equal to the classic generation."""
    conversion = a.conversions.get(record.key.get("groupId"))
    if conversion is None or record.value is None:
        return
    generation, label = conversion["generation"], None
    if record.record_type == 3 and not conversion.get("epoch_seen"):
        conversion["epoch_seen"] = True
        label = ("group epoch", record.value["epoch"])
    elif record.record_type == 6 and not conversion.get("target_seen"):
        conversion["target_seen"] = True
        label = ("target assignment epoch", record.value["assignmentEpoch"])
    elif record.record_type == 8 and record.key["memberId"] in conversion["members"]:
        conversion["members"].discard(record.key["memberId"])
        label = (f"member epoch of {record.key['memberId']}", record.value["memberEpoch"])
    if label is not None and label[1] != generation:
        a.add(finding("MG-02", record.key["groupId"], event.position,
                      f"online upgrade of {record.key['groupId']} at log offset {event.offset}: "
                      f"{label[0]} is {label[1]}, not the classic generation {generation}",
                      evidence=[conversion["position"][1]], details={"generation": generation}))
    if conversion.get("target_seen") and not conversion["members"]:
        del a.conversions[record.key["groupId"]]

"""Fencing findings inferred from offset commits (OF-01, OF-02, OF-03, OF-05, TX-03).

An offset-commit record names no member and no epoch. What the log does give is its position: the
group's membership records before it are exactly what the coordinator's validator saw when it
accepted the commit (reference §4.2). So each commit is checked against the replayed ownership at
that position, before the record itself is applied:

* consumer and streams groups with members: the partition must be owned by some member. No
  regime rejects a member's commit for a partition it does not own when the member sends its
  current epoch, so an unowned commit means a member committed a partition it did not own
  (OF-01; OF-02 when the partition was between owners; TX-03 when transactional);
* classic groups with members: the partition must be in the generation's assignment (OF-05);
* a committed offset going backwards is graded by what changed in between (OF-03).

In a compacted range the replayed ownership is a subset of the truth, so ownership findings
there are ``partial``.
"""

from __future__ import annotations

from jobs.audits.context import AuditContext
from jobs.audits.evidence import finding
from jobs.audits.validators import accepted_client_epochs, regime_for
from jobs.replay.state import CLASSIC, CONSUMER, STREAMS, Group, Member


def check_commit(a: AuditContext, event, record) -> None:
    """Before ``record`` (a live offset commit) is replayed: correlate it with the group."""
    key, value = record.key, record.value
    group_id, topic, partition = key["group"], key["topic"], key["partition"]
    group = a.replay.groups.get(group_id)
    is_txn = event.producer_id != -1
    owner = None
    if group is not None and group.members:
        if group.group_type in (CONSUMER, STREAMS):
            owner = _check_modern(a, event, group, topic, partition, value, is_txn)
        elif group.group_type == CLASSIC and group.protocol_type == "consumer":
            owner = _check_classic(a, event, group, topic, partition, is_txn)
    if not is_txn:
        _check_regression(a, event, group, topic, partition, value, owner)


def _owners(group: Group, tp) -> list[Member]:
    return [m for _, m in sorted(group.members.items()) if tp in m.owned()]


def _modern_key(a: AuditContext, group: Group, topic: str, partition: int, value: dict):
    if group.group_type == STREAMS:
        subtopology = a.topologies.get(group.group_id, {}).get(topic)
        return None if subtopology is None else (subtopology, partition)
    tid = a.topic_id_of(topic, value)
    return None if tid is None else (tid, partition)


def _check_modern(a, event, group, topic, partition, value, is_txn):
    tp = _modern_key(a, group, topic, partition, value)
    if tp is None:
        return None   # no topic id or topology to correlate with: no evidence either way
    owners = _owners(group, tp)
    if owners:
        return owners[0].member_id, owners[0].member_epoch
    subscribed = _subscribed(group, topic)
    rule = "TX-03" if is_txn else "OF-01"
    members = {m.member_id: m.member_epoch for m in group.members.values()}
    regime = regime_for(a.regime, group.group_type)
    details = {"regime": regime, "members": members, "subscribed": subscribed,
               "producer_id": event.producer_id, "committed_offset": value["offset"],
               "accepted_client_epochs": {mid: accepted_client_epochs(m, tp, regime)
                                          for mid, m in group.members.items()}}
    message = (f"{'transactional ' if is_txn else ''}offset {value['offset']} for {topic}-"
               f"{partition} committed at log offset {event.offset} while group {group.group_id} "
               f"had {len(members)} member(s) and none owned {topic}-{partition}; a member must "
               "have committed, with its current epoch, a partition it did not own")
    row = finding(rule, group.group_id, event.position, message, topic=topic,
                  topic_id=tp[0], partition=partition,
                  severity=None if subscribed else "medium", partial=a.gap_before(event.position),
                  details=details)
    release = a.releases.get((group.group_id, tp))
    if release is not None and not is_txn:
        # between owners: OF-02 if a member acquires it later, else it stays OF-01
        a.gap_commits.setdefault((group.group_id, tp), []).append((row, release))
    else:
        a.add(row)
    return None


def _subscribed(group: Group, topic: str) -> bool:
    if group.group_type == STREAMS:
        return True
    regex_topics = {t for topics in group.resolved_regexes.values() for t in topics}
    return any(topic in m.subscribed_topic_names for m in group.members.values()) or \
        topic in regex_topics


def _check_classic(a, event, group, topic, partition, is_txn):
    holders = [mid for mid, m in sorted(group.members.items())
               if (topic, partition) in m.classic_assignment]
    if holders:
        return holders[0], group.generation
    subscribed = any(topic in m.subscribed_topic_names for m in group.members.values())
    message = (f"offset for {topic}-{partition} committed at log offset {event.offset} while "
               f"classic group {group.group_id} (generation {group.generation}, "
               f"{len(group.members)} member(s)) assigned it to nobody"
               + ("" if subscribed else "; no member subscribes to the topic (a manual commit)"))
    a.add(finding("OF-05", group.group_id, event.position, message, topic=topic,
                  partition=partition, partial=a.gap_before(event.position),
                  severity=None if subscribed else "low",
                  details={"generation": group.generation, "transactional": is_txn,
                           "members": sorted(group.members)}))
    return None


def _check_regression(a, event, group, topic, partition, value, owner) -> None:
    key = (event.record.key["group"], topic, partition)
    store = a.replay.offsets.get(key[0])
    installed = store.main.get((topic, partition)) if store else None
    previous_owner = a.commit_owners.get(key)
    a.commit_owners[key] = owner
    if installed is None or value["offset"] >= installed.committed_offset:
        return
    new_tid = a.topic_id_of(topic, value) if value.get("topicId") else None
    if group is None or group.is_simple or not group.members:
        severity, case = "info", "the group was empty: an admin offset reset"
    elif installed.topic_id and new_tid and installed.topic_id != new_tid:
        severity, case = "info", "the topic id changed: the topic was recreated"
    elif _member(previous_owner) != _member(owner):
        severity, case = "high", ("ownership changed since the previous commit: a late commit "
                                  "from a previous owner")
    elif previous_owner != owner:
        # The same member kept the partition across an epoch bump or a new generation: a
        # rebalance it survived does not make its own rewind a stale commit.
        severity, case = "medium", ("same owner across an epoch bump: the owning member itself "
                                    "rewound")
    else:
        severity, case = "medium", "same owner, no membership change: the application rewound"
    message = (f"committed offset for {topic}-{partition} of group {key[0]} went back from "
               f"{installed.committed_offset} (log offset {installed.position[1]}) to "
               f"{value['offset']} (log offset {event.offset}); {case}")
    a.add(finding("OF-03", key[0], event.position, message, topic=topic, topic_id=new_tid,
                  partition=partition, evidence=[installed.position[1]], severity=severity,
                  member_id=owner[0] if owner else None,
                  partial=a.gap_before(event.position, installed.position),
                  details={"previous_offset": installed.committed_offset,
                           "offset": value["offset"], "previous_owner": previous_owner,
                           "owner": owner}))


def _member(owner) -> str | None:
    """The member id of an owner ``(member id, epoch or generation)``, None when unowned."""
    return None if owner is None else owner[0]


def on_acquired(a: AuditContext, group_id: str, tp, position) -> None:
    """A member took ``tp``: unowned commits since its release were in a hand-over gap (OF-02)."""
    for row, release in a.gap_commits.pop((group_id, tp), []):
        regraded = finding(
            "OF-02", group_id, (row["log_partition"], row["log_offset"]),
            row["message"].split(". Expected:")[0] + f", after member {release.member_id} "
            f"released it at log offset {release.position[1]} and before a member acquired it "
            f"at log offset {position[1]}",
            topic=row["topic"], topic_id=row["topic_id"], partition=row["partition"],
            evidence=[release.position[1], position[1]], severity=row["severity"],
            partial=a.gap_before(position, release.position) or row["verdict"] == "partial",
            details={"released_by": release.member_id, "released_at_epoch": release.member_epoch})
        a.add(regraded)


def flush_gap_commits(a: AuditContext) -> None:
    """End of the log: commits after a release that nobody acquired stay OF-01."""
    for rows in a.gap_commits.values():
        for row, _ in rows:
            a.add(row)
    a.gap_commits.clear()

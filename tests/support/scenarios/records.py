"""Record constructors: the key/value dicts a 4.x coordinator writes, in Kafka's JSON field names.

Values are written at the versions current writers use: OffsetCommitValue v4 (4.1+, topic id
tagged; v3 with ``offset_commit_version=3``), GroupMetadataValue v3, v0 for every KIP-848 type.
Type-8 records carry KIP-1251 AssignmentEpochs unless the scenario emulates a pre-4.3 writer
(``assignment_epochs=False``: the tagged field is absent, read back as ``[]``). Consumer-protocol
members carry an explicit null ClassicMemberMetadata (``classic=None``), as 4.3.1 writes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from support.scenarios.model import TP, ClassicMember, ConsumerMember

ZERO_UUID = uuid.UUID(int=0)


@dataclass(frozen=True)
class Rec:
    """One record to write: ``value`` None is a tombstone."""

    record_type: int
    key: dict
    value_version: int | None = None
    value: dict | None = None


def tombstone(record_type: int, group_id: str, member_id: str | None = None) -> Rec:
    key = {"groupId": group_id} if member_id is None else {"groupId": group_id, "memberId": member_id}
    return Rec(record_type, key)


def group_epoch(group_id: str, epoch: int) -> Rec:
    return Rec(3, {"groupId": group_id}, 0, {"epoch": epoch})


def target_epoch(group_id: str, epoch: int) -> Rec:
    return Rec(6, {"groupId": group_id}, 0, {"assignmentEpoch": epoch})


def member_metadata(group_id: str, m: ConsumerMember) -> Rec:
    return Rec(5, {"groupId": group_id, "memberId": m.member_id}, 0, {
        "instanceId": m.instance_id, "rackId": m.rack_id, "clientId": m.client_id,
        "clientHost": m.client_host, "subscribedTopicNames": sorted(m.subscribe),
        "subscribedTopicRegex": None, "rebalanceTimeoutMs": m.rebalance_timeout_ms,
        "serverAssignor": m.server_assignor, "classicMemberMetadata": m.classic})


def _by_topic(partitions, topic_id) -> list[tuple[uuid.UUID, list[int]]]:
    topics: dict[str, list[int]] = {}
    for topic, partition in partitions:
        topics.setdefault(topic, []).append(partition)
    return [(topic_id(t), sorted(ps)) for t, ps in sorted(topics.items())]


def target_member(group_id: str, member_id: str, partitions: set[TP], topic_id) -> Rec:
    return Rec(7, {"groupId": group_id, "memberId": member_id}, 0, {
        "topicPartitions": [{"topicId": tid, "partitions": ps}
                            for tid, ps in _by_topic(partitions, topic_id)]})


def _with_epochs(owned: dict[TP, int], topic_id, with_epochs: bool) -> list[dict]:
    entries = []
    for tid, ps in _by_topic(owned, topic_id):
        entry = {"topicId": tid, "partitions": ps}
        if with_epochs:
            name = next(t for t, _ in owned if topic_id(t) == tid)
            entry["assignmentEpochs"] = [owned[(name, p)] for p in ps]
        entries.append(entry)
    return entries


def current_assignment(group_id: str, m: ConsumerMember, topic_id, with_epochs: bool) -> Rec:
    return Rec(8, {"groupId": group_id, "memberId": m.member_id}, 0, {
        "memberEpoch": m.member_epoch, "previousMemberEpoch": m.previous_member_epoch,
        "state": m.state,
        "assignedPartitions": _with_epochs(m.assigned, topic_id, with_epochs),
        "partitionsPendingRevocation": _with_epochs(m.pending_revocation, topic_id, with_epochs)})


def offset_commit(group_id: str, tp: TP, offset: int, *, version: int, commit_timestamp: int,
                  topic_id: uuid.UUID | None, metadata: str = "", leader_epoch: int = -1) -> Rec:
    value = {"offset": offset, "leaderEpoch": leader_epoch, "metadata": metadata,
             "commitTimestamp": commit_timestamp}
    if version >= 4:
        value["topicId"] = topic_id or ZERO_UUID
    return Rec(1, {"group": group_id, "topic": tp[0], "partition": tp[1]}, version, value)


def offset_tombstone(group_id: str, tp: TP) -> Rec:
    return Rec(1, {"group": group_id, "topic": tp[0], "partition": tp[1]})


def subscription_blob(member: ClassicMember, owned: list[TP]) -> dict:
    return {"version": 3, "topics": sorted(member.subscribe), "userData": None,
            "ownedPartitions": _topic_lists(owned), "generationId": member.generation_id,
            "rackId": None}


def assignment_blob(partitions) -> dict:
    return {"version": 3, "assignedPartitions": _topic_lists(partitions), "userData": None}


def _topic_lists(partitions) -> list[dict]:
    topics: dict[str, list[int]] = {}
    for topic, partition in partitions:
        topics.setdefault(topic, []).append(partition)
    return [{"topic": t, "partitions": sorted(ps)} for t, ps in sorted(topics.items())]


def group_metadata(group_id: str, *, generation: int, protocol: str | None, leader: str | None,
                   members: list[dict], timestamp: int, protocol_type: str = "consumer") -> Rec:
    return Rec(2, {"group": group_id}, 3, {
        "protocolType": protocol_type, "generation": generation, "protocol": protocol,
        "leader": leader, "currentStateTimestamp": timestamp, "members": members})


def classic_member_entry(member: ClassicMember, subscription: dict, assignment: dict) -> dict:
    return {"memberId": member.member_id, "groupInstanceId": member.instance_id,
            "clientId": member.client_id, "clientHost": member.client_host,
            "rebalanceTimeout": member.rebalance_timeout_ms,
            "sessionTimeout": member.session_timeout_ms,
            "subscription": subscription, "assignment": assignment}

"""Irregular but realistic records, any group kind: what another release, a bug, an operator's
tool or compaction leaves behind, and what the coordinator releases disagree about.

* records of another group type under the same group id (replay: get-or-create of a persisted
  group of the wrong type throws; 4.0+ silently replaces a simple group, 3.7-3.9 throw);
* tombstones for groups and members that never existed (3.7-3.9 throw, 4.0+ ignore them);
* records of a type no release knows (skipped with a WARN), a value version above every
  release's (4.0+ fail the load, 3.6-3.9 Java read it as their newest), unknown tagged fields.

Each function returns the records to write (``LogRec``), and the shape name to mark them with.
"""

from __future__ import annotations

from random import Random

from support.loggen.builder import GroupCtx
from support.loggen.records import FUTURE_TYPES, LogRec

KINDS = ("classic", "consumer", "share", "streams")


def member_id(rng: Random, prefix: str = "m") -> str:
    return f"{prefix}{rng.randint(1, 9)}-{rng.getrandbits(16):04x}"


def foreign_records(ctx: GroupCtx, own_kind: str) -> tuple[list[LogRec], str]:
    """A plausible write of a group of another kind, for this group id."""
    gid, rng = ctx.group_id, ctx.rng
    kind = rng.choice([k for k in KINDS if k != own_kind])
    mid, epoch = member_id(rng), rng.randint(1, 9)
    topic = rng.choice(sorted(ctx.cluster.topics))
    tid = ctx.cluster.topic_id(topic)
    if kind == "classic":
        records = [LogRec(2, {"group": gid}, 3, {
            "protocolType": "consumer", "generation": epoch, "protocol": "range", "leader": mid,
            "currentStateTimestamp": ctx.now_ms, "members": [{
                "memberId": mid, "groupInstanceId": None, "clientId": "consumer",
                "clientHost": "/10.0.0.9", "rebalanceTimeout": 300_000, "sessionTimeout": 45_000,
                "subscription": {"version": 3, "topics": [topic], "userData": None,
                                 "ownedPartitions": [], "generationId": -1, "rackId": None},
                "assignment": {"version": 3, "userData": None,
                               "assignedPartitions": [{"topic": topic, "partitions": [0]}]}}]})]
    elif kind == "consumer":
        records = rng.choice((
            [LogRec(5, {"groupId": gid, "memberId": mid}, 0, consumer_member_value(topic)),
             LogRec(3, {"groupId": gid}, 0, {"epoch": epoch})],
            [LogRec(8, {"groupId": gid, "memberId": mid}, 0, {
                "memberEpoch": epoch, "previousMemberEpoch": epoch - 1, "state": 0,
                "assignedPartitions": [{"topicId": tid, "partitions": [0]}],
                "partitionsPendingRevocation": []})]))
    elif kind == "share":
        records = [LogRec(10, {"groupId": gid, "memberId": mid}, 0, {
                       "rackId": None, "clientId": "share", "clientHost": "/10.0.0.9",
                       "subscribedTopicNames": [topic]}),
                   LogRec(11, {"groupId": gid}, 0, {"epoch": epoch, "metadataHash": 0})]
    else:
        records = [LogRec(19, {"groupId": gid, "memberId": mid}, 0, {
                       "instanceId": None, "rackId": None, "clientId": "streams",
                       "clientHost": "/10.0.0.9", "rebalanceTimeoutMs": 300_000,
                       "topologyEpoch": 0, "processId": mid, "userEndpoint": None,
                       "clientTags": []}),
                   LogRec(17, {"groupId": gid}, 0, {"epoch": epoch, "metadataHash": 0})]
    return records, "foreign_group_type"


def consumer_member_value(topic: str) -> dict:
    return {"instanceId": None, "rackId": None, "clientId": "consumer",
            "clientHost": "/10.0.0.9", "subscribedTopicNames": [topic],
            "subscribedTopicRegex": None, "rebalanceTimeoutMs": 300_000,
            "serverAssignor": "uniform", "classicMemberMetadata": None}


def phantom_tombstones(ctx: GroupCtx, kind: str) -> tuple[list[LogRec], str]:
    """Tombstones for a member or a whole group that the log never held."""
    gid, rng = ctx.group_id, ctx.rng
    ghost = member_id(rng, "ghost")
    member_types = {"consumer": (8, 7, 5), "share": (14, 13, 10), "streams": (22, 21, 19)}
    group_types = {"consumer": (6, 4, 3), "share": (12, 15, 11), "streams": (20, 17, 23),
                   "classic": (2,), "simple": (2,)}
    choice = rng.random()
    if kind in member_types and choice < 0.5:
        records = [LogRec(t, {"groupId": gid, "memberId": ghost}) for t in member_types[kind]]
    elif choice < 0.8:
        types = group_types.get(kind) or group_types[rng.choice(("consumer", "share", "streams"))]
        records = [LogRec(t, {"group": gid} if t == 2 else {"groupId": gid}) for t in types]
    else:
        topic = rng.choice(sorted(ctx.cluster.topics))
        records = [LogRec(1, {"group": gid, "topic": topic, "partition": 97})]
    return records, "phantom_tombstone"


def unknown_type_records(ctx: GroupCtx) -> tuple[list[LogRec], str]:
    rng, gid = ctx.rng, ctx.group_id
    rt = FUTURE_TYPES[rng.choice(sorted(FUTURE_TYPES))]
    key = {"groupId": gid}
    if len(rt.key.fields) == 2:
        key["memberId"] = member_id(rng)
    value = {f.json_name: _sample_field(f.type, rng) for f in rt.value.fields}
    records = [LogRec(rt.record_type, key, 0, value)]
    if rng.random() < 0.3:
        records.append(LogRec(rt.record_type, key))          # and its tombstone
    return records, "unknown_type"


def _sample_field(kind: str, rng: Random):
    return {"int8": 1, "int32": rng.randint(0, 40), "int64": rng.randint(0, 2**40),
            "[]string": ["t0"], "[]int32": [0, 1]}[kind]


def unknown_version_records(ctx: GroupCtx, kind: str) -> tuple[list[LogRec], str]:
    """A value version above every release's, laid out as the newest known version."""
    gid, rng = ctx.group_id, ctx.rng
    topic = rng.choice(sorted(ctx.cluster.topics))
    offset_value = {"offset": rng.randint(0, 10_000), "leaderEpoch": -1, "metadata": "",
                    "commitTimestamp": ctx.now_ms, "topicId": ctx.cluster.topic_id(topic)}
    choice = rng.random()
    if kind in ("classic", "simple") and choice < 0.4:
        return [LogRec(2, {"group": gid}, 5, {
            "protocolType": "", "generation": 0, "protocol": None, "leader": None,
            "currentStateTimestamp": ctx.now_ms, "members": []})], "unknown_version"
    if kind == "consumer" and choice < 0.4:
        return [LogRec(3, {"groupId": gid}, 1, {"epoch": rng.randint(1, 9)})], "unknown_version"
    if choice < 0.55:   # type 0 written with type 1's v3 layout (readable before 4.1 only)
        return [LogRec(0, {"group": gid, "topic": topic, "partition": 0}, 3, {
            **offset_value, "leaderEpoch": 0})], "unknown_version"
    return [LogRec(1, {"group": gid, "topic": topic, "partition": 0}, 5, offset_value)], \
        "unknown_version"


def with_unknown_tags(rec: LogRec, rng: Random) -> LogRec | None:
    """The record with a tagged field this codebase does not know (a later release's), where
    its version is flexible; None where it cannot carry tags."""
    if rec.value is None or (rec.record_type in (1, 2) and rec.value_version < 4):
        return None
    if rec.record_type in (0,) or (rec.layout or "").startswith("historical"):
        return None
    payload = rng.randint(1, 2**40).to_bytes(8, "big")      # e.g. KIP-1282's CreationTimeMs
    path = ""
    if rec.record_type == 8 and rec.value.get("assignedPartitions"):
        path = "assignedPartitions[0]"
    # Tag 1 on type 3 is KIP-1282's CreationTimeMs; 5 and 9 are free on every other type.
    tag = 1 if rec.record_type == 3 else rng.choice((5, 9))
    return LogRec(rec.record_type, rec.key, rec.value_version, rec.value, rec.layout,
                  {path: {tag: payload}})

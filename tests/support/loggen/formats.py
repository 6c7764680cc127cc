"""How a record the scenario builder writes (a 4.x coordinator's) looks when an older or newer
release wrote it: :func:`as_written` rewrites types 0-8 for the era of the write.

* offsets: type 0 v0 (0.8.2), v1 with expireTimestamp (0.9-2.0), v3, v4 with topicId (4.1+);
* classic groups: GroupMetadataValue v0-v3 and consumer-protocol blobs of the client's time;
* consumer groups: the 3.7 value layouts of 4/5/7/8, MetadataHash on type 3 from 4.1,
  AssignmentTimestamp on type 6 from 4.3 (AssignmentEpochs on type 8 are the scenario's switch).
"""

from __future__ import annotations

import hashlib
from random import Random

from support.loggen import eras
from support.loggen.eras import Era
from support.loggen.records import LogRec, log_rec
from support.scenarios.records import Rec

RETENTION_MS = 7 * 24 * 3_600_000


def as_written(rec: Rec, era: Era, rng: Random, now_ms: int) -> LogRec:
    rewrite = _REWRITES.get(rec.record_type)
    if rec.value is None or rewrite is None:
        return log_rec(rec)
    return rewrite(rec, era, rng, now_ms)


def metadata_hash(topics) -> int:
    """A stable stand-in for KIP-1101's hash of the subscribed topics' metadata (0: none)."""
    names = ",".join(sorted(topics))
    if not names:
        return 0
    return int.from_bytes(hashlib.blake2b(names.encode(), digest_size=8).digest(), "big",
                          signed=True)


def _offset_commit(rec, era, rng, now_ms) -> LogRec:
    record_type, version = eras.offset_commit_format(era, rng)
    value = dict(rec.value)
    if version == 1:
        value["expireTimestamp"] = value["commitTimestamp"] + RETENTION_MS
    return log_rec(rec, record_type=record_type, value_version=version, value=value)


def _group_metadata(rec, era, rng, now_ms) -> LogRec:
    value = rec.value
    if value.get("protocolType") == "consumer":
        blob = eras.blob_version(era)
        value = {**value, "members": [
            {**m, **{kind: _with_version(m[kind], blob) for kind in ("subscription", "assignment")
                     if isinstance(m.get(kind), dict)}} for m in value["members"]]}
    return log_rec(rec, value_version=eras.group_metadata_version(era), value=value)


def _with_version(blob: dict, version: int) -> dict:
    return {**blob, "version": min(blob["version"], version)}


def _target_metadata(rec, era, rng, now_ms) -> LogRec:
    if not eras.has_assignment_timestamp(era):
        return log_rec(rec)
    return log_rec(rec, value={**rec.value, "assignmentTimestamp": now_ms})


def _member_370(rec, era, rng, now_ms) -> LogRec:
    if eras.consumer_layout(era) is None:
        return log_rec(rec)
    value = {k: v for k, v in rec.value.items() if k != "classicMemberMetadata"}
    value["assignors"] = []
    return log_rec(rec, value=value, layout=eras.HISTORICAL_370)


def _target_member_370(rec, era, rng, now_ms) -> LogRec:
    if eras.consumer_layout(era) is None:
        return log_rec(rec)
    return log_rec(rec, layout=eras.HISTORICAL_370, value={
        "error": 0, "topicPartitions": rec.value["topicPartitions"], "metadataVersion": 0,
        "metadataBytes": b""})


def _current_370(rec, era, rng, now_ms) -> LogRec:
    if eras.consumer_layout(era) is None:
        return log_rec(rec)
    v = rec.value
    strip = [[{"topicId": tp["topicId"], "partitions": tp["partitions"]} for tp in v[name]]
             for name in ("assignedPartitions", "partitionsPendingRevocation")]
    return log_rec(rec, layout=eras.HISTORICAL_370, value={
        "memberEpoch": v["memberEpoch"], "previousMemberEpoch": v["previousMemberEpoch"],
        "targetMemberEpoch": v["memberEpoch"], "assignedPartitions": strip[0],
        "partitionsPendingRevocation": strip[1], "partitionsPendingAssignment": [],
        "error": 0, "metadataVersion": 0, "metadataBytes": b""})


_REWRITES = {1: _offset_commit, 2: _group_metadata, 5: _member_370,
             6: _target_metadata, 7: _target_member_370, 8: _current_370}


def partition_metadata(group_id: str, topics: dict[str, int], topic_id, era: Era,
                       group_epoch: int, rng: Random) -> LogRec:
    """Type 4 (3.7-4.0): the subscribed topics' metadata; racks only sometimes known."""
    racks = rng.random() < 0.3
    entries = [{"topicId": topic_id(name), "topicName": name, "numPartitions": count,
                "partitionMetadata": [{"partition": p, "racks": [f"rack-{p % 3}"] if racks else []}
                                      for p in range(count)]}
               for name, count in sorted(topics.items())]
    if eras.consumer_layout(era) is None:
        return LogRec(4, {"groupId": group_id}, 0, {"topics": entries})
    return LogRec(4, {"groupId": group_id}, 0, {"epoch": group_epoch, "topics": entries},
                  layout=eras.HISTORICAL_370)

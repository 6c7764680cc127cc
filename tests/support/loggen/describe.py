"""One line per record, for saved regression cases and failure messages.

Example::

    == __consumer_offsets-17  segments 0, 31
         0  t2  GroupMetadata          app-orders-3              v3 'consumer' gen=1 proto=range ...
         1  t1  OffsetCommit           app-orders-3 orders:0     v3 offset=381 leaderEpoch=0
         4  t8  CurrentMemberAssign..  shop-9/c2-00af            v0 {3.7.0} epoch=5/4 assigned=[orders:0@5]
        12  [txn 1033/2]  t1 ...
        13  COMMIT producer 1033/2
"""

from __future__ import annotations

import uuid

from decoders.records_catalog import RECORD_TYPES
from support.loggen.records import FUTURE_TYPES
from support.scenarios.base import default_topic_id

TOPIC_NAMES = ("orders", "orders-dlq", "payments", "clicks", "audit-log", "inventory",
               "shipments", "users")
_TOPICS = {default_topic_id(name): name for name in TOPIC_NAMES}


def describe(log) -> str:
    lines = [f"# loggen seed={log.seed} records={log.record_count} "
             f"shapes={','.join(sorted(log.shapes())) or '-'}"]
    for p in sorted(log.partitions):
        passes = "; ".join(f"E={c.cleanable_end} end={c.log_end} horizon={c.delete_horizon}"
                           for c in log.cleanings.get(p, []))
        bases = ", ".join(str(base) for base, _ in log.segments(p))
        lines.append(f"== __consumer_offsets-{p}  segments {bases}"
                     + (f"  cleaned: {passes}" if passes else ""))
        for batch in log.partitions[p]:
            lines += _batch_lines(batch)
    return "\n".join(lines)


def _batch_lines(batch) -> list[str]:
    who = f"{batch.producer_id}/{batch.producer_epoch}"
    if batch.control_type is not None:
        return [f"{batch.base_offset:>6}  {batch.control_type} producer {who}"]
    prefix = f"[txn {who}]  " if batch.is_transactional else ""
    if not batch.records:
        return [f"{batch.base_offset:>6}  {prefix}(empty batch up to {batch.end_offset - 1})"]
    return [f"{offset:>6}  {prefix}{record_line(rec)}" for offset, rec in batch.records]


def record_line(rec) -> str:
    rt = RECORD_TYPES.get(rec.record_type) or FUTURE_TYPES.get(rec.record_type)
    name = rt.name if rt else "?"
    name = name if len(name) <= 22 else name[:20] + ".."
    head = f"t{rec.record_type:<2} {name:<22} {_key(rec.key):<28}"
    if rec.value is None:
        return f"{head} <tombstone>"
    layout = f" {{{rec.layout.split('/')[-1]}}}" if rec.layout else ""
    tags = f" +tags{sorted(t for ts in rec.unknown_tags.values() for t in ts)}" \
        if rec.unknown_tags else ""
    return f"{head} v{rec.value_version}{layout}{tags} {summary(rec.record_type, rec.value)}"


def _key(key: dict) -> str:
    group = key.get("group", key.get("groupId", "?"))
    if "topic" in key:
        return f"{group} {key['topic']}:{key['partition']}"
    if "memberId" in key:
        return f"{group}/{key['memberId']}"
    if "regularExpression" in key:
        return f"{group} /{key['regularExpression']}/"
    return group


def _name(value) -> str:
    if isinstance(value, uuid.UUID):
        return _TOPICS.get(value, value.hex[:8])
    return str(value)


def _partitions(entries, unit: str = "topicId", parts: str = "partitions") -> str:
    out = []
    for e in entries or ():
        epochs = e.get("assignmentEpochs") or []
        ps = [f"{p}@{epochs[i]}" if i < len(epochs) else str(p)
              for i, p in enumerate(e.get(parts) or [])]
        out.append(f"{_name(e.get(unit, e.get('topic', e.get('topicName'))))}:{','.join(ps)}")
    return "[" + " ".join(out) + "]"


def summary(record_type: int, v: dict) -> str:
    if record_type in (0, 1):
        return f"offset={v.get('offset')} leaderEpoch={v.get('leaderEpoch', '-')}"
    if record_type == 2:
        members = [m.get("memberId") for m in v.get("members") or ()]
        return (f"{v.get('protocolType')!r} gen={v.get('generation')} proto={v.get('protocol')} "
                f"leader={v.get('leader')} members={members}")
    if record_type in (8, 14, 22):
        assigned = v.get("assignedPartitions", v.get("activeTasks"))
        pending = v.get("partitionsPendingRevocation", v.get("activeTasksPendingRevocation"))
        unit = "subtopologyId" if record_type == 22 else "topicId"
        return (f"epoch={v.get('memberEpoch')}/{v.get('previousMemberEpoch')} "
                f"state={v.get('state', '-')} assigned={_partitions(assigned, unit)}"
                + (f" pending={_partitions(pending, unit)}" if pending else ""))
    if record_type in (7, 13):
        return f"target={_partitions(v.get('topicPartitions'))}"
    if record_type == 21:
        return f"target={_partitions(v.get('activeTasks'), 'subtopologyId')}"
    if record_type in (5, 10, 19):
        return " ".join(f"{k}={_name(v[k])}" for k in (
            "subscribedTopicNames", "subscribedTopicRegex", "instanceId", "processId")
            if v.get(k)) + (" classic" if v.get("classicMemberMetadata") else "")
    if record_type == 15:
        return " ".join(f"{name}=[{' '.join(str(t.get('topicName')) for t in v.get(name) or ())}]"
                        for name in ("initializingTopics", "initializedTopics", "deletingTopics")
                        if name in v)
    if record_type == 24:
        return f"assignmentEpoch={v.get('assignmentEpoch')} subtopologies=" + str(
            [r.get("subtopologyId") for r in v.get("resolvedTopicIdsBySubtopology") or ()])
    if record_type == 23:
        return f"epoch={v.get('epoch')} subtopologies=[" + " ".join(
            f"{s.get('subtopologyId')}:{','.join(s.get('sourceTopics') or [])}"
            for s in v.get("subtopologies") or ()) + "]"
    if record_type in (4, 9, 18):
        return "topics=[" + " ".join(f"{t.get('topicName')}({t.get('numPartitions')})"
                                     for t in v.get("topics") or ()) + "]"
    return " ".join(f"{k}={_name(x)}" for k, x in v.items()
                    if isinstance(x, (int, str, uuid.UUID)) or (isinstance(x, list) and len(x) < 4))

"""The fast path of ``offsetlake dump``: offset commits rendered straight from columnar decode.

About 95% of a real ``__consumer_offsets`` is offset commits. A chunk of batches is decoded at
once by :func:`decoders.columnar.decode_offset_commits`; each row it handles is written as text
in the exact shape :mod:`decoders.kafka_json` gives it (fields in schema order: ``offset``,
``leaderEpoch`` from v3, ``metadata``, ``commitTimestamp``, ``expireTimestamp`` in v1 only, the
tagged ``topicId`` in v4 only when not all zero), strings escaped by orjson exactly as
``json.dumps(..., ensure_ascii=False)`` does. Every other row is described and rendered by the
generic path, so the output is byte for byte the same (``tests/test_dump.py`` checks both).
"""

from __future__ import annotations

import base64

import orjson
import pyarrow as pa

from decoders.columnar import decode_offset_commits
from decoders.kafka_json import dumps

CHUNK_RECORDS = 4096
_ZERO_ID = bytes(16)
_KEYS: dict[bytes, str] = {}  # a key's bytes decide its text (given it decoded on the fast path)


def _text(value) -> str:
    return orjson.dumps(value).decode()


class _Memo(dict):
    """Rendered text per input (group/topic/metadata strings, topic ids, whole keys repeat)."""

    def __init__(self, render, limit: int = 1 << 18):
        super().__init__()
        self.render, self.limit = render, limit

    def __missing__(self, item):
        text = self.render(item)
        if len(self) < self.limit:
            self[item] = text
        return text


_STRINGS = _Memo(_text)
_TOPIC_IDS = _Memo(lambda b: '"' + base64.urlsafe_b64encode(b).rstrip(b"=").decode() + '"')


def _value_text(version: int, offset: int, epoch: int, metadata: str, commit_ts: int,
                expire_ts: int, topic_id: bytes) -> str:
    if version >= 3:
        data = (f'"offset":{offset},"leaderEpoch":{epoch},"metadata":{_STRINGS[metadata]},'
                f'"commitTimestamp":{commit_ts}')
        if version >= 4 and topic_id != _ZERO_ID:
            data += ',"topicId":' + _TOPIC_IDS[topic_id]
    else:
        data = f'"offset":{offset},"metadata":{_STRINGS[metadata]},"commitTimestamp":{commit_ts}'
        if version == 1:
            data += f',"expireTimestamp":{expire_ts}'
    return f'{{"version":{version},"data":{{{data}}}}}'


def _columns(chunk) -> dict:
    keys, values = [], []
    for _, batch in chunk:
        for record in batch.records:
            keys.append(record.key)
            values.append(record.value)
    cols = decode_offset_commits(pa.array(keys, pa.binary()), pa.array(values, pa.binary()))
    out = {name: getattr(cols, name).tolist() for name in (
        "handled", "record_type", "partition", "is_tombstone", "value_version", "offset",
        "leader_epoch", "commit_timestamp", "expire_timestamp")}
    out["group"], out["topic"] = cols.group.to_pylist(), cols.topic.to_pylist()
    out["metadata"] = cols.metadata.to_pylist()
    ids = cols.topic_id.tobytes()
    out["topic_id"] = [ids[k:k + 16] for k in range(0, len(ids), 16)]
    return out


def fast_lines(chunk, groups, types, describe_record):
    """JSON lines for the records of ``chunk`` (``(segment, data batch)`` pairs), in order,
    after the --group/--type filters; ``describe_record`` is the generic path."""
    from decoders.dump import _batch_json

    if not chunk:
        return
    c = _columns(chunk)
    handled, record_types, group_ids = c["handled"], c["record_type"], c["group"]
    unfiltered = not types and not groups
    i = 0
    for seg, batch in chunk:
        head = (f'{{"partition":{_text(seg.partition)},"offset":',
                f',"timestampType":{_text(batch.timestamp_type)},'
                f'"batch":{dumps(_batch_json(batch))},')
        for record in batch.records:
            if handled[i] and record.key is not None:
                if unfiltered or ((not types or record_types[i] in types)
                                  and (not groups or group_ids[i] in groups)):
                    yield _fast_line(head, record, c, i)
            else:
                yield from _generic_line(seg, batch, record, groups, types, describe_record)
            i += 1


def _fast_line(head: tuple[str, str], record, c: dict, i: int) -> str:
    key = _KEYS.get(record.key)
    if key is None:
        key = (f'"key":{{"type":{c["record_type"][i]},"data":{{"group":{_STRINGS[c["group"][i]]},'
               f'"topic":{_STRINGS[c["topic"][i]]},"partition":{c["partition"][i]}}}}}')
        if len(_KEYS) < 1 << 20:
            _KEYS[record.key] = key
    if c["is_tombstone"][i]:
        value = "null"
    else:
        value = _value_text(c["value_version"][i], c["offset"][i], c["leader_epoch"][i],
                            c["metadata"][i], c["commit_timestamp"][i], c["expire_timestamp"][i],
                            c["topic_id"][i])
    return (f'{head[0]}{record.offset},"timestamp":{record.timestamp}{head[1]}'
            f'{key},"value":{value}}}')


def _generic_line(seg, batch, record, groups, types, describe_record):
    from decoders.dump import _batch_json

    obj = {"partition": seg.partition, "offset": record.offset, "timestamp": record.timestamp,
           "timestampType": batch.timestamp_type, "batch": _batch_json(batch)}
    body, record_type, group = describe_record(record)
    if types and record_type not in types:
        return
    if groups and group not in groups:
        return
    obj.update(body)
    yield dumps(obj)

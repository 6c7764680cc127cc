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
from decoders.kafka_json import batch_json, dumps

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
    for name in ("group", "topic", "metadata"):  # through numpy: to_pylist is 20x slower
        out[name] = getattr(cols, name).to_numpy(zero_copy_only=False).tolist()
    ids = cols.topic_id.tobytes()
    out["topic_id"] = [ids[k:k + 16] for k in range(0, len(ids), 16)]
    return out


def fast_lines(chunk, groups, types, describe_record):
    """JSON lines for the records of ``chunk`` (``(segment, data batch)`` pairs), in order,
    after the --group/--type filters; ``describe_record`` is the generic path."""

    if not chunk:
        return
    c = _columns(chunk)
    rows = zip(c["handled"], c["record_type"], c["group"], c["topic"], c["partition"],
               c["is_tombstone"], c["value_version"], c["offset"], c["leader_epoch"], c["metadata"],
               c["commit_timestamp"], c["expire_timestamp"], c["topic_id"])
    unfiltered = not types and not groups
    keys, strings = _KEYS, _STRINGS
    for seg, batch in chunk:
        head = f'{{"partition":{_text(seg.partition)},"offset":'
        tail = (f',"timestampType":{_text(batch.timestamp_type)},'
                f'"batch":{dumps(batch_json(batch))},')
        for record in batch.records:
            (handled, record_type, group, topic, partition, tombstone, version, offset, epoch,
             metadata, commit_ts, expire_ts, topic_id) = next(rows)
            if not handled or record.key is None:
                yield from _generic_line(seg, batch, record, groups, types, describe_record)
                continue
            if not unfiltered and ((types and record_type not in types)
                                   or (groups and group not in groups)):
                continue
            key = keys.get(record.key)
            if key is None:
                key = (f'"key":{{"type":{record_type},"data":{{"group":{strings[group]},'
                       f'"topic":{strings[topic]},"partition":{partition}}}}}')
                if len(keys) < 1 << 20:
                    keys[record.key] = key
            value = "null" if tombstone else _value_text(version, offset, epoch, metadata,
                                                         commit_ts, expire_ts, topic_id)
            yield f'{head}{record.offset},"timestamp":{record.timestamp}{tail}{key},"value":{value}}}'


def _generic_line(seg, batch, record, groups, types, describe_record):

    obj = {"partition": seg.partition, "offset": record.offset, "timestamp": record.timestamp,
           "timestampType": batch.timestamp_type, "batch": batch_json(batch)}
    body, record_type, group = describe_record(record)
    if types and record_type not in types:
        return
    if groups and group not in groups:
        return
    obj.update(body)
    yield dumps(obj)

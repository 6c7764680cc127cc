"""The dump fast path (columnar offset commits, orjson strings) prints what the generic path does."""

from __future__ import annotations

import uuid

import pytest

from decoders.codec import encode_key, encode_value
from decoders.dump import dump_lines, dump_objects
from decoders.kafka_json import dumps
from decoders.log.writer import encode_batch, encode_control_batch, write_segment

TRICKY = ["", "plain", 'q"uote\\back', "tab\tnl\ncr\r\x00\x1f\x7f", "ünï©ødé ✓ \u2028\u2029 😀"]


def _commit(group, topic, partition, version, offset, metadata, topic_id=None):
    key = encode_key(1, {"group": group, "topic": topic, "partition": partition})
    value = {"offset": offset, "leaderEpoch": 3, "metadata": metadata,
             "commitTimestamp": 1_700_000_000_000 + offset, "expireTimestamp": 42}
    if version >= 4:
        value["topicId"] = topic_id or uuid.UUID(int=0)
    return key, encode_value(1, version, value)


def _segment(tmp_path):
    records, ts = [], 1_700_000_000_000
    for version in range(5):
        for i, text in enumerate(TRICKY):
            tid = uuid.UUID(int=i * 7919) if i % 2 else None
            records.append((*_commit(f"g{text}", f"t{i}", i, version, i * 100, text, tid), ts))
    records.append((encode_key(1, {"group": "g", "topic": "t0", "partition": 0}), None, ts))
    records.append((encode_key(0, {"group": "legacy", "topic": "t", "partition": 1}),
                    encode_value(0, 0, {"offset": 5, "metadata": "m", "commitTimestamp": 9}), ts))
    key, value = _commit("bad", "t", 0, 3, 1, "x")
    records.append((key, value + b"\x00", ts))  # trailing byte: the generic path reports it
    records.append((encode_key(3, {"groupId": "g"}), encode_value(3, 0, {"epoch": 4}), ts))
    batches = [encode_batch(records[:13], base_offset=0, compression="lz4"),
               encode_batch(records[13:], base_offset=13),
               encode_control_batch(1, 0, offset=len(records), producer_id=5, producer_epoch=0,
                                    timestamp=ts)]
    directory = tmp_path / "__consumer_offsets-4"
    directory.mkdir()
    write_segment(directory / "00000000000000000000.log", batches)
    with open(directory / "00000000000000000000.log", "ab") as f:
        f.write(b"\x00" * 20)  # a truncated tail
    return str(tmp_path)


@pytest.mark.parametrize("groups,types", [(None, None), ({"gplain", "legacy"}, None),
                                          (None, {0}), ({"g"}, {1, 3})])
def test_fast_lines_equal_generic_rendering(tmp_path, groups, types):
    root = _segment(tmp_path)
    expected = [dumps(obj) for obj in dump_objects([root], groups, types)]
    assert list(dump_lines([root], groups, types)) == expected
    if not groups and not types:  # every commit version, the tail and the marker were printed
        assert len(expected) == 31 and sum('"topicId"' in line for line in expected) == 2

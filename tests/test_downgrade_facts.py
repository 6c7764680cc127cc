"""Record facts by column (:func:`jobs.audits.downgrade_facts.facts_from_arrow`) against the
record-by-record definition (:func:`record_facts`, :func:`marker_facts`), on a batch that mixes
a real scenario's log with every kind of offset commit the columnar decoder does and does not
read exactly."""

from __future__ import annotations

import struct
import uuid

import numpy as np
import pyarrow as pa

from decoders.codec import encode_key, encode_value
from decoders.log.segment import iter_partition_dir
from decoders.log.types import RecordBatch
from jobs.audits.downgrade_facts import (KEPT_FIELDS, facts_from_arrow, facts_from_kept,
                                         facts_from_table, marker_facts, record_facts)
from jobs.stages.decode import FACTS, decode_rows
from support.scenarios import Scenario

COMMIT_KEY = encode_key(1, {"group": "g", "topic": "foo", "partition": 0})
V4 = encode_value(1, 4, {"offset": 5, "leaderEpoch": 1, "metadata": "m", "commitTimestamp": 9})
V4_ID = encode_value(1, 4, {"offset": 5, "leaderEpoch": 1, "metadata": "m", "commitTimestamp": 9,
                            "topicId": uuid.UUID(int=7)})


def odd_commits() -> list[tuple[bytes | None, bytes | None]]:
    """Offset commits of every version, and the rows the columnar decoder leaves alone."""
    rows = [(encode_key(1, {"group": "g", "topic": "foo", "partition": p}),
             encode_value(1, v, {"offset": p, "metadata": "", "commitTimestamp": 1,
                                 "expireTimestamp": 2, "leaderEpoch": 3}))
            for p, v in enumerate(range(5))]
    rows += [
        (encode_key(0, {"group": "g", "topic": "foo", "partition": 0}),
         encode_value(0, 0, {"offset": 1, "metadata": "", "commitTimestamp": 1})),
        (COMMIT_KEY, None), (encode_key(0, {"group": "g", "topic": "foo", "partition": 0}), None),
        (COMMIT_KEY, V4_ID),
        (COMMIT_KEY, V4[:-1] + b"\x01\x00\x10" + bytes(16)),   # topicId tag at its default
        (COMMIT_KEY, V4[:-1] + b"\x01\x05\x01\x2a"),           # a tag no schema knows
        (COMMIT_KEY, V4 + b"\x00"),                             # trailing bytes
        (COMMIT_KEY, V4[:-3]),                                  # truncated
        (COMMIT_KEY, struct.pack(">h", 5) + V4[2:]),            # a version no codec writes
        (encode_key(1, {"group": "g", "topic": "foo", "partition": 0})[:-2], V4),
        (b"\x00\x01\x00\x02\xff\xfe\x00\x03foo\x00\x00\x00\x00", V4),   # group not UTF-8
        (struct.pack(">h", 99) + b"\x00\x01g", b"\x00\x00"),    # an unknown record type
        (b"\x00", None),                                        # shorter than a type
    ]
    return rows


def test_facts_by_column_are_the_facts_of_each_record(tmp_path):
    s = (Scenario("cg", partition=0)
         .consumer_join("A", ["foo"]).compute_target({"A": {"foo": [0, 1]}}).converge("A")
         .offset_commit({"foo": {0: 10, 1: 11}})
         .transactional_commit(7, {"foo": {0: 12}}))
    s.write(tmp_path)
    rows = []
    for _, item in iter_partition_dir(tmp_path / "__consumer_offsets-0", 0):
        if isinstance(item, RecordBatch):
            for r in item.records:
                control = {0: "ABORT", 1: "COMMIT"}.get(r.control_type) if item.is_control else None
                rows.append((r.key, r.value, item.producer_id, item.is_control, control))
    rows += [(k, v, None if i % 3 else 11, False, None) for i, (k, v) in enumerate(odd_commits())]
    rows += [(b"\x00\x00\x00\x05", b"", 12, True, "UNKNOWN"), (b"\x00\x00\x00\x01", b"", 11, True,
                                                                  "COMMIT")]
    batch = pa.RecordBatch.from_pydict({
        "partition": pa.array([4] * len(rows), pa.int32()),
        "offset": pa.array(range(100, 100 + len(rows)), pa.int64()),
        "key": pa.array([r[0] for r in rows], pa.binary()),
        "value": pa.array([r[1] for r in rows], pa.binary()),
        "producer_id": pa.array([r[2] for r in rows], pa.int64()),
        "is_control": pa.array([r[3] for r in rows]),
        "control_type": pa.array([r[4] for r in rows], pa.string())})
    expected = []
    for offset, (key, value, producer, control, ctype) in enumerate(rows, start=100):
        if not control:
            expected.append(record_facts(4, offset, key, value, producer))
        elif ctype in ("COMMIT", "ABORT"):
            expected.append(marker_facts(4, offset, producer, ctype))
    got = list(facts_from_table(facts_from_arrow(batch)))
    assert got == expected
    # and from what the decode stage kept of each record, with nothing decoded again
    assert list(facts_from_table(facts_from_kept(kept_batch(batch)))) == expected
    # the batch did take both roads: commits by column, and each odd row alone
    assert sum(f.record_type == 1 and f.decode_error is None for f in got) > 8
    assert {f.decode_error for f in got} > {None}
    assert {("topicId",), ()} <= {f.tagged_fields for f in got if f.record_type == 1}
    assert any(f.tagged_fields and f.tagged_fields[0].startswith("?") for f in got)


def test_facts_of_an_empty_batch_and_of_markers_alone():
    empty = pa.RecordBatch.from_pydict({
        "partition": pa.array([], pa.int32()), "offset": pa.array([], pa.int64()),
        "key": pa.array([], pa.binary()), "value": pa.array([], pa.binary()),
        "producer_id": pa.array([], pa.int64()), "is_control": pa.array([], pa.bool_()),
        "control_type": pa.array([], pa.string())})
    assert facts_from_arrow(empty).num_rows == 0
    assert facts_from_kept(kept_batch(empty)).num_rows == 0
    markers = pa.RecordBatch.from_pydict({
        "partition": pa.array([1, 1], pa.int32()), "offset": pa.array([3, 4], pa.int64()),
        "key": pa.array([b"\x00\x00\x00\x00", b"\x00\x00\x00\x01"], pa.binary()),
        "value": pa.array([b"", b""], pa.binary()), "producer_id": pa.array([9, 9], pa.int64()),
        "is_control": pa.array([True, True]), "control_type": pa.array(["ABORT", "COMMIT"])})
    assert list(facts_from_table(facts_from_arrow(markers))) == [
        marker_facts(1, 3, 9, "ABORT"), marker_facts(1, 4, 9, "COMMIT")]
    assert list(facts_from_table(facts_from_kept(kept_batch(markers)))) == [
        marker_facts(1, 3, 9, "ABORT"), marker_facts(1, 4, 9, "COMMIT")]


def kept_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Raw rows with the facts the decode stage keeps of each data record (``record_facts``'s
    columns, null on control rows), as the downgrade stage joins them."""
    data = ~np.asarray(batch.column("is_control"), bool)
    decoded = decode_rows(batch, data)
    facts = decoded.column(FACTS)
    return pa.RecordBatch.from_arrays(
        batch.columns + [facts.field(name) for name in KEPT_FIELDS],
        names=batch.schema.names + list(KEPT_FIELDS))

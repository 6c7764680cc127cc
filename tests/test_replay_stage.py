"""The executors' group replay (:func:`jobs.stages.replay.replay_sorted_groups`): a task's
events arrive sorted by group in batches cut anywhere, and every group must come out exactly as
replaying it alone (:func:`replay_group_arrow`, what the driver does for a small snapshot)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobs.stages.decode import DECODED_RECORD, decode_rows
from jobs.stages.ingest import plan_tasks
from jobs.stages.grouping import OUTPUT_ROWS
from jobs.stages.replay import WIDE_SCHEMA, replay_group_arrow, replay_sorted_groups
from jobs.stages.segment_rows import RECORD, ReadLimits, read_tasks

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "kafka-4.3.1"


@pytest.fixture(scope="module")
def events() -> pa.Table:
    """The bundled sample's membership records (types 2-24) as replay events, sorted by group."""
    tasks, _, _ = plan_tasks([str(SAMPLE)], 64 << 20)
    rows = pa.Table.from_batches([decode_rows(b) for b in read_tasks("s", tasks, ReadLimits())])
    keep = pc.and_(pc.equal(rows["row_kind"], RECORD),
                   pc.and_(pc.invert(rows["is_control"]), pc.greater(rows["record_type"], 1)))
    chosen = rows.filter(keep).filter(pc.is_null(rows.filter(keep)["error_reason"]))
    table = pa.table({
        "partition": chosen["partition"], "group_id": chosen["group_id"], "offset": chosen["offset"],
        "timestamp": chosen["timestamp"], "producer_id": chosen["producer_id"],
        "is_transactional": chosen["is_transactional"], DECODED_RECORD: chosen[DECODED_RECORD],
        "topic": pa.nulls(chosen.num_rows, pa.string()),
        "topic_id_bytes": pa.nulls(chosen.num_rows, pa.binary())})
    return table.sort_by([("partition", "ascending"), ("group_id", "ascending")])


def _rows(table: pa.Table) -> list[str]:
    return sorted(repr(sorted(row.items())) for row in table.to_pylist())


@pytest.fixture(scope="module")
def alone(events) -> list[str]:
    keys = list(zip(events["partition"].to_pylist(), events["group_id"].to_pylist()))
    groups: dict[tuple, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    assert len(groups) >= 10 and max(map(len, groups.values())) > 5
    return _rows(pa.concat_tables(replay_group_arrow(events.take(pa.array(rows)))
                                  for rows in groups.values()))


def _cut(events: pa.Table, cuts: list[int]) -> list[pa.RecordBatch]:
    bounds = sorted({0, events.num_rows, *(c % (events.num_rows + 1) for c in cuts)})
    return [b for start, end in zip(bounds, bounds[1:])
            for b in events.slice(start, end - start).to_batches()]


@settings(max_examples=40, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=40))
def test_groups_cut_across_batches_replay_as_each_group_alone(events, alone, cuts):
    out = list(replay_sorted_groups(iter(_cut(events, cuts))))
    assert all(b.schema.equals(WIDE_SCHEMA) for b in out)
    assert _rows(pa.Table.from_batches(out, WIDE_SCHEMA)) == alone


def test_one_event_per_batch_and_no_events(events, alone, monkeypatch):
    import jobs.stages.grouping as grouping
    import jobs.stages.replay as replay

    monkeypatch.setattr(grouping, "OUTPUT_ROWS", 1)   # hand on after every group
    out = list(replay.replay_sorted_groups(iter(events.to_batches(max_chunksize=1))))
    assert len(out) >= 5 and _rows(pa.Table.from_batches(out, WIDE_SCHEMA)) == alone
    assert list(replay_sorted_groups(iter([]))) == []
    assert OUTPUT_ROWS >= 1000


def test_each_group_runs_with_the_cyclic_collector_paused_and_restores_it():
    """The per-group function runs with the collector off; after each group it is as it was,
    also when the function raised, and a collector the caller had turned off stays off."""
    import gc

    from jobs.stages.grouping import each_group

    seen = []

    def fn(group: pa.Table) -> pa.Table:
        seen.append((group.column("g")[0].as_py(), gc.isenabled()))
        if group.column("g")[0].as_py() == "boom":
            raise RuntimeError("boom")
        return group

    batch = pa.record_batch({"g": ["a", "a", "b"]})
    assert gc.isenabled()
    assert pa.Table.from_batches(list(each_group([batch], ["g"], fn))).column("g").to_pylist() \
        == ["a", "a", "b"]
    assert seen == [("a", False), ("b", False)] and gc.isenabled()
    with pytest.raises(RuntimeError):
        list(each_group([pa.record_batch({"g": ["boom"]})], ["g"], fn))
    assert gc.isenabled()
    gc.disable()
    try:
        list(each_group([batch], ["g"], fn))
        assert not gc.isenabled()
    finally:
        gc.enable()

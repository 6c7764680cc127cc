"""Per-group Python over a DataFrame, without Spark's per-group hand-over.

``groupBy(...).applyInArrow`` starts one Arrow exchange per group: in a snapshot of a few thousand
groups that costs more than the groups' own work. :func:`map_groups` instead spreads the rows by
group over as many tasks as there are cores, sorts each task's rows by group and runs one
``mapInArrow`` per task, which hands each group to the function as soon as its last row has
arrived (:func:`each_group`). The function sees every group whole and alone either way.

Python's cyclic garbage collector is paused while the function runs on a group
(:func:`collector_paused`): a group's events are thousands of small objects that all live until
the group is done, and the collector, triggered every few hundred allocations, would walk them
again and again (a sixth of the fencing audit's time per group, measured on 60 groups of the
10M bench lake); what the function leaves behind is collected once it returns.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

import pyarrow as pa

OUTPUT_ROWS = 10_000   # rows a task hands Spark at a time (at least one group's)


def map_groups(df, keys: list[str], fn: Callable[[pa.Table], pa.Table], ddl: str,
               order: list[str] = ()):
    """``fn`` on each group's rows (a ``pa.Table``, sorted by ``keys`` then ``order``), the
    outputs as one DataFrame of schema ``ddl``.

    A numbered repartition is never coalesced by adaptive execution (which would otherwise put
    the few MiB of a typical snapshot's rows in one task, alone on one core)."""
    tasks = max(1, df.sparkSession.sparkContext.defaultParallelism)

    def body(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return each_group(batches, keys, fn)

    return (df.repartition(tasks, *keys).sortWithinPartitions(*keys, *order)
            .mapInArrow(body, ddl))


def map_groups_here(spark, df, keys: list[str], fn: Callable[[pa.Table], pa.Table],
                    schema: pa.Schema):
    """:func:`map_groups` in the driver, for rows the driver holds (a small snapshot): ``fn`` on
    each group's rows, collected, so no Python worker starts; ``schema`` is the output's when
    there is no group at all."""
    from jobs.stages.frames import local_frame

    table = df.toArrow()
    groups: dict[tuple, list[int]] = {}
    for i, key in enumerate(zip(*(table.column(k).to_pylist() for k in keys))):
        groups.setdefault(key, []).append(i)
    parts = []
    for rows in groups.values():
        with collector_paused():
            parts.append(fn(table.take(pa.array(rows))))
    return local_frame(spark, pa.concat_tables(parts) if parts else schema.empty_table())


def each_group(batches: Iterable[pa.RecordBatch], keys: list[str],
               fn: Callable[[pa.Table], pa.Table]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body: batches sorted by ``keys``; ``fn`` on each group's rows."""
    group: list[pa.RecordBatch] = []
    key, done, rows = None, [], 0

    def run() -> int:
        with collector_paused():
            done.append(fn(pa.Table.from_batches(group)))
        return done[-1].num_rows

    for batch in batches:
        values = list(zip(*(batch.column(k).to_pylist() for k in keys)))
        start = 0
        for i in range(1, len(values) + 1):
            if i < len(values) and values[i] == values[start]:
                continue
            if values[start] != key and group:
                rows += run()
                group = []
            key = values[start]
            group.append(batch.slice(start, i - start))
            start = i
        if rows >= OUTPUT_ROWS:
            yield from pa.concat_tables(done).to_batches()
            done, rows = [], 0
    if group:
        run()
    if done:
        yield from pa.concat_tables(done).to_batches()


@contextmanager
def collector_paused():
    """Python's cyclic garbage collector off for the block (as it was after it, an exception
    included); reference counting still frees what the block drops."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

"""``jobs.stages.frames.format_columns``: the SQL replay's messages are the pure replay's
templates filled by Spark, word for word."""

from __future__ import annotations

import pytest

from jobs.replay.messages import TX_02, TX_FLAG
from jobs.stages.frames import format_columns


def test_a_template_filled_by_spark_reads_as_python_fills_it(spark):
    from pyspark.sql import functions as F

    rows = [(7, True, "orders", 3, 120, 95), (-1, False, "a%b{}", 0, 1, 0)]
    df = spark.createDataFrame(rows, "pid bigint, txn boolean, topic string, p int, o bigint, "
                                     "at bigint")
    got = df.select(
        format_columns(TX_FLAG, producer_id=F.col("pid"),
                       is_transactional=F.when(F.col("txn"), "True").otherwise("False")).alias("a"),
        format_columns(TX_02, producer_id=F.col("pid"), topic=F.col("topic"),
                       partition=F.col("p"), pending=F.col("o"), installed=F.col("at")).alias("b"),
        format_columns("100% of {x}", x=F.col("topic")).alias("c")).collect()
    assert [(r["a"], r["b"], r["c"]) for r in got] == [
        (TX_FLAG.format(producer_id=pid, is_transactional=txn),
         TX_02.format(producer_id=pid, topic=topic, partition=p, pending=o, installed=at),
         f"100% of {topic}") for pid, txn, topic, p, o, at in rows]


def test_a_template_with_a_format_spec_is_refused(spark):
    from pyspark.sql import functions as F

    with pytest.raises(ValueError, match="only plain"):
        format_columns("{x:>5}", x=F.col("x"))


@pytest.mark.parametrize("sizes", [[0, 0, 2], [0, 0, 0, 0, 1, 0, 3], [0, 0], [], [2, 0, 0, 1]])
def test_a_local_frame_keeps_every_row_whatever_batches_are_empty(spark, sizes):
    """PySpark 4.2's createDataFrame drops every row of an Arrow table whose first two batches
    are empty; ``local_frame`` (per-group outputs concatenated in the driver) must not."""
    import pyarrow as pa

    from jobs.stages.frames import local_frame

    start = [sum(sizes[:i]) for i in range(len(sizes))]
    parts = [pa.table({"n": pa.array(range(s, s + k), pa.int64())})
             for s, k in zip(start, sizes)]
    table = pa.concat_tables(parts) if parts else pa.table({"n": pa.array([], pa.int64())})
    assert sorted(r["n"] for r in local_frame(spark, table).collect()) == list(range(sum(sizes)))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_rows_among_some_positions_are_the_semi_join_s_whatever_spans_they_cover(spark, seed):
    """``among`` (an incremental run's lookup of a few positions in the lake) filters each
    partition's span of the positions before its semi-join: the same rows as the semi-join,
    including rows inside a span that are not among them, partitions none of them is in, and
    no positions at all."""
    import random

    from jobs.stages.increment import among

    rng = random.Random(seed)
    lake = [(p, o, f"v{p}-{o}") for p in range(4) for o in range(0, 300, rng.choice([1, 2, 3]))]
    picked = rng.sample(lake, 25) + [(5, 7, "none")]   # partition 5: no lake row there
    frame = spark.createDataFrame(lake, "partition int, offset bigint, value string")
    for positions in (picked, picked[:1], []):
        keys = spark.createDataFrame([(p, o) for p, o, _ in positions],
                                     "partition int, offset bigint")
        got = sorted(tuple(r) for r in among(frame, keys, len(positions)).collect())
        want = sorted(tuple(r) for r in frame.join(keys, ["partition", "offset"], "left_semi")
                      .collect())
        assert got == want == sorted(r for r in lake if r[:2] in {x[:2] for x in positions})

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

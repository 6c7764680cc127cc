"""Spark helpers every stage shares: DataFrames over the driver's Arrow tables, schemas read back
nullable, sessions with extra settings. Per-group Python is :mod:`jobs.stages.grouping`."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa


def local_frame(spark, table: pa.Table):
    """A DataFrame over an Arrow table held by the driver (no Python worker reads it), every
    column nullable as when it is read back from Parquet.

    Empty record batches are left out first: PySpark 4.2's ``createDataFrame`` returns no row at
    all for a table whose first two batches are empty (a ``concat_tables`` of per-group outputs
    where the first groups had nothing to say)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    batches = table.to_batches()
    kept = [batch for batch in batches if batch.num_rows]
    if len(kept) != len(batches):
        table = pa.Table.from_batches(kept, schema=table.schema)
    return spark.createDataFrame(table, nullable(from_arrow_schema(table.schema)))


def nullable(schema):
    """``schema`` with every field, element and map value nullable."""
    from pyspark.sql.types import StructType

    text = schema.json()
    for flag in ("nullable", "containsNull", "valueContainsNull"):
        text = text.replace(f'"{flag}":false', f'"{flag}":true')
    return StructType.fromJson(json.loads(text))


def session_with(spark, settings: dict[str, str]):
    """A new session on ``spark``'s context with every runtime setting of ``spark`` and
    ``settings`` on top; ``spark`` is left as it is."""
    session = spark.newSession()
    for key, value in spark.conf.getAll.items():
        if key not in settings and spark.conf.isModifiable(key) and \
                session.conf.get(key, None) != value:
            session.conf.set(key, value)
    for key, value in settings.items():
        session.conf.set(key, value)
    return session


def from_arrow_type(dtype):
    from pyspark.sql.pandas.types import from_arrow_type as convert

    return convert(dtype)


def format_columns(template: str, **columns):
    """A string column: ``template`` (``str.format`` placeholders, as the pure code fills it) with
    each ``{name}`` replaced by the column ``columns[name]`` (Spark's ``format_string``)."""
    import string

    from pyspark.sql import functions as F

    text, order = [], []
    for literal, name, spec, conversion in string.Formatter().parse(template):
        text.append(literal.replace("%", "%%"))
        if name is not None:
            if spec or conversion:
                raise ValueError(f"{template!r}: only plain {{name}} placeholders")
            text.append("%s")
            order.append(columns[name])
    return F.format_string("".join(text), *order)


def hold(spark, frame, staging: Path, name: str, local: bool):
    """``frame`` computed once: held by the driver when small (``local``), else staged as
    Parquet under ``staging``; later uses read that, not the frame's plan again."""
    if local:
        return local_frame(spark, frame.toArrow())
    frame.write.mode("overwrite").parquet(str(staging / name))
    return spark.read.parquet(str(staging / name))

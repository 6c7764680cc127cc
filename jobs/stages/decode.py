"""Decode stage: ``raw_records`` → ``records`` (typed envelope + value) and decode quarantine.

One Arrow-batched adapter calls :func:`decoders.batch_decode.decode_batch` through ``mapInArrow``;
no per-field UDFs. ``records`` holds one row per data record that decoded: envelope columns in
Kafka's words, offset-commit columns typed (the 95% case), and every value as a ``VARIANT`` of
Kafka's JSON shape (``value:data.memberEpoch``). Rows that do not decode (unknown type or
version, truncation, invalid UTF-8 ...) go to ``quarantine`` with stage ``decode``, their raw
key and value, and the reason. Data rows in = records + quarantined, always.
"""

from __future__ import annotations

import pyarrow as pa

from decoders.batch_decode import OUTPUT_SCHEMA, decode_batch

ENVELOPE = ("snapshot_id", "partition", "offset", "timestamp", "timestamp_type", "producer_id",
            "producer_epoch", "is_transactional", "source_file", "file_position")
# decode_batch's offset-commit columns are renamed so they cannot be mistaken for the log position.
RENAMED = {"partition": "topic_partition", "offset": "committed_offset"}
DECODE_STAGE = "stage = 'decode'"


def _decoded_fields() -> list[pa.Field]:
    return [pa.field(RENAMED.get(f.name, f.name), f.type) for f in OUTPUT_SCHEMA]


def decode_arrow(batches, envelope_schema: pa.Schema):
    """mapInArrow body: raw rows (envelope + key + value) → envelope + decoded columns + raw."""
    for batch in batches:
        decoded = decode_batch(batch.column("key"), batch.column("value"))
        arrays = [batch.column(name) for name in envelope_schema.names]
        arrays += decoded.columns + [batch.column("key"), batch.column("value")]
        yield pa.RecordBatch.from_arrays(arrays, schema=_output_schema(envelope_schema))


def _output_schema(envelope_schema: pa.Schema) -> pa.Schema:
    return pa.schema(list(envelope_schema) + _decoded_fields()
                     + [pa.field("key", pa.binary()), pa.field("value", pa.binary())])


def decode_snapshot(raw):
    """(records, quarantine, data_rows) DataFrames for the data rows of a raw_records DataFrame."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

    data = raw.where(~F.col("is_control")).select(*ENVELOPE, "key", "value")
    envelope_schema = to_arrow_schema(data.select(*ENVELOPE).schema)
    out_schema = from_arrow_schema(_output_schema(envelope_schema))
    decoded = data.mapInArrow(lambda it: decode_arrow(it, envelope_schema), out_schema)
    return decoded


def staged_columns(decoded):
    """Decode output as staged for the later steps: raw bytes kept only where still needed
    (rows that failed, for quarantine; membership records, for the Python group replay)."""
    from pyspark.sql import functions as F

    keep = F.col("error_reason").isNotNull() | ~F.col("record_type").isin(0, 1)
    return decoded.select(*[F.when(keep, F.col(c)).alias(c) if c in ("key", "value") else F.col(c)
                            for c in decoded.columns])


def records_columns():
    """The ``records`` table's columns, in order (value as VARIANT)."""
    from pyspark.sql import functions as F

    decoded = [RENAMED.get(f.name, f.name) for f in OUTPUT_SCHEMA
               if f.name not in ("value_json", "error_reason", "error_message")]
    # try_: Spark's JSON parser refuses a string over 20,000,000 characters (a blob of ~15 MiB,
    # base64), whatever the memory; such a value is NULL here and whole in raw_records, and the
    # replay, which reads the record's bytes, is unaffected (docs/reliability.md).
    return ([F.col(c) for c in ENVELOPE] + [F.col(c) for c in decoded]
            + [F.try_parse_json("value_json").alias("value")])


def quarantine_columns(decoded):
    from pyspark.sql import functions as F

    return decoded.select(
        "snapshot_id", F.lit("decode").alias("stage"), F.col("error_reason").alias("reason"),
        F.col("error_message").alias("message"), "partition", "offset", "source_file",
        "file_position", (F.coalesce(F.length("key"), F.lit(0))
                          + F.coalesce(F.length("value"), F.lit(0))).cast("long").alias("length"),
        F.lit(None).cast("binary").alias("raw"), F.lit(False).alias("raw_truncated"),
        "key", "value")

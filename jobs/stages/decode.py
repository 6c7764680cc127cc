"""Decode stage: raw rows → ``records`` (typed envelope + value) and decode quarantine.

Decoding happens once, next to reading: :func:`decode_rows` adds the decoded columns of
:func:`decoders.batch_decode.decode_batch` to an Arrow batch of ingest rows (the bronze columns of
:mod:`jobs.stages.segment_rows`), on the executor that read them, so raw bytes cross into Python
once. No per-field UDFs. ``records`` holds one row per data record that decoded: envelope columns in
Kafka's words, offset-commit columns typed (the 95% case), and every value as a ``VARIANT`` of
Kafka's JSON shape (``value:data.memberEpoch``). Rows that do not decode (unknown type or
version, truncation, invalid UTF-8 ...) go to ``quarantine`` with stage ``decode``, their raw
key and value, and the reason. Data rows in = records + quarantined, always.
"""

from __future__ import annotations

import pickle

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from decoders.batch_decode import OUTPUT_SCHEMA, decode_batch
from jobs.audits.downgrade_facts import KEPT_SCHEMA, kept_facts
from jobs.lake.tables import RECORDS_ENVELOPE, RECORDS_NOT_KEPT, RECORDS_RENAMED

DECODE_STAGE = "stage = 'decode'"
# Spark's JSON parser refuses a string over 20,000,000 characters (Jackson's StreamReadConstraints,
# not configurable in Spark 4.2): ``records.value`` of such a record is NULL whatever is staged, so
# its JSON (a blob of about 15 MiB and up, in base64) is not carried through the stages at all.
MAX_VALUE_JSON_CHARS = 20_000_000


# Staged beside the decoded columns, for the stages after the decode, so that none decodes the
# bytes again: each membership record (types 2-24) as the decoder returned it (the group replay
# and the run's fencing audit read it), and each data record's downgrade facts (written to
# ``record_facts``, which the downgrade audit reads).
DECODED_RECORD = "decoded_record"
FACTS = "facts"
OFFSET_COMMIT_TYPES = (0, 1)


def pack_record(rec) -> bytes:
    """A decoded record as staged bytes (a pickle: staged rows live for one run, in its lake)."""
    return pickle.dumps(rec, protocol=pickle.HIGHEST_PROTOCOL)


def unpack_record(data: bytes):
    """The :class:`~decoders.codec.CoordinatorRecord` :func:`pack_record` staged."""
    return pickle.loads(data)


def decoded_fields() -> list[pa.Field]:
    return ([pa.field(RECORDS_RENAMED.get(f.name, f.name), f.type) for f in OUTPUT_SCHEMA]
            + [pa.field(DECODED_RECORD, pa.binary()), pa.field(FACTS, pa.struct(list(KEPT_SCHEMA)))])


def with_decoded_schema(rows_schema: pa.Schema) -> pa.Schema:
    return pa.schema(list(rows_schema) + decoded_fields())


def decode_rows(batch: pa.RecordBatch, data: np.ndarray | None = None) -> pa.RecordBatch:
    """``batch`` (ingest rows with ``key``/``value``) plus the decoded columns, filled on the rows
    where ``data`` is true (data records: ``row_kind = 'record'`` and not a control record, by
    default) and null elsewhere."""
    if data is None:
        data = np.asarray(pc.and_(pc.equal(batch.column("row_kind"), "record"),
                                  pc.invert(batch.column("is_control"))).fill_null(False))
    picked = np.flatnonzero(data)
    keys = batch.column("key").take(pa.array(picked))
    records, fast = [], []
    decoded = decode_batch(keys, batch.column("value").take(pa.array(picked)), records=records,
                           fast_out=fast)
    facts = kept_facts(keys, records, fast[0], decoded.column("error_reason"))
    packed = pa.array([None if r is None or r.record_type in OFFSET_COMMIT_TYPES
                       else pack_record(r) for r in records], pa.binary())
    decoded_columns = decoded.columns + [packed, pa.StructArray.from_arrays(
        [c.combine_chunks() for c in facts.columns], fields=list(KEPT_SCHEMA))]
    if len(picked) == batch.num_rows:
        columns = decoded_columns
    else:  # each decoded row back at its place, null on the other rows
        place = np.full(batch.num_rows, -1, np.int64)
        place[picked] = np.arange(len(picked))
        index = pa.array(place, mask=place < 0)
        columns = [column.take(index) for column in decoded_columns]
    json_at = OUTPUT_SCHEMA.get_field_index("value_json")
    columns[json_at] = _without_oversized_json(columns[json_at])
    return pa.RecordBatch.from_arrays(batch.columns + columns,
                                      schema=with_decoded_schema(batch.schema))


def _without_oversized_json(texts: pa.Array) -> pa.Array:
    lengths = pc.utf8_length(texts)
    oversized = pc.fill_null(pc.greater(lengths, MAX_VALUE_JSON_CHARS), False)
    if not pc.any(oversized).as_py():
        return texts
    return pc.if_else(oversized, pa.scalar(None, pa.string()), texts)


def decode_frame(rows, rows_schema: pa.Schema):
    """A DataFrame of ingest rows (``rows_schema``) with the decoded columns added, by
    ``mapInArrow`` (a capture directory's rows, which were not read by this project's reader)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    def body(batches):
        for batch in batches:
            yield decode_rows(batch)

    return rows.mapInArrow(body, from_arrow_schema(with_decoded_schema(rows_schema)))


def records_columns():
    """The ``records`` table's columns, in order (value as VARIANT)."""
    from pyspark.sql import functions as F

    decoded = [RECORDS_RENAMED.get(f.name, f.name) for f in OUTPUT_SCHEMA
               if f.name not in RECORDS_NOT_KEPT]
    # try_: a JSON string Spark's parser refuses (see MAX_VALUE_JSON_CHARS) is NULL, not an error;
    # the record's bytes are whole in raw_records, and the replay, which reads the bytes, is
    # unaffected (docs/reliability.md).
    return ([F.col(c) for c in RECORDS_ENVELOPE] + [F.col(c) for c in decoded]
            + [F.try_parse_json("value_json").alias("value")])


def record_facts_columns():
    """The ``record_facts`` table's columns, from the staged rows of data records."""
    from pyspark.sql import functions as F

    return [F.col(c) for c in ("snapshot_id", "partition", "offset")] + [
        F.col(f"{FACTS}.{name}").alias(name) for name in KEPT_SCHEMA.names]


def quarantine_columns(decoded):
    from pyspark.sql import functions as F

    return decoded.select(
        "snapshot_id", F.lit("decode").alias("stage"), F.col("error_reason").alias("reason"),
        F.col("error_message").alias("message"), "partition", "offset", "source_file",
        "file_position", (F.coalesce(F.length("key"), F.lit(0))
                          + F.coalesce(F.length("value"), F.lit(0))).cast("long").alias("length"),
        F.lit(None).cast("binary").alias("raw"), F.lit(False).alias("raw_truncated"),
        "key", "value")

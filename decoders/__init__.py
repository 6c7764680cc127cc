"""offsetlake decoders: pure-Python codecs for ``__consumer_offsets`` (no Spark, no JVM here).

Layers, each using only the ones before it:

1. :mod:`primitives` - Kafka's wire primitives (ints, varints, compact strings, uuids, tagged fields);
   :mod:`errors` - the typed errors every layer raises.
2. :mod:`schema` descriptions as data (``catalog_*``, :mod:`records_catalog`: record types 0-24, every
   version, historical layouts, embedded consumer-protocol blobs).
3. :mod:`compiler` (one straight-line reader per type and version) and :mod:`writer` (the encoder for
   tests and fixtures).
4. :mod:`codec` - the key/value envelope (:func:`decode_record`), :mod:`embedded`,
   :mod:`assignment_epochs` (KIP-1251 effective epochs).
5. Renderings: :mod:`kafka_json` / :mod:`json_text` (Kafka's JSON shape), :mod:`dump` (what
   ``offsetlake dump`` prints); the Arrow adapter Spark calls: :mod:`batch_decode` with the
   :mod:`columnar` numpy fast path for offset commits.
6. :mod:`decoders.log` - segment files: record batches of magic 0/1/2, compression, CRCs, control
   records, byte ranges (see its own layer map).
"""

from .assignment_epochs import effective_assignment_epochs
from .codec import (CoordinatorRecord, UnknownRecord, decode_record, encode_key, encode_record,
                    encode_value)
from .embedded import EmbeddedBlob
from .errors import (CompressionError, CorruptBatchError, CrcMismatchError, DecodeError,
                     InvalidLengthError, InvalidUtf8Error, TrailingBytesError, TruncatedError,
                     UnknownRecordTypeError, UnknownVersionError)
from .records_catalog import catalog_summary, record_type, record_types

__all__ = [
    "CoordinatorRecord", "UnknownRecord", "EmbeddedBlob", "decode_record", "encode_key",
    "encode_value", "encode_record", "record_types", "record_type", "catalog_summary",
    "effective_assignment_epochs", "DecodeError", "TruncatedError", "InvalidLengthError",
    "InvalidUtf8Error", "UnknownRecordTypeError", "UnknownVersionError", "TrailingBytesError",
    "CorruptBatchError", "CrcMismatchError", "CompressionError",
]

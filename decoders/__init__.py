"""offsetlake decoders: pure-Python codecs for ``__consumer_offsets`` (no Spark here).

Layers: :mod:`primitives` → :mod:`schema` descriptions (``catalog_*``) → :mod:`compiler` (reader)
/ :mod:`writer` → :mod:`codec` (key/value envelope) → :mod:`kafka_json` (Kafka's JSON shape).
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

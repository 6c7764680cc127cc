"""Counts the decoder's calls in every Python process of a test: the driver and Spark's Python
workers alike (put this directory on ``PYTHONPATH`` and name a log directory in
``OFFSETLAKE_COUNT_DECODES``; Python imports ``sitecustomize`` when it starts).

Each call appends one line per record it decoded to ``<dir>/<pid>.log``: the SHA-1 of the
record's key and value. Counted: :func:`decoders.codec.decode_record` and
``decode_record_shallow`` (both through ``codec._decode``), and the rows the columnar offset-commit
reader decoded (``decode_offset_commits``' ``handled`` rows; a row it leaves goes to the former).
Not counted: each downgrade target's own reader of the value (``read_value_as``), which reads the
bytes as that release does, by design once per target.
"""

import os

LOG = os.environ.get("OFFSETLAKE_COUNT_DECODES")


def record_digest(key, value) -> str:
    import hashlib

    def part(b):
        return b"-" if b is None else b"+" + bytes(b)

    return hashlib.sha1(part(key) + b"|" + part(value)).hexdigest()


def _install(log: str) -> None:
    import sys

    import numpy as np

    import decoders.codec as codec
    import decoders.columnar as columnar

    def note(pairs) -> None:
        lines = "".join(record_digest(k, v) + "\n" for k, v in pairs)
        if lines:
            with open(os.path.join(log, f"{os.getpid()}.log"), "a") as out:
                out.write(lines)

    decode = codec._decode

    def counted_decode(key, value, expand):
        note([(key, value)])
        return decode(key, value, expand)

    fast = columnar.decode_offset_commits

    def counted_fast(keys, values):
        out = fast(keys, values)
        rows = np.flatnonzero(out.handled)
        if len(rows):
            taken = columnar.pa.array(rows)
            note(zip(keys.take(taken).to_pylist(), values.take(taken).to_pylist()))
        return out

    codec._decode = counted_decode
    for module in list(sys.modules.values()):   # modules that imported the reader by name
        if getattr(module, "decode_offset_commits", None) is fast:
            module.decode_offset_commits = counted_fast


if LOG:
    _install(LOG)

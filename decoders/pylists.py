"""Arrow columns as Python lists, faster than ``to_pylist`` for the column kinds the per-group
code reads most: Arrow boxes every value as a scalar first, which costs more than the audit's
own work on a group of offset commits.

    columns = table_lists(table)            # {name: list}, as table.to_pydict() gives
    assert columns == table.to_pydict()
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def column_list(arr: pa.Array | pa.ChunkedArray) -> list:
    """``arr.to_pylist()`` (list values as tuples), by buffer where Arrow's own is slow."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    n, kind = len(arr), arr.type
    if arr.null_count == n:
        return [None] * n
    if pa.types.is_integer(kind) or pa.types.is_boolean(kind):
        if arr.null_count == 0:
            return arr.to_numpy(zero_copy_only=False).tolist()
        # Filled, converted, then the nulls put back: to_pylist boxes each value (about 3 us a
        # value, most of a group's audit when a commit column is null on its membership rows).
        values = arr.fill_null(False if pa.types.is_boolean(kind) else 0)
        valid = arr.is_valid().to_numpy(zero_copy_only=False).tolist()
        return [v if ok else None
                for v, ok in zip(values.to_numpy(zero_copy_only=False).tolist(), valid)]
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return binary_list(arr)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        encoded = arr.dictionary_encode()
        words = encoded.dictionary.to_pylist() + [None]
        index = encoded.indices.fill_null(len(words) - 1).to_numpy().tolist()
        return [words[i] for i in index]
    if pa.types.is_list(kind) and arr.null_count == 0:
        flat = column_list(arr.flatten())
        bounds = arr.offsets.to_numpy().tolist()
        if bounds[0] == bounds[-1]:
            return [()] * n
        return [tuple(flat[a - bounds[0]:b - bounds[0]]) for a, b in zip(bounds, bounds[1:])]
    if pa.types.is_list(kind):
        return [None if v is None else tuple(v) for v in arr.to_pylist()]
    return arr.to_pylist()


def binary_list(arr: pa.Array) -> list:
    """``arr.to_pylist()`` for a binary array, without Arrow's per-element scalar objects."""
    _, offsets, data = arr.buffers()
    bounds = np.frombuffer(offsets, np.int64 if pa.types.is_large_binary(arr.type) else np.int32)
    bounds = bounds[arr.offset:arr.offset + len(arr) + 1].tolist()
    raw = data.to_pybytes() if data is not None else b""
    out = [raw[start:end] for start, end in zip(bounds, bounds[1:])]
    if arr.null_count:
        out = [x if ok else None for x, ok in zip(out, np.asarray(arr.is_valid()).tolist())]
    return out


def table_lists(table: pa.Table | pa.RecordBatch, names=None) -> dict[str, list]:
    """``{name: column_list(column)}`` for ``names`` (default: every column), in that order."""
    return {name: column_list(table.column(name)) for name in (names or table.column_names)}

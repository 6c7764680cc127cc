"""``decoders.pylists``: the same lists as Arrow's ``to_pylist`` (list values as tuples), for
every column kind and shape the per-group code hands it."""

from __future__ import annotations

import pyarrow as pa
import pytest

from decoders.pylists import column_list, table_lists

ARRAYS = [
    pa.array([1, 2, 3], pa.int64()), pa.array([1, None, 3], pa.int32()),
    pa.array([True, False, None]), pa.array([True, False]), pa.array([None, 7, -1], pa.int8()),
    pa.array([2**63 - 1, None, -2**63], pa.int64()), pa.array([None, False, True, None]),
    pa.array([b"a", None, b"", b"ccc"], pa.binary()), pa.array([b"x", b"yy"], pa.large_binary()),
    pa.array(["g", None, "g", "h", ""]), pa.array(["a", "b"], pa.large_string()),
    pa.array([[], ["x"], [], ["y", "z"]], pa.list_(pa.string())),
    pa.array([[], []], pa.list_(pa.string())), pa.array([None, ["a"]], pa.list_(pa.string())),
    pa.nulls(3, pa.string()), pa.nulls(2, pa.list_(pa.string())), pa.array([], pa.int64()),
    pa.array([1.5, None]),
]


def expected(arr) -> list:
    return [tuple(v) if isinstance(v, list) else v for v in arr.to_pylist()]


def typed(values: list) -> list:
    """Each value with its type: ``True == 1`` and ``1 == 1.0``, so equal lists alone would
    let a reader hand back another type."""
    return [(type(v), v) for v in values]


@pytest.mark.parametrize("arr", ARRAYS, ids=lambda a: str(a.type))
def test_whole_sliced_and_chunked_columns_read_as_arrow_reads_them(arr):
    assert typed(column_list(arr)) == typed(expected(arr))
    if len(arr) > 1:
        assert typed(column_list(arr.slice(1))) == typed(expected(arr.slice(1)))
        chunked = pa.chunked_array([arr.slice(0, 1), arr.slice(1)])
        assert typed(column_list(chunked)) == typed(expected(arr))


def test_a_table_reads_as_to_pydict():
    table = pa.table({"a": ARRAYS[1], "b": ARRAYS[2], "c": pa.array([[], ["x"], []],
                                                                     pa.list_(pa.string()))})
    assert table_lists(table) == {k: expected(table.column(k)) for k in table.column_names}
    assert list(table_lists(table, ["c", "a"])) == ["c", "a"]

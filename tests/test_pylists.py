"""``decoders.pylists``: the same lists as Arrow's ``to_pylist`` (list values as tuples), for
every column kind and shape the per-group code hands it."""

from __future__ import annotations

import pyarrow as pa
import pytest

from decoders.pylists import column_list, table_lists

ARRAYS = [
    pa.array([1, 2, 3], pa.int64()), pa.array([1, None, 3], pa.int32()),
    pa.array([True, False, None]), pa.array([True, False]),
    pa.array([b"a", None, b"", b"ccc"], pa.binary()), pa.array([b"x", b"yy"], pa.large_binary()),
    pa.array(["g", None, "g", "h", ""]), pa.array(["a", "b"], pa.large_string()),
    pa.array([[], ["x"], [], ["y", "z"]], pa.list_(pa.string())),
    pa.array([[], []], pa.list_(pa.string())), pa.array([None, ["a"]], pa.list_(pa.string())),
    pa.nulls(3, pa.string()), pa.nulls(2, pa.list_(pa.string())), pa.array([], pa.int64()),
    pa.array([1.5, None]),
]


def expected(arr) -> list:
    return [tuple(v) if isinstance(v, list) else v for v in arr.to_pylist()]


@pytest.mark.parametrize("arr", ARRAYS, ids=lambda a: str(a.type))
def test_whole_sliced_and_chunked_columns_read_as_arrow_reads_them(arr):
    assert column_list(arr) == expected(arr)
    if len(arr) > 1:
        assert column_list(arr.slice(1)) == expected(arr.slice(1))
        chunked = pa.chunked_array([arr.slice(0, 1), arr.slice(1)])
        assert column_list(chunked) == expected(arr)


def test_a_table_reads_as_to_pydict():
    table = pa.table({"a": ARRAYS[1], "b": ARRAYS[2], "c": pa.array([[], ["x"], []],
                                                                     pa.list_(pa.string()))})
    assert table_lists(table) == {k: expected(table.column(k)) for k in table.column_names}
    assert list(table_lists(table, ["c", "a"])) == ["c", "a"]

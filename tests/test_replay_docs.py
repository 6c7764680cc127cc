"""docs/tables.md is generated from TABLE_COLUMNS: every table and column documented, in sync."""

from __future__ import annotations

from pathlib import Path

from jobs.lake.history_docs import TABLE_DOCS, render_tables_doc
from jobs.lake.history import TABLE_COLUMNS

DOC = Path(__file__).resolve().parents[1] / "docs" / "tables.md"
SPARK_TYPES = {"string", "int", "bigint", "boolean", "array<string>"}


def test_every_column_has_a_meaning_and_nothing_else_does():
    assert set(TABLE_DOCS) == set(TABLE_COLUMNS)
    for table, columns in TABLE_COLUMNS.items():
        names = [name for name, _ in columns]
        assert len(names) == len(set(names)), table
        assert set(TABLE_DOCS[table][1]) == set(names), table
        assert {dtype for _, dtype in columns} <= SPARK_TYPES, table


def test_docs_file_is_generated_from_the_columns():
    assert DOC.read_text() == render_tables_doc(), "regenerate docs/tables.md with render_tables_doc()"

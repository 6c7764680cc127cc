"""docs/tables.md is generated from TABLE_COLUMNS: every table and column documented, in sync."""

from __future__ import annotations

from pathlib import Path

from jobs.replay.table_docs import TABLE_DOCS, render_tables_doc
from jobs.replay.tables import TABLE_COLUMNS

DOC = Path(__file__).resolve().parents[1] / "docs" / "tables.md"
SPARK_TYPES = {"string", "int", "bigint", "boolean", "array<string>"}


def test_every_column_has_a_meaning_and_nothing_else_does():
    assert set(TABLE_DOCS) == set(TABLE_COLUMNS)
    for table, columns in TABLE_COLUMNS.items():
        names = [name for name, _ in columns]
        assert len(names) == len(set(names)), table
        assert set(TABLE_DOCS[table][1]) == set(names), table
        assert {dtype for _, dtype in columns} <= SPARK_TYPES, table


def test_required_columns_are_present():
    required = {
        "groups": ["group_id", "group_type", "group_state", "group_epoch", "target_assignment_epoch"],
        "members": ["group_id", "member_id", "instance_id", "member_epoch",
                    "previous_member_epoch", "member_state"],
        "member_assignments": ["group_id", "member_id", "topic_id", "topic_name", "partition",
                               "assignment_epoch", "assignment_epoch_source",
                               "is_pending_revocation"],
        "offsets": ["group_id", "topic", "partition", "committed_offset"]}
    for table, columns in required.items():
        names = [name for name, _ in TABLE_COLUMNS[table]]
        assert [c for c in columns if c not in names] == [], table
    for table, columns in TABLE_COLUMNS.items():
        assert ("log_partition", "int") in columns and ("log_offset", "bigint") in columns, table


def test_docs_file_is_generated_from_the_columns():
    assert DOC.read_text() == render_tables_doc(), "regenerate docs/tables.md with render_tables_doc()"

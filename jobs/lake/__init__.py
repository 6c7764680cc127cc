"""The lake: every table's contract (columns as data) and how tables are written and read.

:mod:`jobs.lake.bronze` holds the raw contracts (``raw_records``, ``quarantine``);
:mod:`jobs.lake.delta` the idempotent Delta writes (``replaceWhere`` on the snapshot id).
"""

from jobs.lake.delta import (QUARANTINE, RAW_RECORDS, RECORDS, committed_rows, read_snapshot, read_table,
                             replace_snapshot, table_path)

__all__ = ["RAW_RECORDS", "RECORDS", "QUARANTINE", "table_path", "replace_snapshot", "read_table",
           "read_snapshot", "committed_rows"]

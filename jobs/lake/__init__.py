"""Table contracts (``bronze``) and Delta IO (``delta``) of the lake."""

from jobs.lake.delta import (QUARANTINE, RAW_RECORDS, read_snapshot, read_table, replace_snapshot,
                             table_path)

__all__ = ["QUARANTINE", "RAW_RECORDS", "read_snapshot", "read_table", "replace_snapshot", "table_path"]

"""Where the lake's Delta tables live and how they are written.

Every table is partitioned by ``snapshot_id`` and written with ``replaceWhere`` on it, so a rerun
of a snapshot replaces exactly that snapshot's rows: never a blind append, never a duplicate, and
other snapshots' history untouched.
"""

from __future__ import annotations

import json
from pathlib import Path

# Table names: the bronze rows as read, the data records decoded from them, and what could not be read.
RAW_RECORDS = "raw_records"
RECORDS = "records"
QUARANTINE = "quarantine"


def table_path(lake: Path, table: str) -> str:
    return str(Path(lake).resolve() / table)


def _sql_literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def replace_snapshot(df, lake: Path, table: str, snapshot_id: str, only: str | None = None) -> None:
    """Write ``df`` (rows of one snapshot) as that snapshot's whole content of ``table``.

    ``only`` narrows what is replaced to the rows one stage owns when several stages write the
    same table (``quarantine``: ``stage = 'decode'``); ``df`` must satisfy it.

    >>> replace_snapshot(rows, Path("lake"), "raw_records", "2026-11-22")  # doctest: +SKIP
    """
    predicate = f"snapshot_id = {_sql_literal(snapshot_id)}" + (f" AND ({only})" if only else "")
    (df.write.format("delta")
       .mode("overwrite")
       .option("replaceWhere", predicate)
       .partitionBy("snapshot_id")
       .save(table_path(lake, table)))


def _commits(lake: Path, table: str) -> list[Path]:
    log = Path(table_path(lake, table)) / "_delta_log"
    return sorted(p for p in log.glob("*.json") if p.stem.isdigit())


def table_version(lake: Path, table: str) -> int:
    """The version of ``table``'s last commit, -1 before its first."""
    commits = _commits(lake, table)
    return int(commits[-1].stem) if commits else -1


def committed_rows(lake: Path, table: str, since: int | None = None) -> int:
    """Rows the last commit of ``table`` wrote (its ``numOutputRows`` metric), read from the
    commit file itself: no scan, no Spark job. Exact for a replace of a whole snapshot; a replace
    narrowed by ``only=`` may count rows it rewrote from files it shares with other stages.
    ``since``: the version before the write; no commit after it (Delta commits nothing when an
    empty write replaces nothing) means 0 rows, not the previous commit's count."""
    commits = _commits(lake, table)
    if not commits or (since is not None and int(commits[-1].stem) <= since):
        return 0
    for line in commits[-1].read_text().splitlines():
        info = json.loads(line).get("commitInfo")
        if info is not None:
            return int((info.get("operationMetrics") or {}).get("numOutputRows", 0))
    return 0


def logged_snapshot_ids(lake: Path, table: str) -> list[str] | None:
    """The snapshot ids of ``table``'s current files, read from its Delta log: the
    ``snapshot_id`` partition value of every file the last checkpoint holds, then each commit
    after it adding or removing files. No scan and no Spark job, however many rows the table has
    (a ``select distinct snapshot_id`` reads every row). None for a log this reader does not
    follow (a multi-part or V2 checkpoint, a gap in the commits, commits staged by a commit
    coordinator, another partitioning) or a table not written yet: then ask Spark."""
    import pyarrow.parquet as pq

    log = Path(table_path(lake, table)) / "_delta_log"
    files: dict[str, str | None] = {}
    version = -1
    marker = log / "_last_checkpoint"
    if any((log / "_staged_commits").glob("*.json")):   # commits not yet in the log proper
        return None
    try:
        if marker.is_file():
            last = json.loads(marker.read_text())
            checkpoint = log / f"{int(last['version']):020d}.checkpoint.parquet"
            if last.get("parts") or last.get("v2Checkpoint") or not checkpoint.is_file():
                return None
            version = int(last["version"])
            for add in pq.read_table(checkpoint, columns=["add"]).column("add").to_pylist():
                if add is not None:
                    files[add["path"]] = _snapshot_of(add, dict(add["partitionValues"] or ()))
        commits = [p for p in _commits(lake, table) if int(p.stem) > version]
        if not commits and version < 0:
            return None
        for expected, path in enumerate(commits, start=version + 1):
            if int(path.stem) != expected:
                return None
            for line in path.read_text().splitlines():
                action = json.loads(line) if line.strip() else {}
                if "metaData" in action and action["metaData"].get("partitionColumns") != [
                        "snapshot_id"]:
                    return None
                if "add" in action:
                    add = action["add"]
                    files[add["path"]] = _snapshot_of(add, add.get("partitionValues") or {})
                elif "remove" in action:
                    files.pop(action["remove"]["path"], None)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return sorted({sid for sid in files.values() if sid is not None})


def _snapshot_of(add: dict, partition_values: dict) -> str | None:
    """The snapshot id of an added file, None when its statistics say it holds no row."""
    stats = add.get("stats")
    if stats and json.loads(stats).get("numRecords") == 0:
        return None
    return partition_values.get("snapshot_id")


def read_table(spark, lake: Path, table: str):
    return spark.read.format("delta").load(table_path(lake, table))


def read_snapshot(spark, lake: Path, table: str, snapshot_id: str):
    """The rows of one snapshot in ``table``."""
    return read_table(spark, lake, table).where(f"snapshot_id = {_sql_literal(snapshot_id)}")

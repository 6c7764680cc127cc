"""Where the lake's Delta tables live and how they are written.

Every table is partitioned by ``snapshot_id`` and written with ``replaceWhere`` on it, so a rerun
of a snapshot replaces exactly that snapshot's rows: never a duplicate, and other snapshots'
history untouched. Only where the table's Delta log shows no file at all of the snapshot (its first
write there) is the write a plain append, which replaces the same nothing without Delta reading the
table's state first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import reduce
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
    if _partition_absent(lake, table, snapshot_id):
        # Nothing of this snapshot to replace: a blind append, which reads no table state. A
        # replaceWhere first makes Delta list the table's files (its snapshot state: about four
        # Spark jobs, 1.4 s against 0.45 s for a small table, each time a run writes a new
        # snapshot into a table it has not read yet).
        (df.write.format("delta").mode("append").partitionBy("snapshot_id")
           .save(table_path(lake, table)))
        return
    predicate = f"snapshot_id = {_sql_literal(snapshot_id)}" + (f" AND ({only})" if only else "")
    _replace_where(df, lake, table, predicate)


def replace_snapshots(df, lake: Path, table: str, snapshot_ids: list[str]) -> None:
    """Write ``df`` as the whole content of ``table`` for each of ``snapshot_ids`` (its rows are
    of those snapshots), in one commit; a new table is created."""
    if not has_table(lake, table):
        df.write.format("delta").mode("append").partitionBy("snapshot_id").save(
            table_path(lake, table))
        return
    _replace_where(df, lake, table,
                   "snapshot_id IN (" + ", ".join(_sql_literal(s) for s in snapshot_ids) + ")")


def _replace_where(df, lake: Path, table: str, predicate: str) -> None:
    """``df`` as the whole content of ``table`` where ``predicate`` holds (one commit)."""
    (df.write.format("delta")
       .mode("overwrite")
       .option("replaceWhere", predicate)
       .partitionBy("snapshot_id")
       .save(table_path(lake, table)))


def _partition_absent(lake: Path, table: str, snapshot_id: str) -> bool:
    """Whether ``table`` exists and its current version, as its Delta log says
    (:func:`log_state`), has no file at all in ``snapshot_id``'s partition. False when the log
    cannot tell."""
    state = log_state(lake, table) if has_table(lake, table) else None
    return state is not None and not state.files_of(snapshot_id)


def has_table(lake: Path, table: str) -> bool:
    """Whether ``lake`` holds ``table`` (its directory has a Delta log)."""
    return (Path(table_path(lake, table)) / "_delta_log").is_dir()


def _commits(lake: Path, table: str) -> list[Path]:
    log = Path(table_path(lake, table)) / "_delta_log"
    return sorted(p for p in log.glob("*.json") if p.stem.isdigit())


def table_version(lake: Path, table: str) -> int:
    """The version of ``table``'s last commit, -1 before its first."""
    commits = _commits(lake, table)
    return int(commits[-1].stem) if commits else -1


def table_stamp(lake: Path, table: str) -> tuple[int, int]:
    """``(version, mtime_ns)`` of ``table``'s last commit: it changes with every commit, and
    with a table deleted and written again (for a cache of what was read of it)."""
    commits = _commits(lake, table)
    return (int(commits[-1].stem), commits[-1].stat().st_mtime_ns) if commits else (-1, 0)


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


@dataclass
class LogState:
    """What a table's Delta log says now, as :func:`log_state` read it: its files (path as the log
    writes it -> the add action), the schema, the table's configuration and its protocol."""

    files: dict[str, dict] = field(default_factory=dict)
    schema: str | None = None
    configuration: dict = field(default_factory=dict)
    protocol: dict = field(default_factory=dict)

    def files_of(self, snapshot_id: str) -> dict[str, dict]:
        """The files (path -> add action) in ``snapshot_id``'s partition."""
        return {path: add for path, add in self.files.items()
                if (add.get("partitionValues") or {}).get("snapshot_id") == snapshot_id}


def _pairs(value) -> dict:
    """A map as the checkpoint's Parquet gives it (a list of pairs) or the JSON log does (a dict)."""
    return dict(value or ())


def log_state(lake: Path, table: str) -> LogState | None:
    """``table``'s current files, schema and protocol, read from its Delta log: the last
    checkpoint, then each commit after it. No scan and no Spark job, however many rows the table
    has. None for a log this reader does not follow (a multi-part or V2 checkpoint, a gap in the
    commits, commits staged by a commit coordinator, another partitioning than ``snapshot_id``) or
    a table not written yet: then ask Delta."""
    import pyarrow.parquet as pq

    log = Path(table_path(lake, table)) / "_delta_log"
    state = LogState()
    version = -1
    marker = log / "_last_checkpoint"
    if any((log / "_staged_commits").glob("*.json")):   # commits not yet in the log proper
        return None

    def metadata(meta: dict) -> bool:
        if meta.get("partitionColumns") != ["snapshot_id"]:
            return False
        state.schema = meta.get("schemaString")
        state.configuration = _pairs(meta.get("configuration"))
        return True

    try:
        if marker.is_file():
            last = json.loads(marker.read_text())
            checkpoint = log / f"{int(last['version']):020d}.checkpoint.parquet"
            if last.get("parts") or last.get("v2Checkpoint") or not checkpoint.is_file():
                return None
            version = int(last["version"])
            actions = pq.read_table(checkpoint, columns=["add", "metaData", "protocol"])
            for add, meta, protocol in zip(*(actions.column(c).to_pylist()
                                             for c in ("add", "metaData", "protocol"))):
                if add is not None:
                    add["partitionValues"] = _pairs(add["partitionValues"])
                    state.files[add["path"]] = add
                if meta is not None and not metadata(meta):
                    return None
                if protocol is not None:
                    state.protocol = protocol
        commits = [p for p in _commits(lake, table) if int(p.stem) > version]
        if not commits and version < 0:
            return None
        for expected, path in enumerate(commits, start=version + 1):
            if int(path.stem) != expected:
                return None
            for line in path.read_text().splitlines():
                action = json.loads(line) if line.strip() else {}
                if "metaData" in action and not metadata(action["metaData"]):
                    return None
                if "protocol" in action:
                    state.protocol = action["protocol"]
                if "add" in action:
                    state.files[action["add"]["path"]] = action["add"]
                elif "remove" in action:
                    state.files.pop(action["remove"]["path"], None)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return state


def logged_snapshot_ids(lake: Path, table: str) -> list[str] | None:
    """The snapshot ids of ``table``'s current files that hold a row, from its Delta log
    (:func:`log_state`; a ``select distinct snapshot_id`` reads every row). None when the log
    cannot tell."""
    state = log_state(lake, table)
    if state is None:
        return None
    return sorted({sid for add in state.files.values()
                   if (sid := _snapshot_of(add, add.get("partitionValues") or {})) is not None})


def split_logged(lake: Path, table: str, snapshot_ids: list[str]) -> tuple[list[str], list[str]]:
    """``snapshot_ids`` in order, split into those ``table`` holds a row of (its Delta log says
    so) and the others (written before the table, or before a run wrote it)."""
    listed = set((logged_snapshot_ids(lake, table) or []) if has_table(lake, table) else [])
    return ([sid for sid in snapshot_ids if sid in listed],
            [sid for sid in snapshot_ids if sid not in listed])


def _snapshot_of(add: dict, partition_values: dict) -> str | None:
    """The snapshot id of an added file, None when its statistics say it holds no row."""
    stats = add.get("stats")
    if stats and json.loads(stats).get("numRecords") == 0:
        return None
    return partition_values.get("snapshot_id")


def logged_snapshot_bytes(lake: Path, table: str, snapshot_id: str) -> int | None:
    """Bytes of ``table``'s current files holding ``snapshot_id``'s rows, from its Delta log (the
    add actions' sizes); None when the log cannot tell."""
    state = log_state(lake, table)
    if state is None:
        return None
    return sum(int(add.get("size") or 0) for add in state.files_of(snapshot_id).values())


def unreferenced_files(lake: Path, table: str) -> list[str] | None:
    """The data files in ``table``'s directory its current version does not read: all Delta's
    ``VACUUM`` could ever delete there (once older than its retention), from the Delta log
    (:func:`log_state`) and a listing. Hidden names (``_delta_log``, Hadoop's ``.crc`` files, any
    ``_`` or ``.`` prefix) are not data files, as for ``VACUUM``. None when the log cannot tell."""
    from urllib.parse import unquote

    state = log_state(lake, table)
    if state is None:
        return None
    root = Path(table_path(lake, table))
    read = {unquote(path) for path in state.files}
    found = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if (not any(part.startswith(("_", ".")) for part in rel.parts) and path.is_file()
                and str(rel) not in read):
            found.append(str(rel))
    return sorted(found)


# Reader features that change no file's meaning (types a Parquet reader reads as the schema says,
# a rule for VACUUM): a table with any other (deletion vectors, column mapping, type widening...)
# is read through Delta.
PLAIN_READER_FEATURES = frozenset({"variantType", "variantType-preview", "timestampNtz",
                                   "vacuumProtocolCheck"})


GLOB = frozenset("*?[]{}\\")


def snapshot_files(lake: Path, table: str, snapshot_id: str) -> tuple[str, list[str]] | None:
    """(the table's schema as JSON, the Parquet files holding ``snapshot_id``'s rows) when those
    files alone are the snapshot's rows: the log is one :func:`log_state` reads and its protocol
    asks nothing of a reader beyond reading the files (no deletion vectors, no column mapping:
    :data:`PLAIN_READER_FEATURES`). None otherwise: read the table through Delta."""
    return _plain_files(log_state(lake, table), lake, table, snapshot_id)


def _plain_files(state: LogState | None, lake: Path, table: str,
                 snapshot_id: str) -> tuple[str, list[str]] | None:
    """:func:`snapshot_files` from the log ``state`` already read."""
    from urllib.parse import unquote

    if state is None or state.schema is None:
        return None
    reader = int(state.protocol.get("minReaderVersion") or 1)
    features = set(state.protocol.get("readerFeatures") or ())
    if reader > 3 or (reader == 3 and not features <= PLAIN_READER_FEATURES):
        return None
    if state.configuration.get("delta.columnMapping.mode", "none") != "none":
        return None
    root = Path(table_path(lake, table))
    paths = []
    for path, add in state.files_of(snapshot_id).items():
        if add.get("deletionVector") or "://" in path or path.startswith("/"):
            return None
        paths.append(str(root / unquote(path)))
    if any(c in GLOB for file in paths for c in file):   # Spark would read a pattern
        return None
    return state.schema, sorted(paths)


def read_table(spark, lake: Path, table: str):
    return spark.read.format("delta").load(table_path(lake, table))


def direct_snapshot(spark, lake: Path, table: str, snapshot_id: str):
    """``snapshot_id``'s rows of ``table``, with the table's columns, read from its Parquet files
    when the Delta log allows (:func:`snapshot_files`); None when it does not. Directly, a query
    plans no Delta scan and a session loads no table state: on a small snapshot that is most of a
    query's time (the report's queries, half)."""
    return _direct(spark, snapshot_id, snapshot_files(lake, table, snapshot_id))


def _direct(spark, snapshot_id: str, found: tuple[str, list[str]] | None):
    """:func:`direct_snapshot` of the files :func:`snapshot_files` found (None: None)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    if found is None:
        return None
    schema_json, paths = found
    schema = StructType.fromJson(json.loads(schema_json))
    stored = StructType([f for f in schema.fields if f.name != "snapshot_id"])
    df = (spark.read.schema(stored).parquet(*paths) if paths
          else spark.createDataFrame([], stored))
    return df.select(*[F.lit(snapshot_id).alias(f.name) if f.name == "snapshot_id"
                       else F.col(f"`{f.name}`") for f in schema.fields])


# Up to this many snapshots are read from their Parquet files directly, one scan each
# (:func:`read_snapshots`); more through Delta, in one scan whose file filtering is a Spark job
# of its own (about 2 s each on the 10M bench lake, where an incremental run reads a few tables
# of every earlier snapshot several times).
DIRECT_SNAPSHOTS = 64


def read_snapshots(spark, lake: Path, table: str, snapshot_ids: list[str]):
    """The rows of ``snapshot_ids`` in ``table`` (no row for none): read directly from their
    Parquet files (several in one scan, :func:`_direct_many`) when the Delta log allows and they
    are at most :data:`DIRECT_SNAPSHOTS`, else through Delta."""
    from pyspark.sql import functions as F

    ids = list(dict.fromkeys(snapshot_ids))
    if 0 < len(ids) <= DIRECT_SNAPSHOTS:
        state = log_state(lake, table)
        found = [_plain_files(state, lake, table, sid) for sid in ids]
        if all(f is not None for f in found):
            many = _direct_many(spark, lake, table, found) if len(ids) > 1 else None
            if many is not None:
                return many
            return reduce(lambda a, b: a.unionByName(b),
                          [_direct(spark, sid, f) for sid, f in zip(ids, found)])
    return read_table(spark, lake, table).where(F.col("snapshot_id").isin(ids) if ids
                                                else F.lit(False))


def _direct_many(spark, lake: Path, table: str, found: list[tuple[str, list[str]]]):
    """The rows of several snapshots' files (:func:`snapshot_files` of each) in one Parquet scan,
    ``snapshot_id`` read from each file's partition directory (as Delta names it, under the
    table's directory): one scan of N snapshots plans and runs as one, where a union of N scans
    grows with N (an incremental run reads several tables of every earlier snapshot, each
    several times). A scan takes at most Spark's parallel listing threshold of files (more would
    list them in a Spark job of their own), so many files are a union of a few scans. None when
    a file is not in a ``snapshot_id=`` directory of the table."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    root = Path(table_path(lake, table))
    paths = [path for _, files in found for path in files]
    if any(Path(path).parent.parent != root
           or not Path(path).parent.name.startswith("snapshot_id=") for path in paths):
        return None
    schema = StructType.fromJson(json.loads(found[0][0]))
    if "snapshot_id" not in schema.fieldNames():
        return None
    if not paths:
        return spark.createDataFrame([], schema)
    per_scan = max(1, int(spark.conf.get("spark.sql.sources.parallelPartitionDiscovery.threshold",
                                         "32")))
    scans = [spark.read.schema(schema).option("basePath", str(root))
             .parquet(*paths[i:i + per_scan]).select(*[F.col(f"`{f.name}`") for f in schema.fields])
             for i in range(0, len(paths), per_scan)]
    return reduce(lambda a, b: a.unionByName(b), scans)


def read_snapshot(spark, lake: Path, table: str, snapshot_id: str):
    """The rows of one snapshot in ``table``: read directly (:func:`direct_snapshot`) when the
    Delta log allows, else through Delta (:func:`read_snapshots` of the one id)."""
    return read_snapshots(spark, lake, table, [snapshot_id])

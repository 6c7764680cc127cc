"""The ``lag`` table: each committed offset of a capture against the log offsets it read.

A capture (``offsetlake capture``) reads, just after its cut, the log start and end offset of the
partitions its offset commits name into ``log_offsets.parquet`` (named by ``manifest.json``'s
``log_offsets``; format :data:`jobs.snapshots.capture.LOG_OFFSETS_SCHEMA`). Joined with the
``offsets`` rows of the same run, that is lag as it was at capture time; one run per capture makes
lag history. A snapshot without the file (segment directories, older captures) has no lag rows:
its ``lag`` rows are replaced by none, so a rerun leaves the table as one run does.

    lag_rows(offsets, log_offsets)   # DataFrame -> DataFrame, the lag table's columns
"""

from __future__ import annotations

from pathlib import Path

from jobs.lake.tables import LAG, TABLES
from jobs.stages.ingest import capture_manifest

NO_OFFSET = -1   # Kafka's "no committed offset" (ConsumerGroupService.getLag leaves it lagless)


def log_offsets_file(paths: list[str]) -> Path | None:
    """The log offsets file of a capture directory (the one path), or None when there is none."""
    name = (capture_manifest(paths) or {}).get("log_offsets")
    return Path(paths[0]) / name if name else None


def lag_rows(offsets, log_offsets):
    """One row per committed offset (``offsets`` rows, ``snapshot_id`` included) with the log
    offsets of its partition (``log_offsets``: topic, partition, log_start_offset,
    log_end_offset, read_at). A partition the capture did not find keeps its row, with null log
    offsets and lag.

    Lag is Kafka's own (4.3.1 ``ConsumerGroupCommand.ConsumerGroupService.getLag``): end minus
    committed, neither clamped at zero nor at the log start, absent when the committed offset is
    -1. So a commit below the log start counts the deleted offsets too; the flag tells them."""
    from pyspark.sql import functions as F

    committed = F.col("committed_offset")
    has_offset = committed != NO_OFFSET
    joined = offsets.join(log_offsets, ["topic", "partition"], "left")
    return joined.select(
        "snapshot_id", "group_id", "topic", "partition", "committed_offset", "log_start_offset",
        "log_end_offset",
        F.when(has_offset, F.col("log_end_offset") - committed).alias("lag"), "read_at",
        (has_offset & (committed < F.col("log_start_offset"))).alias("is_committed_below_log_start"))


def lag_frame(spark, offsets, paths: list[str]):
    """The snapshot's ``lag`` rows: from the capture's log offsets, or none without them."""
    file = log_offsets_file(paths)
    if file is None:
        return spark.createDataFrame([], TABLES[LAG].ddl())
    return lag_rows(offsets, spark.read.parquet(str(file)))


def submit_lag(spark, writer, paths: list[str]) -> None:
    """Write ``lag`` through the run's writer, from the ``offsets`` frame it has written."""
    writer.submit(LAG, lag_frame(spark, writer.frames["offsets"], paths))

"""The ``broker_configs`` table: the broker settings a capture read, one row per config.

``offsetlake capture`` asks the group coordinators, with DescribeConfigs, for the broker configs
the insight views assume (:data:`jobs.lake.views.BROKER_SETTINGS`) and keeps the answer in
``manifest.json``'s ``broker_configs`` ({name: {"value", "source"}}). The run writes them here;
:func:`jobs.lake.views.register_lake` then prefers them to conf/ in the snapshot's ``settings``
row. A snapshot without them (segment directories, older captures, a cluster that did not answer)
writes no rows: its ``broker_configs`` rows are replaced by none, so a rerun leaves the table as
one run does.

    broker_config_rows("cap-1", {"offsets.retention.minutes":
                                 {"value": "3", "source": "STATIC_BROKER_CONFIG"}})
    # [("cap-1", "offsets.retention.minutes", "3", "STATIC_BROKER_CONFIG")]
"""

from __future__ import annotations

from jobs.lake.tables import BROKER_CONFIGS, TABLES
from jobs.stages.ingest import capture_manifest


def manifest_broker_configs(paths: list[str]) -> dict | None:
    """The ``broker_configs`` of a capture directory's manifest (the one path), or None."""
    return (capture_manifest(paths) or {}).get("broker_configs")


def broker_config_rows(snapshot_id: str, configs: dict | None) -> list[tuple]:
    """``(snapshot_id, name, value, source)`` per config, in name order."""
    return [(snapshot_id, name, entry.get("value"), entry.get("source"))
            for name, entry in sorted((configs or {}).items())]


def submit_broker_configs(spark, writer, paths: list[str]) -> None:
    """Write the snapshot's ``broker_configs`` rows (none without them) through the run's writer."""
    rows = broker_config_rows(writer.snapshot_id, manifest_broker_configs(paths))
    writer.submit(BROKER_CONFIGS, spark.createDataFrame(rows, TABLES[BROKER_CONFIGS].ddl()))

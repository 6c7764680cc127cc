"""The ``broker_configs`` table and the ``settings`` row it feeds.

A capture records the broker settings its DescribeConfigs read in ``manifest.json``
(``broker_configs``); ``offsetlake run`` writes them as rows; ``register_lake(spark, lake,
snapshot_id)`` takes them over conf/ for that snapshot, an explicit ``settings=`` over both. The
capture here is written by the test (one offset commit, a manifest); a real broker checks the same
end to end in tests/integration/test_broker_configs_broker.py.
"""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
from chispa import assert_df_equality
from kafka.errors import KafkaError

from jobs.lake import read_snapshot
from jobs.lake.bronze import CAPTURE_RECORDS_DIR, RAW_RECORDS_SCHEMA
from jobs.lake.tables import BROKER_CONFIGS, TABLES
from jobs.lake.views import BROKER_SETTINGS, SETTINGS, register_lake
from jobs.snapshots import capture as capture_module
from jobs.snapshots.capture import Manifest, chosen_broker_configs
from jobs.stages.pipeline import run_pipeline
from support.lake_fixture import write_lake
from support.snapshot_factory import offset_commit_key, offset_commit_value

T0 = 1_760_000_000_000
STATIC, DEFAULT = "STATIC_BROKER_CONFIG", "DEFAULT_CONFIG"
CAPTURED = {"offsets.retention.minutes": {"value": "3", "source": STATIC},
            "offsets.retention.check.interval.ms": {"value": "600000", "source": DEFAULT},
            "group.consumer.max.size": {"value": "2147483647", "source": DEFAULT},
            "group.max.size": {"value": "2147483647", "source": DEFAULT},
            "group.consumer.migration.policy": {"value": "bidirectional", "source": DEFAULT}}
EXPECTED_ROWS = [("cap-1", "group.consumer.max.size", "2147483647", DEFAULT),
                 ("cap-1", "group.consumer.migration.policy", "bidirectional", DEFAULT),
                 ("cap-1", "group.max.size", "2147483647", DEFAULT),
                 ("cap-1", "offsets.retention.check.interval.ms", "600000", DEFAULT),
                 ("cap-1", "offsets.retention.minutes", "3", STATIC)]
# The settings row's columns, in order, for the expected rows below.
COLUMNS = [column for column, _, _, _ in SETTINGS]
HOUR = 3_600_000


def write_capture(root, snapshot_id: str, broker_configs: dict | None):
    """A capture directory as ``offsetlake capture`` leaves it; ``broker_configs`` None: a manifest
    written before the field existed (no key at all)."""
    (root / CAPTURE_RECORDS_DIR).mkdir(parents=True)
    row = {"partition": 0, "offset": 0, "timestamp": T0, "timestamp_type": "CreateTime",
           "key": offset_commit_key("g1", "orders", 0), "value": offset_commit_value(5, T0),
           "is_control": False, "crc_valid": True,
           "source_file": "kafka://127.0.0.1:9092/__consumer_offsets-0"}
    pq.write_table(pa.Table.from_pylist([row], schema=RAW_RECORDS_SCHEMA),
                   root / CAPTURE_RECORDS_DIR / "partition-0000.parquet")
    manifest = Manifest(snapshot_id, "cluster", "127.0.0.1:9092", "__consumer_offsets",
                        "2025-10-09T08:53:20.000Z", "2025-10-09T08:53:25.000Z", "read_committed",
                        "3.0.12", RAW_RECORDS_SCHEMA.names, broker_configs=broker_configs,
                        broker_configs_broker_id=None if broker_configs is None else 1)
    fields = json.loads(manifest.to_json())
    if broker_configs is None:
        del fields["broker_configs"], fields["broker_configs_broker_id"]
    (root / "manifest.json").write_text(json.dumps(fields))
    return root


def test_every_broker_setting_stands_for_a_conf_key_of_the_settings_row():
    conf_keys = {key for _, key, _, _ in SETTINGS}
    assert set(BROKER_SETTINGS.values()) <= conf_keys
    assert sorted(BROKER_SETTINGS) == sorted([
        "offsets.retention.minutes", "offsets.retention.check.interval.ms",
        "group.consumer.max.size", "group.max.size", "group.consumer.migration.policy"])


def test_a_manifest_written_before_broker_configs_still_loads(tmp_path):
    root = write_capture(tmp_path / "old", "cap-0", None)

    manifest = Manifest.read(root / "manifest.json")

    assert "broker_configs" not in json.loads((root / "manifest.json").read_text())
    assert (manifest.broker_configs, manifest.broker_configs_broker_id) == (None, None)
    new = write_capture(tmp_path / "new", "cap-1", CAPTURED)
    assert Manifest.read(new / "manifest.json").broker_configs == CAPTURED


def _described(retention: str, source: str = STATIC) -> dict:
    """One broker's answer as kafka-python's describe_configs gives it (a config dict per name)."""
    return {"offsets.retention.minutes": {"value": retention, "config_source": source,
                                          "read_only": True, "is_sensitive": False},
            "group.max.size": {"value": "2147483647", "config_source": DEFAULT,
                               "read_only": True, "is_sensitive": False},
            "log.retention.hours": {"value": "168", "config_source": DEFAULT}}


def test_the_lowest_coordinator_that_answered_is_kept_and_a_disagreement_warned():
    progress = io.StringIO()

    chosen = chosen_broker_configs([1, 2, 3], {"1": {}, "2": _described("3"),
                                               "3": _described("5")}, progress)

    assert chosen == (2, {"offsets.retention.minutes": {"value": "3", "source": STATIC},
                          "group.max.size": {"value": "2147483647", "source": DEFAULT}})
    assert progress.getvalue() == ("capture: WARNING: coordinators 2 and 3 differ on "
                                   "offsets.retention.minutes; recording broker 2's\n")


def test_coordinators_that_agree_are_not_warned_about_and_none_answering_is():
    agreeing = io.StringIO()
    assert chosen_broker_configs([4, 7], {"4": _described("3"), "7": _described("3")},
                                 agreeing)[0] == 4
    assert agreeing.getvalue() == ""

    silent = io.StringIO()
    assert chosen_broker_configs([4], {"4": {}}, silent) == (None, None)
    assert chosen_broker_configs([], {}, silent) == (None, None)
    assert silent.getvalue().count("broker settings not read (conf/ applies)") == 2


class _RefusingAdmin:
    """An admin client whose cluster lists two coordinators and refuses DescribeConfigs."""

    closed = False

    def describe_topics(self, topics):
        assert topics == ["__consumer_offsets"]
        return [{"name": topics[0], "partitions": [{"partition_index": 0, "leader_id": 2},
                                                   {"partition_index": 1, "leader_id": -1}]}]

    def describe_configs(self, resources, config_filter):
        assert [(r.name, sorted(r.configs)) for r in resources] == [("2", sorted(BROKER_SETTINGS))]
        assert config_filter == "all"
        raise KafkaError("refused")

    def close(self):
        self.closed = True


def test_a_failed_describe_configs_warns_and_reads_nothing(monkeypatch):
    admin, progress = _RefusingAdmin(), io.StringIO()
    monkeypatch.setattr(capture_module, "_admin", lambda *args: admin)

    assert capture_module._broker_configs("127.0.0.1:9092", {}, 1.0, progress) == (None, None)
    assert progress.getvalue() == ("capture: WARNING: broker settings not read (conf/ applies): "
                                   "KafkaError('refused')\n")
    assert admin.closed


def test_the_run_writes_the_captured_broker_configs_and_replaces_them(spark, tmp_path):
    lake = tmp_path / "lake"
    new = write_capture(tmp_path / "new", "cap-1", CAPTURED)
    expected = spark.createDataFrame(EXPECTED_ROWS, TABLES[BROKER_CONFIGS].ddl())

    first = run_pipeline(spark, lake, [str(new)], progress=io.StringIO())
    written = read_snapshot(spark, lake, BROKER_CONFIGS, "cap-1")

    assert first.table_rows[BROKER_CONFIGS] == len(EXPECTED_ROWS)
    assert [(f.name, f.dataType.simpleString()) for f in written.schema] == \
        TABLES[BROKER_CONFIGS].pairs()
    assert_df_equality(written, expected, ignore_row_order=True, ignore_nullable=True)

    again = run_pipeline(spark, lake, [str(new)], progress=io.StringIO())
    assert again.table_rows[BROKER_CONFIGS] == len(EXPECTED_ROWS)
    assert_df_equality(read_snapshot(spark, lake, BROKER_CONFIGS, "cap-1"), expected,
                       ignore_row_order=True, ignore_nullable=True)

    # The same snapshot id from a capture without them (an older one): its rows go.
    old = write_capture(tmp_path / "old", "cap-1", None)
    third = run_pipeline(spark, lake, [str(old)], progress=io.StringIO())
    assert third.table_rows[BROKER_CONFIGS] == 0
    assert read_snapshot(spark, lake, BROKER_CONFIGS, "cap-1").collect() == []


def _settings_row(spark) -> dict:
    (row,) = spark.sql("select * from settings").collect()
    return row.asDict()


def _row(*values) -> dict:
    assert len(values) == len(COLUMNS)
    return dict(zip(COLUMNS, values))


def test_a_snapshots_broker_configs_override_conf_and_settings_override_both(
        spark, tmp_path, monkeypatch):
    conf = tmp_path / "offsetlake.yaml"
    conf.write_text("insights:\n  offsets_retention_minutes: 60\n"
                    "  offsets_retention_check_interval_ms: 5000\n  group_max_size: 50\n"
                    "  expiry_warning_hours: 2\n")
    monkeypatch.setenv("OFFSETLAKE_CONF", str(conf))
    lake = write_lake(spark, tmp_path / "lake", {BROKER_CONFIGS: [
        {"snapshot_id": "s1", "name": "offsets.retention.minutes", "value": "3", "source": STATIC},
        # Kafka's own default beats conf/: it is what the captured cluster runs with.
        {"snapshot_id": "s1", "name": "offsets.retention.check.interval.ms", "value": "600000",
         "source": DEFAULT},
        {"snapshot_id": "s1", "name": "group.consumer.max.size", "value": "10", "source": STATIC},
        {"snapshot_id": "s1", "name": "group.consumer.migration.policy", "value": "downgrade",
         "source": STATIC},
        {"snapshot_id": "s1", "name": "group.max.size", "value": None, "source": STATIC},  # no value
        {"snapshot_id": "s1", "name": "log.retention.hours", "value": "1", "source": STATIC},
        {"snapshot_id": "s2", "name": "offsets.retention.minutes", "value": "1440",
         "source": DEFAULT}]})
    max_int = 2147483647
    conf_only = _row(60 * 60_000, 5000, max_int, 50, "bidirectional", 2 * HOUR, 72 * HOUR,
                     24 * HOUR, 20)

    register_lake(spark, lake, "s1")
    assert _settings_row(spark) == _row(180_000, 600_000, 10, 50, "downgrade", 2 * HOUR,
                                        72 * HOUR, 24 * HOUR, 20)

    register_lake(spark, lake, "s2")   # its own rows, not s1's
    assert _settings_row(spark) == _row(1440 * 60_000, 5000, max_int, 50, "bidirectional",
                                        2 * HOUR, 72 * HOUR, 24 * HOUR, 20)

    register_lake(spark, lake, "s3")   # a snapshot without broker configs: conf/
    assert _settings_row(spark) == conf_only

    register_lake(spark, lake)         # no snapshot: conf/, whatever the table holds
    assert _settings_row(spark) == conf_only

    # settings= replaces conf/ (as without a snapshot) and wins over the broker, key by key.
    register_lake(spark, lake, "s1", settings={"offsets_retention_minutes": 1,
                                               "ghost_idle_hours": 1})
    assert _settings_row(spark) == _row(60_000, 600_000, 10, max_int, "downgrade", 24 * HOUR,
                                        72 * HOUR, HOUR, 20)

    # A run's frames (run --audit) stand in for the table, as for every other table.
    frame = spark.createDataFrame([("s2", "offsets.retention.minutes", "5", STATIC)],
                                  TABLES[BROKER_CONFIGS].ddl())
    register_lake(spark, lake, "s2", frames={BROKER_CONFIGS: frame})
    assert _settings_row(spark)["offsets_retention_ms"] == 300_000

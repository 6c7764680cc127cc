"""The session factory: settings from conf/, the environment over the file, spark-submit's own master."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.runtime.config import Config, SparkSettings, load_config
from jobs.runtime.session import SparkSetupError, configure_builder, delta_jars

def test_session_is_configured_from_conf(spark):
    conf = spark.sparkContext.getConf()
    assert spark.conf.get("spark.sql.extensions") == "io.delta.sql.DeltaSparkSessionExtension"
    assert conf.get("spark.master") == "local[2]"
    assert conf.get("spark.ui.enabled") == "false"
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"


def test_missing_jars_give_an_actionable_error(tmp_path):
    with pytest.raises(SparkSetupError, match="make setup"):
        delta_jars(tmp_path / "nowhere")


def test_spark_submit_keeps_its_own_master(monkeypatch):
    from pyspark.sql import SparkSession

    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "1")
    cfg = Config(SparkSettings(master="local[7]"), Path("lake"), Path("/no/jars"), {}, Path("x"))
    builder = configure_builder(SparkSession.Builder(), cfg)
    options = builder._options
    assert "spark.master" not in options and "spark.jars" not in options
    assert options["spark.sql.shuffle.partitions"] == "8"  # SparkSettings' default, as in conf/
    assert options["spark.sql.catalog.spark_catalog"].endswith("DeltaCatalog")


def test_environment_overrides_the_yaml():
    cfg = load_config(env={"OFFSETLAKE_SPARK__MASTER": "local[3]",
                           "OFFSETLAKE_LAKE__PATH": "/data/lake",
                           "OFFSETLAKE_SPARK_CONF": '{"spark.executor.memory": "3g"}'})
    assert cfg.spark.master == "local[3]"
    assert cfg.lake_path == Path("/data/lake")
    assert cfg.spark.conf["spark.executor.memory"] == "3g"
    assert cfg.spark.conf["spark.ui.enabled"] == "false"


def test_a_short_run_gets_its_own_java_options_and_a_long_one_does_not(monkeypatch, tmp_path):
    from pyspark.sql import SparkSession

    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    cfg = load_config(env={"OFFSETLAKE_SPARK__CLASS_ARCHIVE_DIR": str(tmp_path)})  # no archive
    assert cfg.spark.short_run_java_options == \
        "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:+UseSerialGC"
    short = configure_builder(SparkSession.Builder(), cfg, short=True)._options
    long = configure_builder(SparkSession.Builder(), cfg)._options
    assert short["spark.driver.extraJavaOptions"].split()[1:] == [
        "-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=240m", "-XX:+UseSerialGC"]
    assert long["spark.driver.extraJavaOptions"].split() == [
        short["spark.driver.extraJavaOptions"].split()[0]]
    assert "log4j" in long["spark.driver.extraJavaOptions"]
    # and its queries run interpreted: no generated code to compile for a few rows
    assert cfg.spark.short_run_conf == {"spark.sql.codegen.wholeStage": "false",
                                        "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
    assert {k: short[k] for k in cfg.spark.short_run_conf} == cfg.spark.short_run_conf
    assert not set(cfg.spark.short_run_conf) & set(long)


def test_java_options_reach_every_local_driver_short_or_not(monkeypatch, tmp_path):
    from pyspark.sql import SparkSession

    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    cfg = load_config(env={"OFFSETLAKE_SPARK__CLASS_ARCHIVE_DIR": str(tmp_path),
                           "OFFSETLAKE_SPARK__JAVA_OPTIONS": "-Xss4m"})
    short = configure_builder(SparkSession.Builder(), cfg, short=True)._options
    long = configure_builder(SparkSession.Builder(), cfg)._options
    assert short["spark.driver.extraJavaOptions"].split()[1:] == [
        "-Xss4m", *cfg.spark.short_run_java_options.split()]
    assert long["spark.driver.extraJavaOptions"].split()[1:] == ["-Xss4m"]


def test_only_a_snapshot_the_driver_reads_is_a_short_run(tmp_path):
    from jobs.stages.ingest import read_in_driver

    sample = str(Path(__file__).resolve().parents[1] / "samples" / "kafka-4.3.1")
    assert read_in_driver([sample], {})                        # 19,787 bytes <= 32 MiB
    assert not read_in_driver([sample], {"local_bytes": 19786})
    assert not read_in_driver([sample], {"local_bytes": 0})    # 0: always the executors
    capture = tmp_path / "capture"
    capture.mkdir()
    (capture / "manifest.json").write_text("{}")
    assert not read_in_driver([str(capture)], {})


def test_every_local_run_maps_the_class_archive_when_setup_built_one(monkeypatch, tmp_path):
    from pyspark.sql import SparkSession

    from jobs.runtime.cds import archive_path

    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    cfg = load_config(env={"OFFSETLAKE_SPARK__CLASS_ARCHIVE_DIR": str(tmp_path / "cds")})
    archive = archive_path(cfg)
    assert archive.parent == tmp_path / "cds" and archive.suffix == ".jsa"
    archive.parent.mkdir()
    archive.write_bytes(b"archive")
    short = configure_builder(SparkSession.Builder(), cfg, short=True)._options
    long = configure_builder(SparkSession.Builder(), cfg)._options
    assert short["spark.driver.extraJavaOptions"].split()[1:] == [
        *cfg.spark.short_run_java_options.split(),
        f"-XX:SharedArchiveFile={archive}", "-Xlog:cds=off,cds+dynamic=off"]
    assert long["spark.driver.extraJavaOptions"].split()[1:] == [
        f"-XX:SharedArchiveFile={archive}", "-Xlog:cds=off,cds+dynamic=off"]
    off = load_config(env={"OFFSETLAKE_SPARK__CLASS_ARCHIVE_DIR": ""})
    assert off.spark.class_archive_dir is None and archive_path(off) is None


@pytest.mark.submit
def test_a_damaged_or_foreign_class_archive_is_ignored_by_the_jvm(tmp_path):
    """What makes the archive safe to offer: a JVM that cannot use it runs without it, silently."""
    import subprocess

    from jobs.runtime.cds import QUIET, java_binary

    damaged = tmp_path / "damaged.jsa"
    damaged.write_bytes(bytes(range(256)) * 400)
    done = subprocess.run([java_binary(), f"-XX:SharedArchiveFile={damaged}", *QUIET.split(),
                           "-version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout == "" and "openjdk version" in done.stderr.lower()
    assert "sharing" not in done.stderr and "cds" not in done.stderr.lower()

"""The one place Spark sessions are made.

``local[*]`` by default with Delta's extension and catalog, settings from ``conf/``, quiet logs,
and the Delta jars from the project's jar cache (``make setup`` fills it from Maven Central), so a
session starts with no network. Under ``spark-submit --master <any>`` the master and jars given on
the command line win: the factory only adds what is missing.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from jobs.runtime.cds import java_options as class_archive_options
from jobs.runtime.config import PROJECT_ROOT, Config, load_config

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
LOG4J_CONF = PROJECT_ROOT / "conf" / "log4j2.properties"


class SparkSetupError(RuntimeError):
    """Spark cannot be started as configured (for example the Delta jars are missing)."""


def delta_jars(jars_dir: Path) -> list[Path]:
    """The Delta jars in the cache, or a clear error that says how to get them."""
    jars = sorted(jars_dir.glob("delta-*.jar")) if jars_dir.is_dir() else []
    if not any(j.name.startswith("delta-spark") for j in jars):
        raise SparkSetupError(
            f"no Delta Lake jars in {jars_dir}: run `make setup` (it fetches them from Maven "
            "Central), or pass them yourself with spark-submit --jars/--packages")
    return jars


def _under_spark_submit() -> bool:
    # spark-submit starts the JVM first and hands pyspark its gateway; a plain `python` run does not.
    return "PYSPARK_GATEWAY_PORT" in os.environ


def driver_java_options(cfg: Config, short: bool = False) -> str:
    """The options a local driver JVM starts with: offsetlake's log settings,
    ``spark.java_options``, for a ``short`` job ``spark.short_run_java_options``, and the class
    archive (``jobs.runtime.cds``). The DAG hands them to spark-submit
    (``spark.driver.extraJavaOptions``), where no builder sets them.

    >>> cfg = load_config(env={"OFFSETLAKE_SPARK__CLASS_ARCHIVE_DIR": ""})
    >>> driver_java_options(cfg, short=True)  # doctest: +ELLIPSIS
    '-Dlog4j.configurationFile=file:.../conf/log4j2.properties -XX:TieredStopAtLevel=1 ...'
    """
    return " ".join(o for o in (f"-Dlog4j.configurationFile=file:{LOG4J_CONF}",
                                cfg.spark.java_options,
                                cfg.spark.short_run_java_options if short else "",
                                class_archive_options(cfg)) if o)


def configure_builder(builder, cfg: Config, app_name: str | None = None, short: bool = False):
    """Add offsetlake's settings to a ``SparkSession.Builder`` and return it.

    A local driver JVM maps the classes it loads from the class archive ``make setup`` built, if
    there is one (``jobs.runtime.cds``). ``short``: the job is known to be short (a small
    snapshot), so that JVM gets ``spark.short_run_java_options`` too (C1-only JIT: seconds less
    compiling on a small run), and the session ``spark.short_run_conf`` (queries interpreted, no
    generated code to compile).

    >>> from pyspark.sql import SparkSession
    >>> spark = configure_builder(SparkSession.builder, load_config()).getOrCreate()  # doctest: +SKIP
    """
    submitted = _under_spark_submit()
    builder = builder.appName(app_name or cfg.spark.app_name)
    if not submitted:
        builder = builder.master(cfg.spark.master)
        jars = ",".join(str(j) for j in delta_jars(cfg.jars_dir))
        builder = builder.config("spark.jars", jars)
        builder = builder.config("spark.driver.extraJavaOptions", driver_java_options(cfg, short))
    builder = (builder
               .config("spark.sql.extensions", DELTA_EXTENSION)
               .config("spark.sql.catalog.spark_catalog", DELTA_CATALOG)
               .config("spark.sql.shuffle.partitions", str(cfg.spark.shuffle_partitions)))
    for key, value in cfg.spark.conf.items():
        builder = builder.config(key, value)
    if short:
        for key, value in cfg.spark.short_run_conf.items():
            builder = builder.config(key, value)
    return builder


def keep_short(spark, cfg: Config) -> None:
    """Give a running session a short job's SQL settings (``spark.short_run_conf``): for a
    long-lived session whose every job is small (the test suites'), whose JVM keeps the full JIT."""
    for key, value in cfg.spark.short_run_conf.items():
        spark.conf.set(key, value)


def get_spark(cfg: Config | None = None, app_name: str | None = None, short: bool = False):
    """Build (or reuse) the Spark session for a job (``short``: see :func:`configure_builder`;
    it only matters when this call starts the JVM).

    >>> spark = get_spark()  # doctest: +SKIP
    >>> spark.range(3).count()  # doctest: +SKIP
    3
    """
    from pyspark.sql import SparkSession

    cfg = cfg or load_config()
    # Spark picks a LAN address when the hostname resolves to loopback and warns about it;
    # a local run has no use for any address but loopback.
    if cfg.spark.master.startswith("local") and not _under_spark_submit():
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        # Python workers must run the interpreter that has offsetlake installed (the venv), not
        # whatever `python3` is first on PATH.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # PySpark logs every failed query's full JVM stack trace from these loggers; the CLI reports
    # the error itself, in one line.
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    spark = configure_builder(SparkSession.builder, cfg, app_name, short).getOrCreate()
    spark.sparkContext.setLogLevel(cfg.spark.log_level)
    return spark

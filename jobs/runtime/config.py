"""Typed configuration read from ``conf/offsetlake.yaml`` with environment overrides.

``OFFSETLAKE_CONF`` names another file; ``OFFSETLAKE_<SECTION>__<KEY>`` overrides one value
(``OFFSETLAKE_SPARK__MASTER=local[2]``, ``OFFSETLAKE_LAKE__PATH=/data/lake``). Spark's own
dotted settings do not fit that pattern, so ``OFFSETLAKE_SPARK_CONF`` takes a JSON object of them
(``OFFSETLAKE_SPARK_CONF='{"spark.executor.memory": "4g"}'``), merged over ``spark.conf``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Mapping

import yaml

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CONF = PROJECT_ROOT / "conf" / "offsetlake.yaml"
ENV_PREFIX = "OFFSETLAKE_"
# Segment files are cut into byte ranges of this size for the ingest executors (--range-mb).
DEFAULT_RANGE_MB = 64


@dataclass(frozen=True)
class SparkSettings:
    master: str = "local[*]"
    app_name: str = "offsetlake"
    shuffle_partitions: int = 8
    log_level: str = "ERROR"
    conf: Mapping[str, str] = field(default_factory=dict)
    # JVM options every local driver starts with (short run or not).
    java_options: str = ""
    # JVM options added to a local driver for a short run (a snapshot the driver reads itself).
    short_run_java_options: str = ""
    # Spark settings a short job's session gets too (interpreted queries: no generated code).
    short_run_conf: Mapping[str, str] = field(default_factory=dict)
    # Where local runs find their class-data-sharing archive (jobs.runtime.cds); None: off.
    class_archive_dir: Path | None = None


@dataclass(frozen=True)
class Config:
    spark: SparkSettings
    lake_path: Path
    jars_dir: Path
    kafka: Mapping[str, Any]
    source: Path
    ingest: Mapping[str, Any] = field(default_factory=dict)   # byte bounds of the reader

    def with_lake(self, lake: str | os.PathLike | None) -> Config:
        """The same settings with another lake path (the CLI's ``--lake``)."""
        if lake is None:
            return self
        return Config(self.spark, Path(lake), self.jars_dir, self.kafka, self.source, self.ingest)


class ConfigError(ValueError):
    """The configuration file or an override is malformed."""


def _apply_env(raw: dict, env: Mapping[str, str]) -> dict:
    conf_json = env.get(ENV_PREFIX + "SPARK_CONF")
    if conf_json:
        try:
            raw.setdefault("spark", {}).setdefault("conf", {}).update(json.loads(conf_json))
        except (ValueError, AttributeError) as exc:
            raise ConfigError(f"{ENV_PREFIX}SPARK_CONF is not a JSON object: {exc}") from exc
    for name, value in env.items():
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        section, _, key = name[len(ENV_PREFIX):].lower().partition("__")
        node = raw.setdefault(section, {})
        if not isinstance(node, dict):
            raise ConfigError(f"{name}: section {section!r} is not a mapping")
        node[key] = value
    return raw


def _resolve(path_text: str) -> Path:
    path = Path(path_text).expanduser()
    return path if path.is_absolute() else PROJECT_ROOT / path


def load_config(path: str | os.PathLike | None = None,
                env: Mapping[str, str] | None = None) -> Config:
    """Read the YAML settings, apply environment overrides, return a typed :class:`Config`.

    >>> cfg = load_config(env={"OFFSETLAKE_SPARK__MASTER": "local[2]"})
    >>> cfg.spark.master
    'local[2]'
    """
    env = os.environ if env is None else env
    source = Path(path or env.get(ENV_PREFIX + "CONF") or DEFAULT_CONF)
    try:
        raw = yaml.safe_load(source.read_text()) or {}
    except OSError as exc:
        raise ConfigError(f"cannot read configuration {source}: {exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"configuration {source} is not valid YAML: {exc}") from exc
    raw = _apply_env(raw, env)
    spark_raw = dict(raw.get("spark") or {})
    try:
        spark = SparkSettings(
            master=str(spark_raw.get("master", SparkSettings.master)),
            app_name=str(spark_raw.get("app_name", SparkSettings.app_name)),
            shuffle_partitions=int(spark_raw.get("shuffle_partitions", 8)),
            log_level=str(spark_raw.get("log_level", "ERROR")).upper(),
            conf={str(k): str(v) for k, v in (spark_raw.get("conf") or {}).items()},
            java_options=str(spark_raw.get("java_options") or ""),
            short_run_java_options=str(spark_raw.get("short_run_java_options") or ""),
            short_run_conf={str(k): str(v)
                            for k, v in (spark_raw.get("short_run_conf") or {}).items()},
            class_archive_dir=(_resolve(str(spark_raw["class_archive_dir"]))
                               if spark_raw.get("class_archive_dir") else None),
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"bad spark settings in {source}: {exc}") from exc
    lake = (raw.get("lake") or {}).get("path", "./lake")
    jars = (raw.get("jars") or {}).get("dir", ".cache/jars")
    return Config(spark=spark, lake_path=Path(lake), jars_dir=_resolve(jars),
                  kafka=dict(raw.get("kafka") or {}), source=source,
                  ingest=dict(raw.get("ingest") or {}))


def load_section(name: str, path: str | os.PathLike | None = None,
                 env: Mapping[str, str] | None = None) -> dict:
    """One section of the settings as a plain mapping, environment overrides applied
    (``quality``, ``report`` and ``airflow`` are read this way by the jobs that own them).

    >>> load_section("quality", env={"OFFSETLAKE_QUALITY__MAX_DECODE_ERROR_RATE": "0.5"})["max_decode_error_rate"]
    '0.5'
    """
    env = os.environ if env is None else env
    source = Path(path or env.get(ENV_PREFIX + "CONF") or DEFAULT_CONF)
    try:
        raw = yaml.safe_load(source.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read configuration {source}: {exc}") from exc
    section = _apply_env(raw, env).get(name) or {}
    if not isinstance(section, dict):
        raise ConfigError(f"{source}: section {name!r} is not a mapping")
    return dict(section)

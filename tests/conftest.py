"""Shared fixtures (one real Spark session with Delta for the whole run) and the test tiers.

Every test is put in its tiers here, at collection, so a new test is tiered without anyone
remembering a marker (``pyproject.toml`` describes each marker; the README's "Test tiers" section
says which make target runs which):

* ``spark``: it uses the session's ``spark`` fixture, directly or through another fixture;
* ``integration``: it lives under ``tests/integration`` (a real Kafka broker);
* ``oracle``: it lives under ``tests/oracle`` or ``tests/differential`` (Kafka releases' own
  coordinators in a JVM);
* ``airflow``: it lives in ``tests/test_airflow*.py`` (Airflow in subprocesses);
* ``faults``: it lives under ``tests/faults``;
* ``unit``: none of those, nor ``submit`` or ``slow`` (which a test states itself): the tier
  ``make check`` runs.

``submit`` (a JVM in a subprocess: spark-submit, a Spark cluster, an ``offsetlake`` command that
starts Spark) cannot be seen from fixtures, so such a test says it. One that forgets fails in
``make check``, which puts a ``java`` that refuses to start first on the path
(``tests/support/no_jvm``).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from jobs.runtime.config import load_config

TESTS = Path(__file__).resolve().parent
BY_DIRECTORY = {"integration": "integration", "oracle": "oracle", "differential": "oracle",
                "faults": "faults"}
NOT_UNIT = {"spark", "submit", "airflow", "integration", "oracle", "faults", "slow"}


def tiers(item: pytest.Item) -> set[str]:
    """The tier markers the rules above give ``item`` (besides the ones it states itself)."""
    path = Path(str(item.path)).resolve()
    found = set()
    if path.is_relative_to(TESTS) and path.relative_to(TESTS).parts[0] in BY_DIRECTORY:
        found.add(BY_DIRECTORY[path.relative_to(TESTS).parts[0]])
    if "spark" in item.fixturenames:
        found.add("spark")
    if path.name.startswith("test_airflow"):
        found.add("airflow")
    return found


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for name in sorted(tiers(item) - {m.name for m in item.iter_markers()}):
            item.add_marker(name)
        if not NOT_UNIT & {m.name for m in item.iter_markers()}:
            item.add_marker("unit")


@pytest.fixture(scope="session")
def spark():
    """A real ``local[2]`` Spark session with Delta, few shuffle partitions and the UI off. Its
    queries run interpreted, as a short job's do: every test's data is small (test_lag.py and
    test_run_insights.py 390 s -> 317 s); its JVM keeps the full JIT, which a long session
    repays, and collects with the serial collector: on 2 cores G1's concurrent threads cost
    more than they save for a heap of small jobs (four modules, twice beside each other: 603 ->
    534 and 561 -> 508 CPU s, wall time no longer)."""
    from jobs.runtime.session import get_spark, keep_short

    cfg = load_config(env={"OFFSETLAKE_SPARK__MASTER": "local[2]",
                           "OFFSETLAKE_SPARK__SHUFFLE_PARTITIONS": "2",
                           "OFFSETLAKE_SPARK__JAVA_OPTIONS": "-XX:+UseSerialGC"})
    session = get_spark(cfg, app_name="offsetlake-tests")
    keep_short(session, cfg)
    yield session
    session.stop()
    # py4j says goodbye at INFO when its last connection is collected, after pytest has closed
    # the stream its log handler wrote to ("--- Logging error ---" at the end of a run).
    logging.getLogger("py4j").setLevel(logging.WARNING)


@pytest.fixture
def generated_code(spark):
    """The session as a long job's runs, for one test of a large snapshot: Spark's generated code
    back on (interpreted, the million-record ingest test takes 144 s instead of 90 s)."""
    from jobs.runtime.session import keep_short

    cfg = load_config()
    for key in cfg.spark.short_run_conf:
        spark.conf.unset(key)
    yield spark
    keep_short(spark, cfg)

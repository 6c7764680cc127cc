"""The fault suite: real CLI runs (subprocesses, real Spark and Delta) on damaged, huge, killed,
concurrent and space-starved inputs, each compared with a clean run table by table, row by row.

Every test here carries the ``faults`` marker, which ``pyproject.toml`` deselects by default;
run them with ``make faults`` (or ``pytest -m faults tests/faults``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.runs import lake_tables, run_here


def pytest_collection_modifyitems(items):
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.faults)


@pytest.fixture(scope="session")
def spark():
    """``local[1]``, collecting with the serial collector as the main suite's session does (the
    CLI runs a case measures are processes of their own, which this does not change): the
    local leg's two cases, two runs each, 311 and 330 CPU s with G1, 297 and 301 serial."""
    from jobs.runtime.config import load_config
    from jobs.runtime.session import get_spark, keep_short

    cfg = load_config(env={"OFFSETLAKE_SPARK__MASTER": "local[1]",
                           "OFFSETLAKE_SPARK__SHUFFLE_PARTITIONS": "2",
                           "OFFSETLAKE_SPARK__JAVA_OPTIONS": "-XX:+UseSerialGC"})
    session = get_spark(cfg, app_name="offsetlake-faults")
    keep_short(session, cfg)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def clean(tmp_path_factory, spark) -> dict[str, list[str]]:
    """The tables of a clean run of the bundled sample: the pipeline the CLI runs, in this
    session (``run_here``; the damaged-input case compares a CLI run with it, table by table)."""
    from tests.faults.snapshots import copy_sample

    root = tmp_path_factory.mktemp("clean")
    run_here(spark, copy_sample(root), root / "lake")
    return lake_tables(spark, root / "lake")

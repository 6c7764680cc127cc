"""The fault suite: real CLI runs (subprocesses, real Spark and Delta) on damaged, huge, killed,
concurrent and space-starved inputs, each compared with a clean run table by table, row by row.

Every test here carries the ``faults`` marker, which ``pyproject.toml`` deselects by default;
run them with ``make faults`` (or ``pytest -m faults tests/faults``). ``make test`` runs them in
the same pytest run as the main suite's tests of each leg, so they share its Spark session
(``tests/conftest.py``): their reference runs and reruns are in-session; the runs under test are
CLI processes of their own, which the session does not change.
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
def clean(tmp_path_factory, spark) -> dict[str, list[str]]:
    """The tables of a clean run of the bundled sample: the pipeline the CLI runs, in this
    session (``run_here``; the damaged-input case compares a CLI run with it, table by table)."""
    from tests.faults.snapshots import copy_sample

    root = tmp_path_factory.mktemp("clean")
    run_here(spark, copy_sample(root), root / "lake")
    return lake_tables(spark, root / "lake")

"""Shared fixtures: one real Spark session with Delta for the whole run."""

from __future__ import annotations

import logging

import pytest

from jobs.runtime.config import load_config


@pytest.fixture(scope="session")
def spark():
    """A real ``local[2]`` Spark session with Delta, few shuffle partitions and the UI off."""
    from jobs.runtime.session import get_spark

    cfg = load_config(env={"OFFSETLAKE_SPARK__MASTER": "local[2]",
                           "OFFSETLAKE_SPARK__SHUFFLE_PARTITIONS": "2"})
    session = get_spark(cfg, app_name="offsetlake-tests")
    yield session
    session.stop()
    # py4j says goodbye at INFO when its last connection is collected, after pytest has closed
    # the stream its log handler wrote to ("--- Logging error ---" at the end of a run).
    logging.getLogger("py4j").setLevel(logging.WARNING)

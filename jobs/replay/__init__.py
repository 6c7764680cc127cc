"""Replay stage (pure Python, no Spark): ``__consumer_offsets`` records → group state + tables.

See :mod:`jobs.replay.engine` for the entry points and :mod:`jobs.replay.tables` for the output
contract (``TABLE_COLUMNS``).
"""

from jobs.replay.engine import ReplayResult, apply_event, replay_group, replay_partition, split_by_group
from jobs.replay.events import ABORT, COMMIT, ReplayEvent
from jobs.lake.history import SNAPSHOT_COLUMN, TABLE_COLUMNS

__all__ = ["ReplayEvent", "ReplayResult", "replay_group", "replay_partition", "split_by_group",
           "apply_event", "TABLE_COLUMNS", "SNAPSHOT_COLUMN", "COMMIT", "ABORT"]

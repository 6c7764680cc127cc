"""Scenario plumbing: the log being built, steps, the clock, topic ids and output views."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from jobs.replay.events import ReplayEvent
from support.scenarios.log import Batch, batch_events, compact, write_partition
from support.scenarios.model import GroupModel
from support.scenarios.records import Rec

TOPIC_NAMESPACE = uuid.UUID("6f6c616b-6f66-6673-6574-6c616b650000")


def default_topic_id(name: str) -> uuid.UUID:
    """A stable topic id per topic name (real clusters assign random ones)."""
    return uuid.uuid5(TOPIC_NAMESPACE, name)


@dataclass(frozen=True)
class Step:
    """One declarative step and the offsets ``[start_offset, end_offset)`` its records took."""

    index: int
    name: str
    group_id: str
    start_offset: int
    end_offset: int


class LogView:
    """Read side shared by a scenario and its compacted view."""

    partition: int
    batches: list[Batch]

    def events(self, *, through_step: int | None = None) -> list[ReplayEvent]:
        """Decoded replay events in log order (all, or up to and including step ``through_step``)."""
        end = None if through_step is None else self.steps[through_step].end_offset
        return [e for b in self.batches for e in batch_events(b, self.partition)
                if end is None or e.offset < end]

    def write(self, directory: str | os.PathLike) -> Path:
        """Write a snapshot directory holding ``__consumer_offsets-<p>/000…0.log``; returns it."""
        write_partition(self.batches, directory, self.partition)
        return Path(directory)

    @property
    def topic_names(self) -> dict[uuid.UUID, str]:
        return {tid: name for name, tid in self._topic_ids.items()}


class CompactedView(LogView):
    """The latest record per key of a scenario's log (see :func:`support.scenarios.log.compact`)."""

    def __init__(self, source: ScenarioBase, drop_tombstones: bool):
        self.partition = source.partition
        self.batches = compact(source.batches, drop_tombstones=drop_tombstones)
        self.steps = source.steps
        self._topic_ids = source._topic_ids


class ScenarioBase(LogView):
    def __init__(self, group_id: str = "g", *, partition: int = 0,
                 start_time_ms: int = 1_700_000_000_000, tick_ms: int = 1_000,
                 assignment_epochs: bool = True, offset_commit_version: int = 4,
                 topic_ids: dict[str, uuid.UUID] | None = None):
        self.partition = partition
        self.batches: list[Batch] = []
        self.steps: list[Step] = []
        self.now_ms = start_time_ms
        self.tick_ms = tick_ms
        self.assignment_epochs = assignment_epochs
        self.offset_commit_version = offset_commit_version
        self._topic_ids = dict(topic_ids or {})
        self._groups: dict[str, GroupModel] = {}
        self._group_id = group_id
        self._step_start: int | None = None

    # ---- configuration ----------------------------------------------------------------------

    def group(self, group_id: str):
        """Make ``group_id`` the group the following steps act on (groups share the partition)."""
        self._group_id = group_id
        return self

    def topic_id(self, name: str) -> uuid.UUID:
        if name not in self._topic_ids:
            self._topic_ids[name] = default_topic_id(name)
        return self._topic_ids[name]

    def advance(self, ms: int):
        """Move the clock (record timestamps) forward."""
        self.now_ms += ms
        return self

    def compacted(self, *, drop_tombstones: bool = False) -> CompactedView:
        return CompactedView(self, drop_tombstones)

    @property
    def next_offset(self) -> int:
        return self.batches[-1].end_offset if self.batches else 0

    @property
    def model(self) -> GroupModel:
        """The writer-side model of the current group (created on first use)."""
        if self._group_id not in self._groups:
            self._groups[self._group_id] = GroupModel(self._group_id)
        return self._groups[self._group_id]

    # ---- appending ------------------------------------------------------------------------

    def _append(self, records: list[Rec], *, producer_id: int = -1, producer_epoch: int = -1,
                transactional: bool = False) -> None:
        if not records:
            return
        base = self.next_offset
        self.batches.append(Batch(base, self.now_ms,
                                  [(base + i, r) for i, r in enumerate(records)],
                                  producer_id, producer_epoch, transactional))

    def _append_marker(self, control_type: str, producer_id: int, producer_epoch: int) -> None:
        self.batches.append(Batch(self.next_offset, self.now_ms, [], producer_id, producer_epoch,
                                  True, control_type))

    def _step(self, name: str, *batches_of_records: list[Rec]):
        """Append each list of records as one atomic batch and register the step."""
        start = self.next_offset
        for records in batches_of_records:
            self._append(records)
        return self._close_step(name, start)

    def _close_step(self, name: str, start: int):
        self.steps.append(Step(len(self.steps), name, self._group_id, start, self.next_offset))
        self.now_ms += self.tick_ms
        return self

    def raw(self, record_type: int, key: dict, value: dict | None = None, *, version: int = 0,
            producer_id: int = -1, transactional: bool = False, name: str = "raw"):
        """Append a hand-built record as its own batch, bypassing the writer model (for tests of
        logs the coordinator would not write)."""
        start = self.next_offset
        self._append([Rec(record_type, key, None if value is None else version, value)],
                     producer_id=producer_id, transactional=transactional)
        return self._close_step(name, start)

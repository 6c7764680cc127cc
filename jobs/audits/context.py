"""The audit's view of one replay: the replay context plus what history rules must remember.

The audit drives the replay engine event by event (``jobs.replay.apply_event``), so every check
sees the group exactly as the coordinator held it at that log position.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from jobs.audits.evidence import LogCoverage
from jobs.replay.context import ReplayContext

# Kafka defaults the records do not carry (broker / group configs).
CONSUMER_SESSION_TIMEOUT_MS = 45_000            # group.consumer.session.timeout.ms
TRANSACTION_MAX_TIMEOUT_MS = 900_000            # transaction.max.timeout.ms
OFFSETS_RETENTION_MS = 7 * 24 * 3600 * 1000     # offsets.retention.minutes


@dataclass
class Release:
    """A partition leaving its owner: who held it, at which member epoch, and where."""

    member_id: str
    member_epoch: int
    instance_id: str | None
    position: tuple[int, int]


@dataclass
class AuditContext:
    replay: ReplayContext
    regime: str
    coverage: LogCoverage
    snapshot_time_ms: int | None = None
    session_timeout_ms: int = CONSUMER_SESSION_TIMEOUT_MS
    findings: list[dict] = field(default_factory=list)
    releases: dict[tuple[str, object], Release] = field(default_factory=dict)
    gap_commits: dict[tuple[str, object], list[tuple[dict, Release]]] = field(default_factory=dict)
    commit_owners: dict[tuple[str, str, int], tuple | None] = field(default_factory=dict)
    epoch_marks: dict[tuple, tuple[int, tuple[int, int]]] = field(default_factory=dict)
    target_known: set[str] = field(default_factory=set)
    topologies: dict[str, dict[str, str]] = field(default_factory=dict)   # topic -> subtopology
    static_left_at: dict[tuple[str, str], int] = field(default_factory=dict)
    group_tombstones: dict[str, tuple[int, int]] = field(default_factory=dict)
    conversions: dict[str, dict] = field(default_factory=dict)
    last_group_epoch: dict[str, int] = field(default_factory=dict)    # at the group's deletion
    last_record_kind: dict[str, tuple[int, bool]] = field(default_factory=dict)
    last_timestamp: int | None = None
    folded_until: int | None = None    # the log offset of the last event folded
    # The snapshot times (ms) for which the findings stay what they are: [from, until), None
    # unbounded. Narrowed by every rule that compares the snapshot's time (:meth:`past`).
    valid_from: int | None = None
    valid_until: int | None = None
    # (partition, from, until): the offsets [from, until) where a record compaction removes would
    # make a finding that is not partial partial (:meth:`gap_before` found no gap there); None:
    # nowhere. A group's records are all in its one partition of __consumer_offsets.
    evidence: tuple[int, int, int] | None = None

    def add(self, row: dict) -> None:
        self.findings.append(row)

    def gap_before(self, position: tuple[int, int], since: tuple[int, int] | None = None) -> bool:
        """Whether records were compacted away before ``position`` (since ``since``, else since
        the start of the log)."""
        start = 0 if since is None else since[1] + 1
        gap = self.coverage.has_gap(position[0], start, position[1])
        if not gap and start < position[1]:
            if self.evidence is None:
                self.evidence = (position[0], start, position[1])
            elif self.evidence[0] == position[0]:
                _, low, high = self.evidence
                self.evidence = (position[0], min(low, start), max(high, position[1]))
        return gap

    def past(self, deadline_ms: int, *, timed: bool) -> bool:
        """Whether the snapshot's time is past ``deadline_ms`` (a rule that waits for a deadline
        fires), narrowing the snapshot times for which the findings stay what they are: to
        those on the same side of the deadline, or to this very time when the rule fired and
        its finding carries the time (``timed``: an age in its message or details)."""
        now = self.snapshot_time_ms
        fired = now > deadline_ms
        if fired and timed:
            low, high = now, now + 1
        elif fired:
            low, high = deadline_ms + 1, None
        else:
            low, high = None, deadline_ms + 1
        if low is not None:
            self.valid_from = low if self.valid_from is None else max(self.valid_from, low)
        if high is not None:
            self.valid_until = high if self.valid_until is None else min(self.valid_until, high)
        return fired

    def topic_label(self, topic) -> str:
        if isinstance(topic, uuid.UUID):
            self.replay.ids_read.add(topic)
            return self.replay.topic_names.get(topic, str(topic))
        return str(topic)

    def topic_id_of(self, name: str, value: dict) -> uuid.UUID | None:
        tid = value.get("topicId")
        if isinstance(tid, uuid.UUID) and tid.int != 0:
            return tid
        return self.replay.topic_id(name)

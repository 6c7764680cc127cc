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

    def add(self, row: dict) -> None:
        self.findings.append(row)

    def gap_before(self, position: tuple[int, int], since: tuple[int, int] | None = None) -> bool:
        """Whether records were compacted away before ``position`` (since ``since``, else since
        the start of the log)."""
        start = 0 if since is None else since[1] + 1
        return self.coverage.has_gap(position[0], start, position[1])

    def topic_label(self, topic) -> str:
        if isinstance(topic, uuid.UUID):
            return self.replay.topic_names.get(topic, str(topic))
        return str(topic)

    def topic_id_of(self, name: str, value: dict) -> uuid.UUID | None:
        tid = value.get("topicId")
        if isinstance(tid, uuid.UUID) and tid.int != 0:
            return tid
        return self.replay.topic_id(name)

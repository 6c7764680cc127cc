"""Replay context: the groups and offset stores being rebuilt plus the history rows kept on the way.

The coordinator throws ``IllegalStateException`` (and fails the partition load) on a handful of
inconsistencies; replay records each as a violation row instead and carries on with what the
coordinator does once the check is lifted (KAFKA-21102 / KAFKA-21117 proposals).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from jobs.replay.events import ReplayEvent
from jobs.replay.state import CLASSIC, SHARE, Group, OffsetStore, Position

CRITICAL, HIGH, MEDIUM, INFO = "CRITICAL", "HIGH", "MEDIUM", "INFO"


@dataclass
class ReplayContext:
    """Mutable state of one replay; ``event`` is the event being applied."""

    topic_names: dict[uuid.UUID, str] = field(default_factory=dict)
    groups: dict[str, Group] = field(default_factory=dict)
    offsets: dict[str, OffsetStore] = field(default_factory=dict)
    offset_commits: list[dict] = field(default_factory=list)
    # False: ``offset_commits`` keeps only transactional commits' rows (what the replay's own
    # state needs); the audit replays commits the offset_commits table already holds.
    commit_history: bool = True
    epochs: list[dict] = field(default_factory=list)
    transactions: list[dict] = field(default_factory=list)
    violations: list[dict] = field(default_factory=list)
    event: ReplayEvent | None = None
    # What this replay asked of ``topic_names`` and told it (topic ids looked up or named, names
    # looked up): an audit's fold resumes only under names that answer those alike
    # (jobs.audits.engine.resumable).
    ids_read: set = field(default_factory=set)
    names_read: set = field(default_factory=set)
    pairs_written: set = field(default_factory=set)

    @property
    def position(self) -> Position:
        return (self.event.partition, self.event.offset)

    def name_topic(self, topic_id: uuid.UUID, name: str, *, unless_named: bool = False) -> None:
        """A record names ``topic_id``: ``name`` replaces what it was called (``unless_named``:
        only when nothing named it yet, as an offset commit does)."""
        self.pairs_written.add((topic_id, name))
        if unless_named:
            self.topic_names.setdefault(topic_id, name)
        else:
            self.topic_names[topic_id] = name

    def violation(self, rule_id: str, severity: str, group_id: str | None, message: str,
                  member_id: str | None = None) -> None:
        self.violations.append({
            "rule_id": rule_id, "severity": severity, "group_id": group_id,
            "member_id": member_id, "message": message,
            "log_partition": self.event.partition, "log_offset": self.event.offset})

    def epoch_changed(self, group_id: str, member_id: str | None, epoch_kind: str,
                      epoch: int, previous_epoch: int | None) -> None:
        """Append an ``epochs`` row when the value really changes (or first appears)."""
        if previous_epoch == epoch:
            return
        self.epochs.append({
            "group_id": group_id, "member_id": member_id, "epoch_kind": epoch_kind,
            "epoch": epoch, "previous_epoch": previous_epoch,
            "log_partition": self.event.partition, "log_offset": self.event.offset,
            "log_timestamp": self.event.timestamp})

    def topic_name(self, topic_id: uuid.UUID | None) -> str | None:
        if topic_id is None:
            return None
        self.ids_read.add(topic_id)
        return self.topic_names.get(topic_id)

    def topic_id(self, topic_name: str) -> uuid.UUID | None:
        self.names_read.add(topic_name)
        for tid, name in self.topic_names.items():
            if name == topic_name:
                return tid
        return None

    # ---- group lookup with the coordinator's typing rules (reference §2.3) --------------------

    def existing_group(self, group_id: str, group_type: str) -> Group | None:
        """The group if it exists with this type; tombstones of another type are no-ops."""
        group = self.groups.get(group_id)
        if group is None or group.group_type == group_type:
            return group
        if not group.is_simple:
            self.violation("MG-01", CRITICAL, group_id,
                           f"{group_type} tombstone for a live {group.group_type} group; ignored")
        return None

    def modern_group(self, group_id: str, group_type: str) -> Group:
        """getOrMaybeCreatePersisted*Group: create, reuse, or replace a simple classic group.

        Any other existing type makes the coordinator throw (load failure); we record MG-01 and
        replace the group, as KAFKA-21117 proposes."""
        group = self.groups.get(group_id)
        if group is not None and group.group_type == group_type:
            return group
        if group is not None and not group.is_simple:
            self.violation("MG-01", CRITICAL, group_id,
                           f"{group_type} record for a live {group.group_type} group "
                           f"(protocol type {group.protocol_type!r}); the coordinator would fail "
                           f"to load, replaced by a new {group_type} group")
        elif group is not None and group_type == SHARE:
            # getOrMaybeCreatePersistedShareGroup replaces no simple group (consumer and streams
            # groups do): every release fails the load here.
            self.violation("MG-01", CRITICAL, group_id,
                           "share-group record for an offset-created simple group; the "
                           "coordinator would fail to load, replaced by a new share group")
        group = Group(group_id, group_type)
        self.groups[group_id] = group
        return group

    def simple_group(self, group_id: str) -> None:
        """An offset commit for an unknown group id creates an empty simple classic group."""
        if group_id not in self.groups:
            self.groups[group_id] = Group(group_id, CLASSIC, position=self.position)

    def offset_store(self, group_id: str) -> OffsetStore:
        store = self.offsets.get(group_id)
        if store is None:
            store = self.offsets[group_id] = OffsetStore()
        return store

"""In-memory group state rebuilt by replay, mirroring the coordinator's objects.

A group id maps to at most one :class:`Group`; its ``group_type`` is one of Kafka's four types
(``classic``, ``consumer``, ``share``, ``streams``). A *simple* group is a classic group without a
protocol type and without members (created by an offset commit). Offsets live apart from groups
(:class:`OffsetStore`): they are keyed by group id only and survive every conversion and deletion.

``Position`` is the log position ``(partition, offset)`` of the record that last changed a row.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

Position = tuple[int, int]
TopicPartition = tuple[uuid.UUID, int]          # (topic id, partition) as in types 7/8
OffsetKey = tuple[str, int]                     # (topic name, partition) as in types 0/1

CLASSIC, CONSUMER, SHARE, STREAMS = "classic", "consumer", "share", "streams"

# Kafka's MemberState (type-8 ``State`` byte); any unmapped byte reads as UNKNOWN.
MEMBER_STATES = {0: "STABLE", 1: "UNREVOKED_PARTITIONS", 2: "UNRELEASED_PARTITIONS"}
UNKNOWN_MEMBER_STATE = "UNKNOWN"
LEAVE_EPOCH = -1          # in-memory epoch after a type-8 tombstone; never in a live record
STATIC_LEAVE_EPOCH = -2   # static member's temporary leave


def member_state_name(state: int | None) -> str:
    return MEMBER_STATES.get(state, UNKNOWN_MEMBER_STATE)


@dataclass(slots=True)
class AssignedPartition:
    """One owned partition with its effective KIP-1251 assignment epoch and where that came from
    (``explicit``, ``legacy_null``, ``length_mismatch``; ``classic`` for classic assignments)."""

    assignment_epoch: int
    assignment_epoch_source: str


@dataclass(slots=True)
class Member:
    """A member of a modern (consumer/share/streams) group or of a classic group."""

    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: list[str] = field(default_factory=list)
    subscribed_topic_regex: str | None = None
    rebalance_timeout_ms: int = -1
    session_timeout_ms: int | None = None
    server_assignor: str | None = None
    uses_classic_protocol: bool = False
    # Kafka's ConsumerGroupMember.Builder defaults: a member created by a type-5 record alone.
    member_epoch: int | None = 0
    previous_member_epoch: int | None = -1
    member_state: str | None = "STABLE"
    assigned: dict[TopicPartition, AssignedPartition] = field(default_factory=dict)
    pending_revocation: dict[TopicPartition, AssignedPartition] = field(default_factory=dict)
    # Classic members: assignment decoded from the ConsumerProtocolAssignment blob, by topic name.
    classic_assignment: list[tuple[str, int]] = field(default_factory=list)
    metadata_position: Position | None = None
    assignment_position: Position | None = None

    @property
    def position(self) -> Position | None:
        known = [p for p in (self.metadata_position, self.assignment_position) if p is not None]
        return max(known) if known else None

    def owned(self) -> set[TopicPartition]:
        return set(self.assigned) | set(self.pending_revocation)


@dataclass(slots=True)
class TargetMember:
    """A member's target assignment (type 7/13); the member need not exist."""

    partitions: set[TopicPartition]
    position: Position


@dataclass(slots=True)
class Group:
    group_id: str
    group_type: str
    group_epoch: int = 0
    target_assignment_epoch: int = 0
    # classic groups (type 2)
    generation: int | None = None
    protocol_type: str | None = None
    protocol: str | None = None
    leader: str | None = None
    current_state_timestamp: int | None = None
    members: dict[str, Member] = field(default_factory=dict)
    target: dict[str, TargetMember] = field(default_factory=dict)
    # ownership index: partition -> (member id, member epoch at which it was registered)
    ownership: dict[TopicPartition, tuple[str, int]] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)       # instance id -> member id
    resolved_regexes: dict[str, list[str]] = field(default_factory=dict)
    topology_epoch: int | None = None                                  # streams type 23
    position: Position | None = None

    @property
    def is_simple(self) -> bool:
        return self.group_type == CLASSIC and not self.protocol_type and not self.members


@dataclass(slots=True)
class OffsetEntry:
    """A committed offset in the main store (what offset fetch returns)."""

    committed_offset: int
    leader_epoch: int | None
    metadata: str
    commit_timestamp: int | None
    expire_timestamp: int | None
    topic_id: uuid.UUID | None
    position: Position
    producer_id: int = -1
    commit_row: int | None = None        # index of the offset_commits row this came from


@dataclass(slots=True)
class Transaction:
    """Open transactional offsets of one producer for one group (pending until its marker)."""

    producer_id: int
    first_position: Position
    last_position: Position
    pending: dict[OffsetKey, OffsetEntry] = field(default_factory=dict)
    commit_rows: list[int] = field(default_factory=list)
    offset_count: int = 0


@dataclass(slots=True)
class OffsetStore:
    """Main store plus open transactions (``pending`` per producer id) of one group."""

    main: dict[OffsetKey, OffsetEntry] = field(default_factory=dict)
    open_transactions: dict[int, Transaction] = field(default_factory=dict)

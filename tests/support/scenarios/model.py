"""The scenario builder's model of what the coordinator holds in memory (the *writer* side).

Replay (``jobs.replay``) rebuilds state from records; this model decides which records a 4.x
coordinator writes. Partitions are ``(topic name, partition)`` here; records carry topic ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TP = tuple[str, int]


class ScenarioError(ValueError):
    """A step the coordinator would refuse (unknown member, wrong group type, ...)."""


@dataclass
class ConsumerMember:
    member_id: str
    subscribe: list[str]
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = "consumer"
    client_host: str = "/127.0.0.1"
    rebalance_timeout_ms: int = 300_000
    server_assignor: str | None = "uniform"
    # ClassicMemberMetadata (tag 0) for members that speak the classic protocol:
    # {"sessionTimeoutMs": int, "supportedProtocols": [{"name", "metadata"}]}
    classic: dict | None = None
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: int = 0                      # 0 STABLE, 1 UNREVOKED_PARTITIONS, 2 UNRELEASED_PARTITIONS
    assigned: dict[TP, int] = field(default_factory=dict)            # partition -> assignment epoch
    pending_revocation: dict[TP, int] = field(default_factory=dict)

    def snapshot(self) -> tuple:
        return (self.member_epoch, self.previous_member_epoch, self.state,
                dict(self.assigned), dict(self.pending_revocation))

    def held(self) -> set[TP]:
        return set(self.assigned) | set(self.pending_revocation)


@dataclass
class ClassicMember:
    member_id: str
    subscribe: list[str]
    assignment: list[TP] = field(default_factory=list)
    instance_id: str | None = None
    client_id: str = "consumer"
    client_host: str = "/127.0.0.1"
    session_timeout_ms: int = 45_000
    rebalance_timeout_ms: int = 300_000
    generation_id: int = -1            # generation of the member's last assignment (subscription v2+)


@dataclass
class GroupModel:
    group_id: str
    group_type: str | None = None      # None (no group record yet / simple), "consumer", "classic"
    group_epoch: int = 0
    target_epoch: int = 0
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    target: dict[str, set[TP]] = field(default_factory=dict)
    generation: int = 0
    protocol: str | None = None
    leader: str | None = None
    classic_members: dict[str, ClassicMember] = field(default_factory=dict)
    committed: set[TP] = field(default_factory=set)
    pending: dict[int, set[TP]] = field(default_factory=dict)         # producer id -> keys

    def member(self, member_id: str) -> ConsumerMember:
        if member_id not in self.members:
            raise ScenarioError(f"{self.group_id}: unknown member {member_id}")
        return self.members[member_id]

    def static_member(self, instance_id: str) -> ConsumerMember:
        for m in self.members.values():
            if m.instance_id == instance_id:
                return m
        raise ScenarioError(f"{self.group_id}: no member with instance id {instance_id}")

    def held_by_others(self, member_id: str) -> set[TP]:
        return {tp for mid, m in self.members.items() if mid != member_id for tp in m.held()}


def next_assignment(group: GroupModel, member: ConsumerMember, owned: set[TP] | None) -> None:
    """Kafka's CurrentAssignmentBuilder: move ``member`` towards its target (in place).

    ``owned`` is what the heartbeat reports (None = not reported, counts as still owning)."""
    if member.state == 0 and member.member_epoch == group.target_epoch:
        return
    if member.state == 1 and _owns_any(member.pending_revocation, owned):
        return
    target = {tp for tp in group.target.get(member.member_id, set()) if tp[0] in member.subscribe}
    kept = {tp: e for tp, e in member.assigned.items() if tp in target}
    revoking = {tp: e for tp, e in member.assigned.items() if tp not in target}
    others = group.held_by_others(member.member_id)
    wanted = target - set(kept)
    unreleased = {tp for tp in wanted if tp in others and tp not in member.pending_revocation}
    wanted -= unreleased
    if revoking and _owns_any(revoking, owned):
        _update_epoch(member, member.member_epoch)
        member.state, member.assigned, member.pending_revocation = 1, kept, revoking
        return
    kept.update({tp: group.target_epoch for tp in wanted})
    _update_epoch(member, group.target_epoch)
    member.state = 2 if unreleased else 0
    member.assigned, member.pending_revocation = kept, {}


def _owns_any(partitions, owned: set[TP] | None) -> bool:
    return owned is None or any(tp in owned for tp in partitions)


def _update_epoch(member: ConsumerMember, epoch: int) -> None:
    member.previous_member_epoch, member.member_epoch = member.member_epoch, epoch

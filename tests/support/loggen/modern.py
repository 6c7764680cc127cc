"""The writer-side model shared by share and streams groups (the scenario builder covers only
classic and consumer groups): group epoch, target assignment epoch, members, their targets and
current assignments, and the write order every KIP-848-style group uses:

* join: member record, then the group-epoch bump;
* target assignment: one target record per member whose target changed, then the epoch record;
* heartbeat: the member's current-assignment record;
* leave: current-assignment, target and member tombstones, then the epoch bump;
* deletion (empty group): offset tombstones, target-metadata tombstone, the kind's group-level
  tombstones, epoch tombstone (``ShareGroup``/``StreamsGroup.createGroupTombstoneRecords``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from support.loggen.life import GroupLife, pick
from support.loggen.records import LogRec
from support.scenarios import records as R


@dataclass
class ModernMember:
    member_id: str
    subscribe: list[str]
    member_epoch: int = 0
    previous_member_epoch: int = -1
    assigned: dict = field(default_factory=dict)        # unit (tp or task) -> assignment epoch
    pending_revocation: dict = field(default_factory=dict)


class ModernGroup(GroupLife):
    KIND = ""
    # record types: member, epoch, target member, target metadata, current assignment
    MEMBER = EPOCH = TARGET = TARGET_METADATA = CURRENT = 0

    def __init__(self, ctx):
        super().__init__(ctx)
        self.group_epoch = 0
        self.target_epoch = 0
        self.members: dict[str, ModernMember] = {}
        self.target: dict[str, set] = {}

    def run(self):
        """A few dozen writes; sometimes every member leaves and the group is deleted."""
        rng = self.rng
        for _ in range(rng.randint(3, 18)):
            if not self.maybe_irregular(self.KIND, self.irregular_actions()):
                action = pick(rng, self.actions())
                if action is not None:
                    action()
            yield
        if rng.random() < 0.3:
            for mid in sorted(self.members):
                self.leave(mid)
                yield
            self.delete()

    def actions(self) -> list:
        """(weight, action) pairs possible now."""
        raise NotImplementedError

    def irregular_actions(self) -> list:
        return []

    def key(self, member_id: str | None = None) -> dict:
        gid = self.ctx.group_id
        return {"groupId": gid} if member_id is None else {"groupId": gid, "memberId": member_id}

    def epoch_record(self) -> LogRec:
        raise NotImplementedError

    def join_records(self, m: ModernMember) -> list[LogRec]:
        raise NotImplementedError

    def join(self, m: ModernMember) -> None:
        self.members[m.member_id] = m
        self.group_epoch += 1
        self.emit([*self.join_records(m), self.epoch_record()])

    def compute_target(self, target: dict[str, set], records) -> None:
        """``records(member_id, units)`` builds a target record."""
        if self.group_epoch <= self.target_epoch:
            self.group_epoch += 1
            self.emit([self.epoch_record()])
        changed = [records(mid, target[mid]) for mid in self.members
                   if target.get(mid, set()) != self.target.get(mid)]
        self.target = {mid: set(target.get(mid, set())) for mid in self.members}
        self.target_epoch = self.group_epoch
        self.emit([*changed, self.target_metadata_record()])

    def target_metadata_record(self) -> LogRec:
        value = {"assignmentEpoch": self.target_epoch}
        if self.ctx.era >= (4, 3):
            value["assignmentTimestamp"] = self.ctx.now_ms
        return LogRec(self.TARGET_METADATA, self.key(), 0, value)

    def leave(self, member_id: str) -> None:
        del self.members[member_id]
        self.target.pop(member_id, None)
        self.group_epoch += 1
        self.emit([LogRec(t, self.key(member_id)) for t in (self.CURRENT, self.TARGET, self.MEMBER)]
                  + [self.epoch_record()])

    def offset_tombstones(self) -> list[LogRec]:
        """DeleteGroups: tombstones for every committed (or pending transactional) offset."""
        g = self.s.model
        keys = sorted(g.committed | {tp for ks in g.pending.values() for tp in ks})
        g.committed = set()
        return [R.offset_tombstone(self.ctx.group_id, tp) for tp in keys]

    def group_tombstones(self) -> list[LogRec]:
        raise NotImplementedError

    def delete(self) -> None:
        if not self.members:
            self.emit([*self.offset_tombstones(), *self.group_tombstones()])
            self.group_epoch = self.target_epoch = 0
            self.target = {}

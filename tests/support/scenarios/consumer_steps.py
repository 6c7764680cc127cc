"""Consumer-group (KIP-848) steps and the records a 4.x coordinator writes for each, in order.

* join: member metadata (5), group epoch bump (3);
* target assignment computed: one type 7 per member whose target changed, then type 6;
* heartbeat (revoke / converge): type 8 when the member's assignment or epoch changes;
* leave / session timeout: tombstones 8, 7, 5, then group epoch bump (3);
* static leave (epoch -2): one type 8, assignment kept, pending revocation dropped;
* static rejoin: old member's 8, 7, 5 tombstones, then 5, 7, 8 for the new member id (epoch 0);
* metadata change (e.g. partitions added): group epoch bump (3).

A real heartbeat that joins usually also computes the target and reconciles in the same batch;
the KIP-848 case studies show those as separate steps, so they are separate steps here.
"""

from __future__ import annotations

import copy

from support.scenarios import records as R
from support.scenarios.model import ConsumerMember, ScenarioError, next_assignment

HELD = object()   # heartbeat default: the client reports every partition it holds


class ConsumerSteps:
    def _current(self, m: ConsumerMember) -> R.Rec:
        return R.current_assignment(self.model.group_id, m, self.topic_id, self.assignment_epochs)

    def _consumer_group(self) -> list[R.Rec]:
        """Records that make the group a consumer group (offline upgrade of an empty classic group)."""
        g = self.model
        if g.group_type == "consumer":
            return []
        if g.group_type == "classic" and g.classic_members:
            raise ScenarioError(f"{g.group_id}: non-empty classic group; use upgrade_to_consumer")
        prefix = [R.Rec(2, {"group": g.group_id})] if g.group_type == "classic" else []
        g.group_type, g.group_epoch, g.target_epoch = "consumer", 0, 0
        return prefix

    def consumer_join(self, member_id: str, subscribe: list[str], *, instance_id: str | None = None,
                      rack_id: str | None = None, client_id: str = "consumer",
                      assignor: str | None = "uniform", classic: dict | None = None):
        """A new member's first heartbeat (epoch 0): type 5 then type 3 (group epoch + 1)."""
        prefix = self._consumer_group()
        g = self.model
        if member_id in g.members:
            raise ScenarioError(f"{g.group_id}: member {member_id} already joined")
        m = g.members[member_id] = ConsumerMember(
            member_id, list(subscribe), instance_id=instance_id, rack_id=rack_id,
            client_id=client_id, server_assignor=assignor, classic=classic)
        g.group_epoch += 1
        return self._step(f"join {member_id}", [*prefix, R.member_metadata(g.group_id, m),
                                                 R.group_epoch(g.group_id, g.group_epoch)])

    def compute_target(self, assignment: dict[str, dict[str, list[int]]], *,
                       epoch: int | None = None):
        """Install a new target assignment (all members; absent ones get nothing)."""
        g = self.model
        unknown = set(assignment) - set(g.members)
        if unknown:
            raise ScenarioError(f"{g.group_id}: target for unknown members {sorted(unknown)}")
        new_epoch = g.group_epoch if epoch is None else epoch
        if new_epoch <= g.target_epoch:
            raise ScenarioError(f"{g.group_id}: target epoch {new_epoch} does not advance past "
                                f"{g.target_epoch} (bump the group epoch first)")
        records = []
        for member_id in g.members:
            new = {(t, p) for t, ps in assignment.get(member_id, {}).items() for p in ps}
            if new != g.target.get(member_id, set()):
                records.append(R.target_member(g.group_id, member_id, new, self.topic_id))
            g.target[member_id] = new
        g.target_epoch = new_epoch
        records.append(R.target_epoch(g.group_id, g.target_epoch))
        return self._step(f"target assignment epoch {g.target_epoch}", records)

    def heartbeat(self, member_id: str, owned=HELD, *, name: str | None = None):
        """One heartbeat reconciled by CurrentAssignmentBuilder; type 8 only if something changed.

        ``owned`` lists ``(topic, partition)`` the client reports (default: all it holds)."""
        g = self.model
        m = g.member(member_id)
        before = m.snapshot()
        reported = m.held() if owned is HELD else (None if owned is None else set(owned))
        next_assignment(g, m, reported)
        records = [self._current(m)] if m.snapshot() != before else []
        return self._step(name or f"heartbeat {member_id}", records)

    def revoke(self, member_id: str):
        """Heartbeat while still holding partitions the target takes away: UNREVOKED_PARTITIONS."""
        g = self.model
        probe = copy.deepcopy(g.member(member_id))
        next_assignment(g, probe, probe.held())
        if probe.state != 1:
            raise ScenarioError(f"{member_id} has nothing to revoke")
        return self.heartbeat(member_id, name=f"revoke {member_id}")

    def converge(self, member_id: str):
        """Heartbeat acknowledging every revocation: the member moves towards its target."""
        g = self.model
        m = g.member(member_id)
        keep = {tp for tp in m.assigned if tp in g.target.get(member_id, set())}
        return self.heartbeat(member_id, keep, name=f"converge {member_id}")

    def _remove(self, member_id: str, name: str):
        g = self.model
        g.member(member_id)
        del g.members[member_id]
        g.target.pop(member_id, None)
        g.group_epoch += 1
        return self._step(name, [R.tombstone(8, g.group_id, member_id),
                                 R.tombstone(7, g.group_id, member_id),
                                 R.tombstone(5, g.group_id, member_id),
                                 R.group_epoch(g.group_id, g.group_epoch)])

    def leave(self, member_id: str):
        """Heartbeat with epoch -1."""
        return self._remove(member_id, f"leave {member_id}")

    def session_timeout(self, member_id: str):
        """The coordinator fences a member that stopped heartbeating."""
        return self._remove(member_id, f"session timeout {member_id}")

    def static_leave(self, member_id: str):
        """Heartbeat with epoch -2 by a static member: partitions kept, epochs (KIP-1251) reset."""
        m = self.model.member(member_id)
        if not m.instance_id:
            raise ScenarioError(f"{member_id} is not a static member")
        m.member_epoch, m.pending_revocation = -2, {}
        m.assigned = {tp: 0 for tp in m.assigned}
        return self._step(f"static leave {member_id}", [self._current(m)])

    def static_rejoin(self, new_member_id: str, instance_id: str):
        """The instance comes back with a new member id and takes over the old member's state."""
        g = self.model
        old = g.static_member(instance_id)
        if old.member_epoch != -2:
            raise ScenarioError(f"UNRELEASED_INSTANCE_ID: {old.member_id} has not left")
        target = g.target.pop(old.member_id, set())
        del g.members[old.member_id]
        new = ConsumerMember(new_member_id, old.subscribe, instance_id=instance_id,
                             rack_id=old.rack_id, client_id=old.client_id,
                             server_assignor=old.server_assignor, classic=old.classic,
                             member_epoch=0, previous_member_epoch=0, state=old.state,
                             assigned={tp: 0 for tp in old.assigned})
        g.members[new_member_id] = new
        g.target[new_member_id] = target
        return self._step(f"static rejoin {instance_id} as {new_member_id}", [
            R.tombstone(8, g.group_id, old.member_id), R.tombstone(7, g.group_id, old.member_id),
            R.tombstone(5, g.group_id, old.member_id), R.member_metadata(g.group_id, new),
            R.target_member(g.group_id, new_member_id, target, self.topic_id),
            self._current(new)])

    def metadata_change(self, *, name: str = "metadata change"):
        """The coordinator sees new topic metadata (e.g. partitions added): group epoch + 1."""
        g = self.model
        g.group_epoch += 1
        return self._step(name, [R.group_epoch(g.group_id, g.group_epoch)])

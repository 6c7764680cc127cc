"""Classic-group steps and classic ⇄ consumer conversions (reference §2.4, §2.5).

* classic rebalance: one GroupMetadataValue v3 (protocol type ``consumer``) with every member's
  subscription and assignment; an empty member list is the "group became empty" record;
* online upgrade: GroupMetadata tombstone, then per member type 5, type 3 (epoch = generation),
  type 7 per member, type 6 (epoch = generation), type 8 per member (epochs = generation, STABLE),
  then the joining member's own records — one atomic batch;
* online downgrade: the consumer tombstone sequence (8s, 7s, 6, 5s, 4, 3) followed by a
  GroupMetadata with generation = group epoch, leader null, assignments = target assignments.
"""

from __future__ import annotations

from support.scenarios import records as R
from support.scenarios.model import ClassicMember, ConsumerMember, ScenarioError


class ClassicSteps:
    def classic_rebalance(self, members: dict[str, dict], *, protocol: str = "range",
                          leader: str | None = None, generation: int | None = None):
        """Complete a classic rebalance. ``members``: ``{member_id: {"subscribe": [...],
        "assignment": {topic: [partitions]}, "instance_id": optional}}``. On an empty consumer
        group this is the offline downgrade: its tombstones come first, in the same batch."""
        g = self.model
        prefix = []
        if g.group_type == "consumer":
            if g.members:
                raise ScenarioError(f"{g.group_id}: consumer group; use downgrade_to_classic")
            prefix = self._group_tombstones()      # offline downgrade of an empty group
            self._forget_group()
        previous = g.classic_members
        g.generation = g.generation + 1 if generation is None else generation
        g.group_type, g.classic_members = "classic", {}
        entries = []
        for member_id, spec in members.items():
            old = previous.get(member_id)
            m = ClassicMember(member_id, list(spec["subscribe"]),
                              [(t, p) for t, ps in spec.get("assignment", {}).items() for p in ps],
                              instance_id=spec.get("instance_id"),
                              generation_id=old.generation_id if old else -1)
            owned = old.assignment if old else []
            entries.append(R.classic_member_entry(m, R.subscription_blob(m, owned),
                                                  R.assignment_blob(m.assignment)))
            m.generation_id = g.generation
            g.classic_members[member_id] = m
        g.protocol = protocol if members else None
        g.leader = (leader or next(iter(members))) if members else None
        return self._step(f"classic rebalance generation {g.generation}", [*prefix, R.group_metadata(
            g.group_id, generation=g.generation, protocol=g.protocol, leader=g.leader,
            members=entries, timestamp=self.now_ms)])

    def _classic_metadata(self, m: ClassicMember, protocol: str) -> dict:
        return {"sessionTimeoutMs": m.session_timeout_ms, "supportedProtocols": [
            {"name": protocol, "metadata": R.subscription_blob(m, m.assignment)}]}

    def upgrade_to_consumer(self, member_id: str, subscribe: list[str] | None = None):
        """A consumer-protocol heartbeat converts a non-empty classic group (online upgrade).

        If ``member_id`` is one of the classic members (the KIP-848 case study's "A leaves and
        rejoins with the new protocol"), it keeps its converted state and only its metadata is
        rewritten without classic metadata; otherwise it joins (type 5, group epoch + 1)."""
        g = self.model
        if g.group_type != "classic" or not g.classic_members:
            raise ScenarioError(f"{g.group_id}: online upgrade needs a non-empty classic group")
        generation, protocol = g.generation, g.protocol
        members = {}
        for mid, cm in g.classic_members.items():
            members[mid] = ConsumerMember(
                mid, cm.subscribe, instance_id=cm.instance_id, client_id=cm.client_id,
                client_host=cm.client_host, rebalance_timeout_ms=cm.rebalance_timeout_ms,
                server_assignor=None, classic=self._classic_metadata(cm, protocol),
                member_epoch=generation, previous_member_epoch=generation,
                assigned={tp: generation for tp in cm.assignment})
        g.group_type, g.group_epoch, g.target_epoch = "consumer", generation, generation
        g.members, g.classic_members = members, {}
        g.target = {mid: set(m.assigned) for mid, m in members.items()}
        gid = g.group_id
        records = [R.Rec(2, {"group": gid}),
                   *(R.member_metadata(gid, m) for m in members.values()),
                   R.group_epoch(gid, generation),
                   *(R.target_member(gid, mid, g.target[mid], self.topic_id) for mid in members),
                   R.target_epoch(gid, generation),
                   *(self._current(m) for m in members.values())]
        if member_id in members:
            m = members[member_id]
            m.classic, m.server_assignor = None, "uniform"
            if subscribe is not None:
                m.subscribe = list(subscribe)
            records.append(R.member_metadata(gid, m))
        else:
            m = members[member_id] = ConsumerMember(member_id, list(subscribe or []))
            g.group_epoch += 1
            records += [R.member_metadata(gid, m), R.group_epoch(gid, g.group_epoch)]
        return self._step(f"upgrade to consumer by {member_id}", records)

    def downgrade_to_classic(self, leaving_member_id: str):
        """The last consumer-protocol member leaves; the remaining classic-protocol members form
        a classic group (generation = group epoch, assignments = target assignments)."""
        g = self.model
        g.member(leaving_member_id)
        remaining = [m for mid, m in g.members.items() if mid != leaving_member_id]
        if not remaining or any(m.classic is None for m in remaining):
            raise ScenarioError(f"{g.group_id}: downgrade needs only classic-protocol members left")
        gid, ids = g.group_id, list(g.members)
        records = [*(R.tombstone(8, gid, mid) for mid in ids),
                   *(R.tombstone(7, gid, mid) for mid in ids), R.tombstone(6, gid),
                   *(R.tombstone(5, gid, mid) for mid in ids), R.tombstone(4, gid),
                   R.tombstone(3, gid)]
        protocol = remaining[0].classic["supportedProtocols"][0]["name"]
        entries, classic_members = [], {}
        for m in remaining:
            target = sorted(g.target.get(m.member_id, set()))
            cm = ClassicMember(m.member_id, m.subscribe, target, instance_id=m.instance_id,
                               client_id=m.client_id, client_host=m.client_host,
                               session_timeout_ms=m.classic["sessionTimeoutMs"],
                               rebalance_timeout_ms=m.rebalance_timeout_ms,
                               generation_id=g.group_epoch)
            subscription = m.classic["supportedProtocols"][0]["metadata"]
            entries.append(R.classic_member_entry(cm, subscription, R.assignment_blob(target)))
            classic_members[m.member_id] = cm
        records.append(R.group_metadata(gid, generation=g.group_epoch, protocol=protocol,
                                        leader=None, members=entries, timestamp=self.now_ms))
        g.group_type, g.generation, g.protocol, g.leader = "classic", g.group_epoch, protocol, None
        g.classic_members, g.members, g.target = classic_members, {}, {}
        g.group_epoch = g.target_epoch = 0
        return self._step(f"downgrade to classic ({leaving_member_id} leaves)", records)

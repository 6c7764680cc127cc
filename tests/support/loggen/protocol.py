"""Groups of the ``consumer`` protocol type, classic or KIP-848, and the conversions between them.

A :class:`ProtocolGroup` starts as a classic group (join/sync cycles, one GroupMetadata per
completed rebalance, an empty record when the last member leaves) or as a consumer group, and may
convert (replay reference §2.5, 4.0+ with the default ``bidirectional`` migration policy):

* online upgrade: a consumer-protocol heartbeat to a non-empty classic group;
* offline upgrade: a consumer-protocol heartbeat to an empty classic group;
* online downgrade: the last consumer-protocol member leaves, only classic-protocol members stay;
* offline downgrade: a classic JoinGroup to an empty consumer group.

The scenario builder writes each conversion as one batch in the coordinator's order.
"""

from __future__ import annotations

import copy

from support.loggen.consumer import ConsumerPhase
from support.loggen.irregular import member_id
from support.loggen.life import key_of, pick
from support.loggen.records import LogRec, log_rec
from support.scenarios import records as R


class ProtocolGroup(ConsumerPhase):
    def __init__(self, ctx, kind: str):
        super().__init__(ctx)
        self.kind = kind                                 # classic | consumer | conversion
        self.topics = self.sample(ctx.cluster.topics, 2)
        self.protocol = self.rng.choices(("range", "cooperative-sticky", "stream"), (5, 4, 1))[0]

    def run(self):
        rng, g = self.rng, self.s.model
        if self.kind == "consumer" and rng.random() < 0.2:
            self.commit(self.sample(self.topic_partitions(self.topics)))   # a simple group first
            yield
        for _ in range(rng.randint(4, 28)):
            if not self.maybe_irregular(self.kind_now(), self.irregular_actions()):
                action = (self.consumer_pick() if g.group_type == "consumer" or
                          (g.group_type is None and self.kind == "consumer")
                          else pick(rng, self.classic_actions()))
                if action is not None:
                    action()
            yield
        yield from self.finish()

    def kind_now(self) -> str:
        return {"consumer": "consumer", "classic": "classic"}.get(self.s.model.group_type, "simple")

    # ---- classic phase ------------------------------------------------------------------------

    def classic_members(self, members: dict) -> dict:
        """A rebalance's outcome: every member subscribes to the group's topics, partitions are
        spread over them (``members``: member id -> instance id or None)."""
        ids = list(members)
        spec = {mid: {"subscribe": self.topics, "assignment": {}, "instance_id": members[mid]}
                for mid in ids}
        start = self.rng.randrange(len(ids)) if ids else 0
        for i, (topic, p) in enumerate(self.topic_partitions(self.topics)):
            if ids:
                spec[ids[(start + i) % len(ids)]]["assignment"].setdefault(topic, []).append(p)
        return spec

    def classic_actions(self) -> list:
        g, rng, era = self.s.model, self.rng, self.ctx.era
        members = {mid: m.instance_id for mid, m in g.classic_members.items()}
        # Kafka Streams' classic groups carry userData the conversion cannot take over.
        converts = 0 if self.protocol == "stream" else 3 if self.kind == "conversion" else 0.4
        return [
            (4, lambda: self.rebalance(members)),
            (0.8 if members else 0, lambda: self.step(self.s.classic_rebalance, {})),
            (2.5 if members else 0, lambda: self.commit(self.sample(
                g.classic_members[rng.choice(sorted(members))].assignment or
                self.topic_partitions(self.topics)))),
            (0.6 if members else 0, lambda: self.start_transaction(self.sample(
                self.topic_partitions(self.topics)))),
            (converts if era >= (4, 0) and members else 0, lambda: self.upgrade(members)),
            (converts / 2 if era >= (4, 0) and not members and g.group_type == "classic" else 0,
             self.offline_upgrade),
            (0.4 if not members else 0, lambda: self.commit(self.sample(
                self.topic_partitions(self.topics)), rewind=rng.random() < 0.3)),
        ]

    def rebalance(self, members: dict) -> None:
        rng = self.rng
        kept = {mid: iid for mid, iid in members.items() if rng.random() < 0.75}
        while len(kept) < rng.randint(1, 4):
            kept[member_id(rng, "consumer-")] = self.new_instance_id() if rng.random() < 0.2 else None
        self.step(self.s.classic_rebalance, self.classic_members(kept), protocol=self.protocol)

    def upgrade(self, members: dict) -> None:
        joining = (self.rng.choice(sorted(members)) if self.rng.random() < 0.5
                   else member_id(self.rng, "c"))
        offsets = self.step(self.s.upgrade_to_consumer, joining, self.topics)
        self.ctx.mark("conversion_upgrade", offsets)

    def offline_upgrade(self) -> None:
        offsets = self.step(self.s.consumer_join, member_id(self.rng, "c"), self.topics)
        self.ctx.mark("conversion_offline_upgrade", offsets)

    # ---- consumer phase additions -------------------------------------------------------------

    def consumer_actions(self) -> list:
        g = self.s.model
        consumer_protocol = [m for m in g.members.values() if m.classic is None]
        leaving = None
        if len(g.members) >= 2 and len(consumer_protocol) <= 1:
            leaving = (consumer_protocol or list(g.members.values()))[0].member_id
        weight = 3 if self.kind == "conversion" else 0.8
        return [*super().consumer_actions(),
                (weight if leaving and self.ctx.era >= (4, 0) else 0,
                 lambda: self.downgrade(leaving))]

    def downgrade(self, leaving: str) -> None:
        self.regex_of.pop(leaving, None)
        offsets = self.step(self.s.downgrade_to_classic, leaving)
        self.ctx.mark("conversion_downgrade", offsets)

    def finish(self):
        g, rng = self.s.model, self.rng
        ending = rng.random()
        if ending < 0.3:
            for mid in list(g.members):
                self.leave(mid)
                yield
            if g.classic_members:
                self.step(self.s.classic_rebalance, {})
                yield
            self.step(self.s.delete_group)
        elif ending < 0.45 and g.committed:
            self.step(self.s.expire_offsets, self.sample(g.committed))

    # ---- irregular shapes of consumer groups ----------------------------------------------

    def irregular_actions(self) -> list:
        g = self.s.model
        if g.group_type != "consumer" or not g.members:
            return []
        holders = [m for m in g.members.values() if m.assigned and m.member_epoch >= 1]
        others = len(g.members) >= 2 and holders
        return [(3 if others else 0, lambda: self.double_ownership(holders)),
                (1.5 if holders else 0, lambda: self.assigned_and_pending(holders)),
                (1.5, self.epoch_regression),
                (0.5, self.unknown_member_state),
                (1 if holders else 0, lambda: self.assignment_epochs_mismatch(holders)),
                (1, self.premature_group_tombstone)]

    def _current(self, member, **changes):
        m = copy.deepcopy(member)
        for name, value in changes.items():
            setattr(m, name, value)
        return self.written([R.current_assignment(self.ctx.group_id, m, self.ctx.cluster.topic_id,
                                                  self.s.assignment_epochs)])

    def double_ownership(self, holders):
        """Another member's assignment record takes a partition the holder still owns, at an
        epoch above or below the holder's (the replay's ownership index throws either way)."""
        rng, g = self.rng, self.s.model
        holder = rng.choice(holders)
        other = rng.choice([m for m in g.members.values() if m is not holder])
        tp = rng.choice(sorted(holder.assigned))
        epoch = holder.member_epoch + rng.choice((-1, 1))
        epoch = epoch if epoch >= 1 and epoch != holder.member_epoch else holder.member_epoch + 1
        records = self._current(other, member_epoch=epoch, previous_member_epoch=epoch - 1,
                                assigned={**other.assigned, tp: epoch})
        held_at = self.last_offset.get(key_of(R.tombstone(8, g.group_id, holder.member_id)))
        offsets = self.emit(records)
        if held_at is not None:
            shape = "double_ownership" if epoch > holder.member_epoch else "double_ownership_lower"
            self.ctx.mark(shape, [held_at, *offsets])
        return None

    def assigned_and_pending(self, holders):
        m = self.rng.choice(holders)
        tp = self.rng.choice(sorted(m.assigned))
        return self._current(m, state=1, pending_revocation={tp: m.assigned[tp]}), \
            "assigned_and_pending"

    def epoch_regression(self):
        g, rng = self.s.model, self.rng
        members = [m for m in g.members.values() if m.member_epoch > 1]
        if members and rng.random() < 0.5:
            m = rng.choice(members)
            return self._current(m, member_epoch=m.member_epoch - rng.randint(1, m.member_epoch - 1),
                                 previous_member_epoch=m.member_epoch), "epoch_regression"
        epoch = max(0, g.group_epoch - rng.randint(1, 3))
        return self.written([R.group_epoch(g.group_id, epoch)]), "epoch_regression"

    def unknown_member_state(self):
        m = self.rng.choice(list(self.s.model.members.values()))
        return self._current(m, state=self.rng.choice((3, 5, 127))), "unknown_member_state"

    def assignment_epochs_mismatch(self, holders):
        """KIP-1251 epochs that do not line up with the partitions (4.3 logs an ERROR and falls
        back to the member epoch) or an explicit null (falls back silently)."""
        m = self.rng.choice(holders)
        rec = R.current_assignment(self.ctx.group_id, m, self.ctx.cluster.topic_id, True)
        first, *rest = rec.value["assignedPartitions"]
        epochs = None if self.rng.random() < 0.3 else [*first["assignmentEpochs"], m.member_epoch]
        value = {**rec.value, "assignedPartitions": [{**first, "assignmentEpochs": epochs}, *rest]}
        return [log_rec(rec, value=value)], "assignment_epochs_mismatch"

    def premature_group_tombstone(self):
        """The group's epoch (or target-assignment epoch) tombstone while it still has members or
        target assignments: the replay throws on it."""
        return [LogRec(self.rng.choice((3, 6)), {"groupId": self.ctx.group_id})], \
            "premature_group_tombstone"

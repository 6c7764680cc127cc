"""Consumer (KIP-848) groups: the consumer-protocol phase of a :class:`ProtocolGroup`.

Records and their order come from the scenario builder (join: 5, 3; target: 7s, 6; reconcile: 8;
leave: 8, 7, 5 tombstones, 3; static leave/rejoin; deletion 8s, 7s, 6, 5s, 4, 3). This module
adds what that builder leaves out, in the order Kafka writes it:

* type 4 (subscription metadata) before the epoch bump when the subscribed topics change, up to
  4.0; from 4.1 only its tombstone, once, before the next epoch bump (KIP-1101) — with
  MetadataHash on type 3 instead;
* regular-expression subscriptions (4.0+): type 5 with ``subscribedTopicRegex``, then the
  resolution (16, then 3); a regex tombstone when no member uses it any more, and regex
  tombstones between the 5 and 4 tombstones of a deletion (``createGroupTombstoneRecords``).
"""

from __future__ import annotations

from support.loggen import eras
from support.loggen.formats import metadata_hash, partition_metadata
from support.loggen.irregular import member_id
from support.loggen.life import GroupLife, pick
from support.loggen.records import LogRec, log_rec


class ConsumerPhase(GroupLife):
    """Consumer-protocol actions; state shared with the classic phase lives on the group."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self.partition_metadata_topics: dict[str, int] | None = None
        self.regexes: dict[str, list[str]] = {}          # regex -> resolved topics (live 16s)
        self.regex_of: dict[str, str] = {}               # member id -> its regex
        self.unresolved: list[str] = []
        self.regex_tombstones: list[str] = []
        self.instances = 0

    def new_instance_id(self) -> str:
        """A static member's group.instance.id, unique in the group (a second live member with
        the same id would be a static replacement, not a join)."""
        self.instances += 1
        return f"{self.ctx.group_id}-instance-{self.instances}"

    # ---- records the scenario builder does not write --------------------------------------

    def subscribed(self) -> dict[str, int]:
        topics = {t for m in self.s.model.members.values() for t in m.subscribe}
        return {t: self.ctx.cluster.topics[t] for t in sorted(topics)}

    def post(self, records: list[LogRec]) -> list[LogRec]:
        gid, out = self.ctx.group_id, []
        for rec in records:
            if rec.record_type == 3 and rec.value is not None:
                out += self._before_epoch(rec.value["epoch"])
                if eras.has_metadata_hash(self.ctx.era):
                    rec = log_rec(rec, value={**rec.value,
                                              "metadataHash": metadata_hash(self.subscribed())})
            elif rec.record_type == 4 and rec.value is None:
                out += [LogRec(16, {"groupId": gid, "regularExpression": rx})
                        for rx in sorted(self.regexes)]
                self.regexes, self.partition_metadata_topics = {}, None
            elif rec.record_type == 5 and rec.value is not None:
                regex = self.regex_of.get(rec.key["memberId"])
                if regex is not None:
                    rec = log_rec(rec, value={**rec.value, "subscribedTopicNames": [],
                                              "subscribedTopicRegex": regex})
            out.append(rec)
        return out

    def _before_epoch(self, epoch: int) -> list[LogRec]:
        gid, era = self.ctx.group_id, self.ctx.era
        out = [LogRec(16, {"groupId": gid, "regularExpression": rx}) for rx in self.regex_tombstones]
        self.regex_tombstones = []
        topics = self.subscribed()
        if eras.writes_partition_metadata(era):
            if topics and topics != self.partition_metadata_topics:
                self.partition_metadata_topics = topics
                out.append(partition_metadata(gid, topics, self.ctx.cluster.topic_id, era, epoch,
                                              self.rng))
        elif self.partition_metadata_topics is not None:
            self.partition_metadata_topics = None
            out.append(LogRec(4, {"groupId": gid}))
        return out

    def step(self, fn, *args, **kwargs) -> list[int]:
        return self.try_step(fn, *args, post=self.post, **kwargs)

    # ---- actions ---------------------------------------------------------------------------

    def consumer_actions(self) -> list:
        g, rng, era = self.s.model, self.rng, self.ctx.era
        live = [m for m in g.members.values() if m.member_epoch != -2]
        moving = [m for m in live if m.state != 0 or m.member_epoch != g.target_epoch]
        static = [m for m in live if m.instance_id]
        away = [m for m in g.members.values() if m.member_epoch == -2]
        return [
            (3 if len(g.members) < 4 else 0, self.join),
            (4 if g.members and g.group_epoch > g.target_epoch else 0.7 if g.members else 0,
             self.assign),
            (6 if moving else 0, lambda: self.reconcile(rng.choice(moving).member_id)),
            (1.2 if live else 0, lambda: self.leave(rng.choice(live).member_id)),
            (2 if live else 0, lambda: self.member_commit(rng.choice(live))),
            (0.8 if live else 0, lambda: self.start_transaction(
                self.sample(rng.choice(live).assigned or self.topic_partitions()))),
            (0.5 if static else 0, lambda: self.step(self.s.static_leave,
                                                     rng.choice(static).member_id)),
            (1.5 if away else 0, lambda: self.step(self.s.static_rejoin, member_id(rng),
                                                   rng.choice(away).instance_id)),
            (0.4 if g.members else 0, lambda: self.step(self.s.metadata_change)),
            (2 if self.unresolved else 0, self.resolve_regex),
            (0.5 if not g.members else 0, lambda: self.commit(self.sample(self.topic_partitions()))),
            (0.3 if era >= (4, 0) and not g.members else 0, self.offline_downgrade),
        ]

    def join(self) -> None:
        rng, era, topics = self.rng, self.ctx.era, sorted(self.ctx.cluster.topics)
        mid = member_id(rng, "c")
        subscribe = self.sample(topics, 3)
        if era >= (4, 0) and rng.random() < 0.15:
            prefix = rng.choice(topics)[:3]
            regex = f"{prefix}.*"
            self.regex_of[mid] = regex
            subscribe = [t for t in topics if t.startswith(prefix)]
            if regex not in self.regexes and regex not in self.unresolved:
                self.unresolved.append(regex)
        classic = None
        if era >= (4, 0) and rng.random() < 0.2:    # a classic-protocol client joins
            classic = classic_metadata(subscribe, rng)
        self.step(self.s.consumer_join, mid, subscribe,
                  instance_id=self.new_instance_id() if rng.random() < 0.3 else None,
                  classic=classic)

    def assign(self) -> None:
        g, rng = self.s.model, self.rng
        if g.group_epoch <= g.target_epoch:
            self.step(self.s.metadata_change)
        target: dict[str, dict[str, list[int]]] = {mid: {} for mid in g.members}
        for topic, count in self.subscribed().items():
            owners = [mid for mid, m in g.members.items() if topic in m.subscribe]
            for p in range(count):
                target[rng.choice(owners)].setdefault(topic, []).append(p)
        self.step(self.s.compute_target, target)

    def reconcile(self, mid: str) -> None:
        steps = (self.s.revoke, self.s.heartbeat, self.s.converge)
        if not self.step(self.rng.choice(steps), mid):
            self.step(self.s.converge, mid)

    def leave(self, mid: str) -> None:
        regex = self.regex_of.pop(mid, None)
        if regex and regex in self.regexes and regex not in self.regex_of.values():
            del self.regexes[regex]
            self.regex_tombstones.append(regex)
        self.step(self.rng.choice((self.s.leave, self.s.session_timeout)), mid)

    def member_commit(self, m) -> None:
        owned = sorted(m.assigned) + sorted(m.pending_revocation)
        if not owned or self.rng.random() < 0.1:     # a commit for a partition it does not own
            owned = self.topic_partitions(m.subscribe)
        self.commit(self.sample(owned))

    def resolve_regex(self) -> None:
        regex = self.unresolved.pop(0)
        topics = [t for t in sorted(self.ctx.cluster.topics) if t.startswith(regex[:-2])]
        self.regexes[regex] = topics
        record = LogRec(16, {"groupId": self.ctx.group_id, "regularExpression": regex}, 0,
                        {"topics": topics, "version": self.rng.randint(1, 50),
                         "timestamp": self.ctx.now_ms})
        self.try_step(self.s.metadata_change, post=lambda rs: self.post([record, *rs]))

    def offline_downgrade(self) -> None:
        """A classic JoinGroup to an empty consumer group: its tombstones, then a classic group."""
        offsets = self.step(self.s.classic_rebalance, self.classic_members({}))
        self.ctx.mark("conversion_offline_downgrade", offsets)

    def consumer_pick(self):
        return pick(self.rng, self.consumer_actions())


def classic_metadata(subscribe: list[str], rng) -> dict:
    """ClassicMemberMetadata of a classic-protocol member (JoinGroup metadata, ConsumerProtocol)."""
    return {"sessionTimeoutMs": rng.choice((10_000, 45_000)), "supportedProtocols": [
        {"name": rng.choice(("range", "cooperative-sticky")), "metadata": {
            "version": 3, "topics": sorted(subscribe), "userData": None, "ownedPartitions": [],
            "generationId": -1, "rackId": None}}]}

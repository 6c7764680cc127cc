"""Share groups (KIP-932): types 10-15, and type 9 and the 4.0 layouts of 11 and 15.

4.0 (preview) wrote the subscription metadata as type 9 (the layout type 4 has) and type 11 with
only ``Epoch``, type 15 without ``InitializingTopics``; 4.1 removed type 9 and changed 11 and 15
incompatibly under the same version 0. Partitions of a share group may be assigned to several
members at once, so shared partitions are not double ownership here. Share groups keep no
offsets in ``__consumer_offsets`` (their state lives in ``__share_group_state``).
"""

from __future__ import annotations

from support.loggen import eras
from support.loggen.formats import metadata_hash
from support.loggen.irregular import member_id
from support.loggen.modern import ModernGroup, ModernMember
from support.loggen.records import LogRec


class ShareGroup(ModernGroup):
    KIND = "share"
    MEMBER, EPOCH, TARGET, TARGET_METADATA, CURRENT = 10, 11, 13, 12, 14

    def __init__(self, ctx):
        super().__init__(ctx)
        self.partition_metadata_topics: list[str] | None = None    # a live type 9
        self.initialized: set[str] = set()

    def subscribed(self) -> list[str]:
        return sorted({t for m in self.members.values() for t in m.subscribe})

    def epoch_record(self) -> LogRec:
        if eras.share_layout(self.ctx.era):
            return LogRec(11, self.key(), 0, {"epoch": self.group_epoch}, eras.HISTORICAL_40)
        return LogRec(11, self.key(), 0, {"epoch": self.group_epoch,
                                          "metadataHash": metadata_hash(self.subscribed())})

    def join_records(self, m: ModernMember) -> list[LogRec]:
        records = [LogRec(10, self.key(m.member_id), 0, {
            "rackId": None, "clientId": "share-consumer", "clientHost": "/10.0.1.4",
            "subscribedTopicNames": sorted(m.subscribe)})]
        topics = self.subscribed()
        if eras.writes_partition_metadata(self.ctx.era) and topics != self.partition_metadata_topics:
            self.partition_metadata_topics = topics
            cluster = self.ctx.cluster
            records.append(LogRec(9, self.key(), 0, {"topics": [
                {"topicId": cluster.topic_id(t), "topicName": t,
                 "numPartitions": cluster.topics[t], "partitionMetadata": []} for t in topics]}))
        return records

    def target_record(self, mid: str, partitions: set) -> LogRec:
        return LogRec(13, self.key(mid), 0, {"topicPartitions": self.by_topic(partitions)})

    def by_topic(self, partitions) -> list[dict]:
        topics: dict[str, list[int]] = {}
        for t, p in sorted(partitions):
            topics.setdefault(t, []).append(p)
        return [{"topicId": self.ctx.cluster.topic_id(t), "partitions": ps}
                for t, ps in topics.items()]

    def assign(self) -> None:
        target = {mid: set() for mid in self.members}
        for tp in self.topic_partitions(self.subscribed()):
            owners = [mid for mid, m in self.members.items() if tp[0] in m.subscribe]
            for mid in self.sample(owners, 2):               # a partition may be shared
                target[mid].add(tp)
        self.compute_target(target, self.target_record)

    def heartbeat(self, mid: str) -> None:
        m = self.members[mid]
        m.previous_member_epoch, m.member_epoch = m.member_epoch, self.target_epoch
        m.assigned = {tp: self.target_epoch for tp in self.target.get(mid, set())}
        self.emit([LogRec(14, self.key(mid), 0, {
            "memberEpoch": m.member_epoch, "previousMemberEpoch": m.previous_member_epoch,
            "state": 0, "assignedPartitions": self.by_topic(m.assigned)})])

    def initialize_state(self) -> None:
        """The coordinator asks the share coordinator to initialize new topics' state (15)."""
        cluster, topics = self.ctx.cluster, self.subscribed()
        info = [{"topicId": cluster.topic_id(t), "topicName": t,
                 "partitions": list(range(cluster.topics[t]))} for t in topics]
        deleting = [{"topicId": cluster.topic_id(t), "topicName": t}
                    for t in sorted(self.initialized - set(topics))]
        if eras.share_layout(self.ctx.era):
            value, layout = {"initializedTopics": info, "deletingTopics": deleting}, eras.HISTORICAL_40
        else:
            fresh = [i for i in info if i["topicName"] not in self.initialized]
            done = [i for i in info if i["topicName"] in self.initialized]
            value, layout = {"initializingTopics": fresh, "initializedTopics": done,
                             "deletingTopics": deleting}, None
        self.initialized = set(topics)
        self.emit([LogRec(15, self.key(), 0, value, layout)])

    def group_tombstones(self) -> list[LogRec]:
        records = [LogRec(12, self.key())]
        if self.partition_metadata_topics is not None and self.ctx.era < (4, 1):
            records.append(LogRec(9, self.key()))      # 4.0's partition metadata (unverified order)
        self.partition_metadata_topics = None
        self.initialized = set()
        return [*records, LogRec(15, self.key()), LogRec(11, self.key())]

    def actions(self) -> list:
        rng, topics = self.rng, sorted(self.ctx.cluster.topics)
        moving = [mid for mid, m in self.members.items() if m.member_epoch != self.target_epoch]
        return [
            (3 if len(self.members) < 4 else 0, lambda: self.join(
                ModernMember(member_id(rng, "s"), self.sample(topics, 2)))),
            (3 if self.members and self.group_epoch > self.target_epoch else 0, self.assign),
            (4 if moving else 0, lambda: self.heartbeat(rng.choice(moving))),
            (1.5 if self.members else 0, self.initialize_state),
            (1 if self.members else 0, lambda: self.leave(rng.choice(sorted(self.members))))]

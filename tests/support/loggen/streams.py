"""Streams groups (KIP-1071, 4.1+): types 17, 19-23, and the rare 18 and 24.

* 23 (topology) is written with the first member's join, before the epoch bump (17);
* 22's member ``State`` counts from 1 (STABLE=1, UNREVOKED_TASKS=2, UNRELEASED_TASKS=3 in
  ``streams.MemberState``), unlike consumer groups; tasks carry AssignmentEpochs from 4.2;
* 17 gains ValidatedTopologyEpoch (4.1), LastAssignmentConfigs (4.2) and the description
  topology epochs (4.4) as tagged fields;
* 18 (StreamsGroupPartitionMetadata) only ever existed on trunk between 4.0 and 4.1, and 24
  (ResolvedTopicIds) in no release: both are records the releases skip as unknown types.

Two members owning the same active task make the replay throw, like consumer double ownership.
"""

from __future__ import annotations

import uuid

from support.loggen.irregular import member_id
from support.loggen.formats import metadata_hash
from support.loggen.modern import ModernGroup, ModernMember
from support.loggen.records import LogRec

STABLE, UNREVOKED_TASKS, UNRELEASED_TASKS = 1, 2, 3


class StreamsGroup(ModernGroup):
    KIND = "streams"
    MEMBER, EPOCH, TARGET, TARGET_METADATA, CURRENT = 19, 17, 21, 20, 22

    def __init__(self, ctx):
        super().__init__(ctx)
        self.topics = self.sample(ctx.cluster.topics, 2)
        self.topology_epoch = 0
        self.wrote_18 = False
        self.state: dict[str, int] = {}

    def epoch_record(self) -> LogRec:
        era = self.ctx.era
        value = {"epoch": self.group_epoch, "metadataHash": metadata_hash(self.topics),
                 "validatedTopologyEpoch": self.topology_epoch}
        if era >= (4, 2):
            value["lastAssignmentConfigs"] = [{"key": "num.standby.replicas", "value": "0"}]
        if era >= (4, 4):
            value["storedDescriptionTopologyEpoch"] = self.topology_epoch
        return LogRec(17, self.key(), 0, value)

    def join_records(self, m: ModernMember) -> list[LogRec]:
        rng, app = self.rng, self.ctx.group_id
        records = [LogRec(19, self.key(m.member_id), 0, {
            "instanceId": None, "rackId": None, "clientId": f"{app}-StreamThread-1-consumer",
            "clientHost": "/10.0.2.8", "rebalanceTimeoutMs": 300_000,
            "topologyEpoch": max(self.topology_epoch, 1),
            "processId": str(uuid.UUID(int=rng.getrandbits(128))),
            "userEndpoint": {"host": "10.0.2.8", "port": 8080} if rng.random() < 0.5 else None,
            "clientTags": []})]
        if self.topology_epoch == 0 or rng.random() < 0.05:     # first member, or a new topology
            self.topology_epoch += 1
            records.append(self.topology_record())
        if not self.wrote_18 and rng.random() < 0.15:
            self.wrote_18 = True
            cluster = self.ctx.cluster
            records.append(LogRec(18, self.key(), 0, {"topics": [
                {"topicId": cluster.topic_id(t), "topicName": t, "numPartitions": cluster.topics[t]}
                for t in self.topics]}))
            self.ctx.mark("type_18", [self.ctx.log.next_offset + len(records) - 1])
        return records

    def topology_record(self) -> LogRec:
        app = self.ctx.group_id
        return LogRec(23, self.key(), 0, {"epoch": self.topology_epoch, "subtopologies": [{
            "subtopologyId": "0", "sourceTopics": self.topics, "sourceTopicRegex": [],
            "stateChangelogTopics": [{"name": f"{app}-store-changelog", "partitions": 0,
                                      "replicationFactor": 3, "topicConfigs": []}],
            "repartitionSinkTopics": [], "repartitionSourceTopics": [],
            "copartitionGroups": []}]})

    def tasks(self) -> list[tuple[str, int]]:
        count = max(self.ctx.cluster.topics[t] for t in self.topics)
        return [("0", p) for p in range(count)]

    def task_ids(self, tasks, with_epochs: bool) -> list[dict]:
        entries: dict[str, list] = {}
        for (sub, p), epoch in sorted(tasks.items()):
            entries.setdefault(sub, []).append((p, epoch))
        out = []
        for sub, items in entries.items():
            entry = {"subtopologyId": sub, "partitions": [p for p, _ in items]}
            if with_epochs:
                entry["assignmentEpochs"] = [e for _, e in items]
            out.append(entry)
        return out

    def target_record(self, mid: str, tasks: set) -> LogRec:
        return LogRec(21, self.key(mid), 0, {
            "activeTasks": self.task_ids(dict.fromkeys(tasks, 0), False), "standbyTasks": [],
            "warmupTasks": []})

    def assign(self) -> None:
        ids = sorted(self.members)
        target = {mid: set() for mid in ids}
        for task in self.tasks():
            target[self.rng.choice(ids)].add(task)
        self.compute_target(target, self.target_record)
        if self.rng.random() < 0.08:
            record = LogRec(24, self.key(), 0, {"assignmentEpoch": self.target_epoch,
                                                "resolvedTopicIdsBySubtopology": [{
                                                    "subtopologyId": "0", "topicIds": [
                                                        self.ctx.cluster.topic_id(t)
                                                        for t in self.topics]}]})
            self.emit([record], "type_24")

    def heartbeat(self, mid: str) -> None:
        m, target = self.members[mid], self.target.get(mid, set())
        revoking = {t: e for t, e in m.assigned.items() if t not in target}
        if revoking and self.state.get(mid) != UNREVOKED_TASKS:
            m.assigned = {t: e for t, e in m.assigned.items() if t in target}
            m.pending_revocation, self.state[mid] = revoking, UNREVOKED_TASKS
        else:
            others = {t for o in self.members.values() if o is not m for t in o.assigned}
            m.previous_member_epoch, m.member_epoch = m.member_epoch, self.target_epoch
            kept = {t: e for t, e in m.assigned.items() if t in target}
            kept.update({t: self.target_epoch for t in target - set(kept) - others})
            m.assigned, m.pending_revocation = kept, {}
            self.state[mid] = UNRELEASED_TASKS if target - set(kept) else STABLE
        self.emit([self.current_record(m, self.state[mid])])

    def current_record(self, m: ModernMember, state: int) -> LogRec:
        epochs = self.ctx.era >= (4, 2)
        return LogRec(22, self.key(m.member_id), 0, {
            "memberEpoch": m.member_epoch, "previousMemberEpoch": m.previous_member_epoch,
            "state": state, "activeTasks": self.task_ids(m.assigned, epochs),
            "standbyTasks": [], "warmupTasks": [],
            "activeTasksPendingRevocation": self.task_ids(m.pending_revocation, epochs),
            "standbyTasksPendingRevocation": [], "warmupTasksPendingRevocation": []})

    def group_tombstones(self) -> list[LogRec]:
        records = [LogRec(20, self.key())]
        if self.wrote_18:
            records.append(LogRec(18, self.key()))
            self.wrote_18 = False
        self.topology_epoch = 0
        return [*records, LogRec(17, self.key()), LogRec(23, self.key())]

    def double_ownership(self):
        holders = [m for m in self.members.values() if m.assigned]
        if not holders or len(self.members) < 2:
            return None
        holder = self.rng.choice(holders)
        other = self.rng.choice([m for m in self.members.values() if m is not holder])
        task = self.rng.choice(sorted(holder.assigned))
        thief = ModernMember(other.member_id, other.subscribe, other.member_epoch,
                             other.previous_member_epoch, {**other.assigned, task: holder.assigned[task]})
        return [self.current_record(thief, STABLE)], "streams_double_ownership"

    def irregular_actions(self) -> list:
        return [(2, self.double_ownership), (1, self.task_epochs_mismatch)]

    def task_epochs_mismatch(self):
        """Active-task AssignmentEpochs one longer than the partitions: 4.2 throws, 4.3+ falls
        back to the member epoch."""
        holders = [m for m in self.members.values() if m.assigned]
        if not holders:
            return None
        rec = self.current_record(self.rng.choice(holders), STABLE)
        first, *rest = rec.value["activeTasks"]
        epochs = [*first.get("assignmentEpochs", [0] * len(first["partitions"])), 0]
        value = {**rec.value, "activeTasks": [{**first, "assignmentEpochs": epochs}, *rest]}
        return [LogRec(22, rec.key, 0, value)], "assignment_epochs_mismatch"

    def actions(self) -> list:
        rng = self.rng
        moving = sorted(mid for mid, m in self.members.items()
                        if m.member_epoch != self.target_epoch or self.state.get(mid) != STABLE)
        return [
            (3 if len(self.members) < 4 else 0, lambda: self.join(
                ModernMember(member_id(rng, "k"), self.topics))),
            (3 if self.members and self.group_epoch > self.target_epoch else 0, self.assign),
            (4 if moving else 0, lambda: self.heartbeat(rng.choice(moving))),
            (1.5 if self.members else 0, lambda: self.commit(self.sample(
                self.topic_partitions(self.topics)))),
            (1 if self.members else 0, lambda: self.leave(rng.choice(sorted(self.members))))]

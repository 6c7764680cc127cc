"""Offset, transaction and deletion steps (reference §2.4, §3.1-3.3).

* offset commit: one OffsetCommit record per partition in one non-transactional batch (v4 with the
  topic id from 4.1; a group id without a group gets an in-memory simple group, no group record);
* transactional commit: the same records in a transactional batch of the producer (topic id ZERO,
  as TxnOffsetCommit writes until KIP-1319), later a COMMIT or ABORT control batch;
* group deletion (EMPTY groups only): tombstones for every committed offset and every partition
  with only pending transactional offsets, then the group tombstones in
  ``createGroupTombstoneRecords`` order, one atomic batch;
* offset expiry: offset tombstones; if every offset expired, the group is empty and no transaction
  is open, the group tombstones follow in the same batch.
"""

from __future__ import annotations

from jobs.replay.events import ABORT, COMMIT
from support.scenarios import records as R
from support.scenarios.model import TP, ScenarioError


def _partitions(offsets: dict[str, dict[int, int]]) -> list[tuple[TP, int]]:
    return [((t, p), o) for t, ps in offsets.items() for p, o in sorted(ps.items())]


class OffsetSteps:
    def _commit_records(self, offsets, metadata: str, leader_epoch: int, transactional: bool):
        g = self.model
        return [R.offset_commit(g.group_id, tp, offset, version=self.offset_commit_version,
                                commit_timestamp=self.now_ms, metadata=metadata,
                                leader_epoch=leader_epoch,
                                topic_id=None if transactional else self.topic_id(tp[0]))
                for tp, offset in _partitions(offsets)]

    def offset_commit(self, offsets: dict[str, dict[int, int]], *, metadata: str = "",
                      leader_epoch: int = -1):
        """``offsets``: ``{topic: {partition: offset}}``."""
        start = self.next_offset
        self._append(self._commit_records(offsets, metadata, leader_epoch, False))
        self.model.committed.update(tp for tp, _ in _partitions(offsets))
        return self._close_step("offset commit", start)

    def txn_offset_commit(self, producer_id: int, offsets: dict[str, dict[int, int]], *,
                          producer_epoch: int = 0, metadata: str = ""):
        """TxnOffsetCommit: pending until :meth:`end_txn` of the same producer."""
        start = self.next_offset
        self._append(self._commit_records(offsets, metadata, -1, True), producer_id=producer_id,
                     producer_epoch=producer_epoch, transactional=True)
        self.model.pending.setdefault(producer_id, set()).update(tp for tp, _ in _partitions(offsets))
        return self._close_step(f"txn offset commit producer {producer_id}", start)

    def end_txn(self, producer_id: int, outcome: str = COMMIT, *, producer_epoch: int = 0):
        """The transaction coordinator's COMMIT or ABORT marker for the producer."""
        if outcome not in (COMMIT, ABORT):
            raise ScenarioError(f"marker must be {COMMIT} or {ABORT}, not {outcome}")
        start = self.next_offset
        self._append_marker(outcome, producer_id, producer_epoch)
        for g in self._groups.values():
            keys = g.pending.pop(producer_id, set())
            if outcome == COMMIT:
                g.committed.update(keys)
        return self._close_step(f"{outcome} producer {producer_id}", start)

    def transactional_commit(self, producer_id: int, offsets: dict[str, dict[int, int]], *,
                             outcome: str = COMMIT, producer_epoch: int = 0):
        """TxnOffsetCommit immediately followed by its marker."""
        self.txn_offset_commit(producer_id, offsets, producer_epoch=producer_epoch)
        return self.end_txn(producer_id, outcome, producer_epoch=producer_epoch)

    def _group_tombstones(self) -> list[R.Rec]:
        g = self.model
        gid = g.group_id
        if g.group_type == "consumer":
            ids = list(g.members)
            return [*(R.tombstone(8, gid, m) for m in ids), *(R.tombstone(7, gid, m) for m in ids),
                    R.tombstone(6, gid), *(R.tombstone(5, gid, m) for m in ids),
                    R.tombstone(4, gid), R.tombstone(3, gid)]
        return [R.Rec(2, {"group": gid})]

    def _forget_group(self) -> None:
        g = self.model
        g.group_type, g.group_epoch, g.target_epoch, g.generation = None, 0, 0, 0
        g.members, g.target, g.classic_members = {}, {}, {}

    def delete_group(self):
        """DeleteGroups on an EMPTY group."""
        g = self.model
        if g.members or g.classic_members:
            raise ScenarioError(f"{g.group_id}: NON_EMPTY_GROUP")
        keys = sorted(g.committed | {tp for ks in g.pending.values() for tp in ks})
        records = [R.offset_tombstone(g.group_id, tp) for tp in keys] + self._group_tombstones()
        g.committed = set()
        self._forget_group()
        return self._step("delete group", records)

    def expire_offsets(self, partitions: list[TP] | None = None):
        """Offset-retention cleanup of ``partitions`` (default: every committed offset)."""
        g = self.model
        expired = sorted(g.committed if partitions is None else set(partitions))
        records = [R.offset_tombstone(g.group_id, tp) for tp in expired]
        g.committed -= set(expired)
        has_open = any(g.pending.values())
        if not g.committed and not has_open and not g.members and not g.classic_members:
            records += self._group_tombstones()
            self._forget_group()
        return self._step("expire offsets", records)

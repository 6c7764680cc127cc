"""Replay of offset commits (types 0/1) and end-transaction markers (reference §2.3, §3.3).

* Non-transactional commit (producer id -1): last write wins in the main store.
* Transactional commit: pending per producer id until its marker. COMMIT installs each pending
  offset **only if** the main store has no entry for the key or the pending record's log offset is
  greater than the installed one's (so a later non-transactional commit wins over an earlier
  transactional one whose marker comes later; TX-02 notes each skip). ABORT drops them.
* Tombstone: removes the key from the main store and from every open transaction of the group.
* An offset record for an unknown group id creates an empty simple classic group.
* Transactions still open at the end of the snapshot stay open (outcome ``open``).
"""

from __future__ import annotations

import uuid

from jobs.replay.messages import TX_02, TX_FLAG
from jobs.replay.context import INFO, MEDIUM, ReplayContext
from jobs.replay.events import COMMIT, NO_PRODUCER_ID, OPEN, OUTCOME_OF_MARKER
from jobs.replay.state import OffsetEntry, Transaction

ZERO_UUID = uuid.UUID(int=0)


def apply_offset_commit(ctx: ReplayContext, record) -> None:
    event, key, value = ctx.event, record.key, record.value
    group_id, offset_key = key["group"], (key["topic"], key["partition"])
    store = ctx.offset_store(group_id)
    is_pending = event.producer_id != NO_PRODUCER_ID
    if is_pending != event.is_transactional:
        ctx.violation("TX-FLAG", MEDIUM, group_id,
                      TX_FLAG.format(producer_id=event.producer_id,
                                     is_transactional=event.is_transactional))
    row, row_index = None, None
    if ctx.commit_history or is_pending:   # an open transaction's rows are needed either way
        row = _commit_row(ctx, group_id, offset_key, record)
        ctx.offset_commits.append(row)
        row_index = len(ctx.offset_commits) - 1
    if value is None:
        store.main.pop(offset_key, None)
        for txn in store.open_transactions.values():
            txn.pending.pop(offset_key, None)
        return
    entry = OffsetEntry(
        committed_offset=value["offset"], leader_epoch=_present(value.get("leaderEpoch", -1)),
        metadata=value.get("metadata", ""), commit_timestamp=value.get("commitTimestamp"),
        expire_timestamp=_present(value.get("expireTimestamp", -1)),
        topic_id=_topic_id(value.get("topicId")), position=ctx.position,
        producer_id=event.producer_id, commit_row=row_index)
    note_commit(ctx, group_id, offset_key[0], entry.topic_id)
    if not is_pending:
        store.main[offset_key] = entry
        if row is not None:
            row["is_installed"] = True
        return
    txn = store.open_transactions.get(event.producer_id)
    if txn is None:
        txn = store.open_transactions[event.producer_id] = Transaction(
            event.producer_id, ctx.position, ctx.position)
    txn.pending[offset_key] = entry
    txn.last_position = ctx.position
    txn.commit_rows.append(row_index)
    txn.offset_count += 1
    row["outcome"] = OPEN


def note_commit(ctx: ReplayContext, group_id: str, topic: str, topic_id: uuid.UUID | None) -> None:
    """What an offset commit (not a tombstone) changes outside the offset store: it creates a
    simple group when the id is unknown, and names its topic id unless something named it first.
    The Spark job replays the offset store in SQL and calls only this for the commits that can
    change either (the first after each group tombstone, the first per topic id)."""
    ctx.simple_group(group_id)
    if topic_id is not None:
        ctx.name_topic(topic_id, topic, unless_named=True)


def apply_marker(ctx: ReplayContext, group_id: str) -> None:
    """COMMIT/ABORT of ``ctx.event.producer_id`` for one group; no-op without pending offsets."""
    event = ctx.event
    store = ctx.offsets.get(group_id)
    txn = store.open_transactions.pop(event.producer_id, None) if store else None
    if txn is None:
        return
    if event.control_type == COMMIT:
        for offset_key, entry in txn.pending.items():
            installed = store.main.get(offset_key)
            if installed is None or entry.position[1] > installed.position[1]:
                store.main[offset_key] = entry
                ctx.offset_commits[entry.commit_row]["is_installed"] = True
            else:
                ctx.violation("TX-02", INFO, group_id,
                              TX_02.format(producer_id=event.producer_id, topic=offset_key[0],
                                           partition=offset_key[1], pending=entry.position[1],
                                           installed=installed.position[1]))
    outcome = OUTCOME_OF_MARKER[event.control_type]
    for row_index in txn.commit_rows:
        row = ctx.offset_commits[row_index]
        if not row["is_tombstone"]:
            row["outcome"] = outcome
        row["marker_log_offset"] = event.offset
    ctx.transactions.append(_transaction_row(group_id, txn, outcome, event.offset))


def close_open_transactions(ctx: ReplayContext) -> None:
    """End of snapshot: transactions without a marker are reported as open, never installed."""
    for group_id, store in ctx.offsets.items():
        for txn in store.open_transactions.values():
            ctx.transactions.append(_transaction_row(group_id, txn, OPEN, None))


def groups_with_pending(ctx: ReplayContext, producer_id: int) -> list[str]:
    return [gid for gid, store in ctx.offsets.items() if producer_id in store.open_transactions]


def _transaction_row(group_id: str, txn: Transaction, outcome: str, marker_offset) -> dict:
    return {"group_id": group_id, "producer_id": txn.producer_id,
            "first_log_offset": txn.first_position[1], "last_log_offset": txn.last_position[1],
            "marker_log_offset": marker_offset, "outcome": outcome,
            "offset_count": txn.offset_count,
            "log_partition": txn.first_position[0],
            "log_offset": txn.first_position[1] if marker_offset is None else marker_offset}


def _commit_row(ctx: ReplayContext, group_id: str, offset_key, record) -> dict:
    event, value = ctx.event, record.value or {}
    topic_id = _topic_id(value.get("topicId"))
    return {
        "group_id": group_id, "topic": offset_key[0], "partition": offset_key[1],
        "committed_offset": value.get("offset"),
        "leader_epoch": _present(value.get("leaderEpoch", -1)),
        "metadata": value.get("metadata"), "commit_timestamp": value.get("commitTimestamp"),
        "expire_timestamp": _present(value.get("expireTimestamp", -1)),
        "topic_id": None if topic_id is None else str(topic_id),
        "record_type": record.record_type, "value_version": record.value_version,
        "is_tombstone": record.value is None, "producer_id": event.producer_id,
        "is_transactional": event.is_transactional,
        "outcome": "tombstone" if record.value is None else "non_transactional",
        "is_installed": record.value is None, "marker_log_offset": None,
        "log_partition": event.partition, "log_offset": event.offset,
        "log_timestamp": event.timestamp}


def _topic_id(value) -> uuid.UUID | None:
    return None if value is None or value == ZERO_UUID else value


def _present(value: int | None) -> int | None:
    return None if value is None or value == -1 else value

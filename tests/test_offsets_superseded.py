"""``jobs.stages.offsets.without_superseded``: an incremental run leaves out of a group's replay
the held offset commits that newer commits of their key superseded and that its fencing audit
does not read (its fold covers them). On random logs of commits, transactional commits,
tombstones, markers and group tombstones, cut into held records and the records added after
them, the replay of what is left resolves every row it keeps as the replay of the whole log
does; the added records' rows, the keys' final offsets, the commits the group replay must see,
the transactions and the violations at the added records are the same."""

from __future__ import annotations

import random
import uuid

import pytest

SCHEMA = ("partition int, offset bigint, timestamp bigint, producer_id bigint, "
          "is_transactional boolean, group_id string, topic string, topic_partition int, "
          "committed_offset bigint, leader_epoch int, metadata string, commit_timestamp bigint, "
          "expire_timestamp bigint, topic_id binary, record_type smallint, value_version smallint, "
          "is_tombstone boolean")
TOPIC_IDS = {"foo": [None, bytes(16), uuid.UUID(int=1).bytes, uuid.UUID(int=2).bytes],
             "bar": [None, uuid.UUID(int=3).bytes]}


def _log(rng: random.Random, partition: int):
    """One partition's records: ``(commits, markers, group tombstones, cut, until)``: the first
    ``cut`` offsets are held, the rest added; ``until``: each group's fold, if it has one."""
    from jobs.replay.events import ABORT, COMMIT

    commits, markers, tombstones = [], [], []
    size = rng.randint(15, 70)
    for offset in range(size):
        kind = rng.random()
        group = rng.choice(["g", "h"])
        if kind < 0.08:
            markers.append((partition, offset, rng.choice([7, 8]), rng.choice([COMMIT, ABORT])))
        elif kind < 0.11:
            tombstones.append((partition, group, offset))
        else:
            topic = rng.choice(["foo", "bar"])
            pid = rng.choice([None, -1, -1, -1, -1, 7, 8])
            tomb = rng.random() < 0.1
            commits.append((partition, offset, 1_000 + offset, pid,
                            pid not in (None, -1) or rng.random() < 0.05, group, topic,
                            rng.choice([0, 1]), None if tomb else offset * 10,
                            None if tomb else rng.choice([-1, 3]), None if tomb else "m",
                            None if tomb else 2_000 + offset, None if tomb else -1,
                            None if tomb else rng.choice(TOPIC_IDS[topic]), 1,
                            None if tomb else rng.choice([1, 3]), tomb))
    cut = rng.randint(size // 3, 2 * size // 3)
    until = [(g, cut - 1 - rng.choice([0, 0, 4])) for g in ("g", "h") if rng.random() < 0.8]
    return commits, markers, tombstones, cut, until


def _rows(frame):
    return sorted((tuple(r) for r in frame.collect()), key=lambda r: tuple(map(str, r)))


@pytest.mark.parametrize("seed", [1, 2])
def test_a_replay_without_the_superseded_held_commits_resolves_as_the_whole_log(spark, seed):
    from pyspark.sql import functions as F

    from jobs.stages import offsets as sql

    rng = random.Random(seed)
    logs = [_log(rng, p) for p in range(40)]
    commits = spark.createDataFrame([c for log in logs for c in log[0]], SCHEMA)
    markers = spark.createDataFrame([m for log in logs for m in log[1]],
                                    "partition int, offset bigint, producer_id bigint, "
                                    "control_type string")
    tombstones = spark.createDataFrame([t for log in logs for t in log[2]],
                                       "partition int, group_id string, offset bigint")
    cuts = {p: log[3] for p, log in enumerate(logs)}
    # a group's id is unique to its partition here, as __consumer_offsets places a group
    named = F.concat_ws("-", F.col("group_id"), F.col("partition").cast("string"))
    commits, tombstones = (f.withColumn("group_id", named) for f in (commits, tombstones))
    until = spark.createDataFrame([(f"{g}-{p}", end) for p, log in enumerate(logs)
                                   for g, end in log[4]], "group_id string, folded_until bigint")
    held_at = F.lit(False)
    for p, cut in cuts.items():
        held_at = held_at | ((F.col("partition") == p) & (F.col("offset") < cut))
    held, added = commits.where(held_at), commits.where(~held_at)
    kept = sql.without_superseded(held, tombstones.where(held_at), until)
    assert kept.columns == held.columns

    resolved_whole = sql.resolve_commits(commits, markers)
    resolved_part = sql.resolve_commits(kept.unionByName(added), markers)
    whole = {(r.log_partition, r.log_offset): r for r in resolved_whole.collect()}
    part = {(r.log_partition, r.log_offset): r for r in resolved_part.collect()}
    # every row left resolves as in the whole log: the added ones, and the keys' final rows
    assert part == {at: whole[at] for at in part}
    assert {at for at in whole if at[1] >= cuts[at[0]]} <= set(part)
    assert ({at for at, r in part.items() if r.is_final}
            == {at for at, r in whole.items() if r.is_final})
    # what is left out: plain commits (no producer), covered by their group's fold
    left_out = [whole[at] for at in set(whole) - set(part)]
    folds = {r.group_id: r.folded_until for r in until.collect()}
    assert len(left_out) > 50   # the test would prove nothing if nothing were left out
    assert all(r.producer_id == -1 and not r.is_tombstone and r.group_id in folds
               and r.log_offset <= folds[r.group_id] for r in left_out)

    assert (_rows(sql.touches(resolved_part, tombstones))
            == _rows(sql.touches(resolved_whole, tombstones)))
    assert (_rows(sql.transaction_rows(resolved_part))
            == _rows(sql.transaction_rows(resolved_whole)))
    added_at = F.lit(False)
    for p, cut in cuts.items():
        added_at = added_at | ((F.col("log_partition") == p) & (F.col("log_offset") >= cut))
    assert (_rows(sql.violation_rows(resolved_part).where(added_at))
            == _rows(sql.violation_rows(resolved_whole).where(added_at)))


@pytest.mark.parametrize("seed", [3, 4])
def test_a_commits_interval_counts_its_groups_tombstones_before_it(spark, seed):
    """``i`` is how many tombstones of the commit's group (in its partition) come before it: 0
    for a group with none, and for every commit when there are none at all (None)."""
    from jobs.stages import offsets as sql

    rng = random.Random(seed)
    logs = [_log(rng, p) for p in range(12)]
    commits = [c for log in logs for c in log[0]]
    tombs = [t for log in logs for t in log[2] if t[1] == "g"]   # group h has none
    assert tombs and any(c[5] == "h" for c in commits)
    frame = spark.createDataFrame(commits, SCHEMA).select("partition", "group_id", "offset")
    got = {(r.partition, r.offset): r.i for r in sql._with_interval(
        frame, spark.createDataFrame(tombs, "partition int, group_id string, offset bigint"))
        .collect()}
    assert got == {(c[0], c[1]): sum(t[0] == c[0] and t[1] == c[5] and t[2] < c[1] for t in tombs)
                   for c in commits}
    assert {r.i for r in sql._with_interval(frame, None).collect()} == {0}


def test_no_group_tombstones_leave_out_what_an_empty_frame_of_them_does(spark):
    from jobs.stages import offsets as sql

    rng = random.Random(5)
    logs = [_log(rng, p) for p in range(20)]
    # a group's id is unique to its partition, as in the test above
    held = spark.createDataFrame([(*c[:5], f"{c[5]}-{c[0]}", *c[6:]) for log in logs
                                  for c in log[0] if c[1] < log[3]], SCHEMA)
    until = spark.createDataFrame([(f"{g}-{p}", end) for p, log in enumerate(logs)
                                   for g, end in log[4]], "group_id string, folded_until bigint")
    none = spark.createDataFrame([], "partition int, group_id string, offset bigint")
    kept = _rows(sql.without_superseded(held, None, until))
    assert kept == _rows(sql.without_superseded(held, none, until))
    assert 0 < len(kept) < held.count()

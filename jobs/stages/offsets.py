"""Offset commits (95% of records) replayed in Spark SQL, exactly as :mod:`jobs.replay.offsets`.

Why SQL can do it: every effect on one key ``(group, topic, partition)`` is a write at an *effect
time* ``e``: a tombstone or a non-transactional commit at its own offset, a transactional commit
at its COMMIT marker ``m`` (an ABORT or no marker: never). The store then holds, for each key, the
candidate (commit with an effect) of greatest log offset after the key's last tombstone (a
tombstone also drops the key from open transactions, so earlier pending commits cannot come
back). A transactional commit at ``o`` is installed by its marker iff it is still pending there
and nothing installed since is newer: iff no later record of the key has ``e <= m`` (a
tombstone, a newer commit, the same producer's newer pending commit, a transaction committed
earlier). The one ordered pass per key is a window; markers reach their commits through a
broadcast list per ``(partition, producer)``; group tombstones likewise, to find the commits the
Python state machine still needs (see :func:`touches`).
"""

from __future__ import annotations

from jobs.replay.events import ABORT, ABORTED, COMMIT, COMMITTED, OPEN
from jobs.replay.messages import TX_02, TX_FLAG
from jobs.stages.frames import format_columns

INFINITE = 2 ** 62
COMMIT_COLUMNS = ("partition", "offset", "timestamp", "producer_id", "is_transactional",
                  "group_id", "topic", "topic_partition", "committed_offset", "leader_epoch",
                  "metadata", "commit_timestamp", "expire_timestamp", "topic_id", "record_type",
                  "value_version", "is_tombstone")


def _uuid_text(col):
    """16 bytes → ``str(uuid.UUID)``; null for null or the all-zero id (as replay's _topic_id)."""
    from pyspark.sql import functions as F

    h = F.lower(F.hex(col))
    text = F.concat_ws("-", h.substr(1, 8), h.substr(9, 4), h.substr(13, 4), h.substr(17, 4),
                       h.substr(21, 12))
    return F.when(col.isNull() | (h == F.lit("0" * 32)), F.lit(None)).otherwise(text)


def _none_if_minus_one(col):
    from pyspark.sql import functions as F

    return F.when(col == -1, F.lit(None)).otherwise(col)


def _with_markers(commits, markers):
    """Each pending commit gets its producer's next COMMIT/ABORT marker in the partition."""
    from pyspark.sql import functions as F

    lists = (markers.groupBy("partition", F.col("producer_id").alias("pid"))
             .agg(F.sort_array(F.collect_list(F.struct(F.col("offset").alias("m"),
                                                       F.col("control_type").alias("ctype"))))
                  .alias("markers")))
    joined = commits.join(F.broadcast(lists), ["partition", "pid"], "left")
    pending = ~F.col("is_tombstone") & (F.col("pid") != -1)
    nxt = F.get(F.filter("markers", lambda x: x["m"] > F.col("offset")), 0)
    return (joined.withColumn("m", F.when(pending, nxt["m"]))
            .withColumn("ctype", F.when(pending, nxt["ctype"])).drop("markers"))


KEY = ("partition", "group_id", "topic", "topic_partition")
# Transactional rows up to this many are joined back by broadcast; more by a shuffle join.
BROADCAST_ROWS = 1_000_000


def _next_same(c):
    """``next_same``: for a transactional commit, the log offset of the next commit of its key by
    the same producer. Only transactional rows (``pid != -1``, rare) need it, so it is computed on
    them alone and joined back, instead of a second shuffle and sort of every commit."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    txn = c.where(F.col("pid") != -1).select(*KEY, "pid", "offset", "is_tombstone")
    later = (Window.partitionBy(*KEY, "pid").orderBy(F.col("offset").desc())
             .rowsBetween(Window.unboundedPreceding, -1))
    same = txn.withColumn("next_same", F.min(F.when(~F.col("is_tombstone"), F.col("offset")))
                          .over(later)).select(*KEY, "offset", "next_same")
    return F.broadcast(same) if txn.count() <= BROADCAST_ROWS else same


def resolve_commits(records, markers):
    """Every offset-commit row with its replay outcome and the helper columns later steps use.

    ``records``: decoded rows (staged decode output) of record types 0/1; ``markers``: the
    snapshot's COMMIT/ABORT control rows (``partition``, ``offset``, ``producer_id``,
    ``control_type``)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    c = records.select(*COMMIT_COLUMNS).withColumn(
        "pid", F.coalesce("producer_id", F.lit(-1)).cast("long"))
    c = _with_markers(c, markers.where(F.col("control_type").isin(COMMIT, ABORT)))
    tomb, pending = F.col("is_tombstone"), ~F.col("is_tombstone") & (F.col("pid") != -1)
    e = (F.when(tomb | (F.col("pid") == -1), F.col("offset"))
         .when(F.col("ctype") == COMMIT, F.col("m")))
    c = c.withColumn("e", e)
    # One shuffle and one sort: every window below has the same partitioning and order (log
    # offset, newest first), so Spark evaluates them in one Window operator.
    # "Every later row" is a running frame over that order: Spark computes running frames
    # incrementally, but re-aggregates an unbounded-following frame for every row (quadratic in
    # one key's history). The whole key is one unbounded frame, computed once per key.
    key = Window.partitionBy(*KEY).orderBy(F.col("offset").desc())
    after = key.rowsBetween(Window.unboundedPreceding, -1)
    whole = key.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    candidate = ~tomb & F.col("e").isNotNull()
    same = _next_same(c)
    c = (c.withColumn("next_e", F.min("e").over(after))
         .withColumn("last_tomb", F.max(F.when(tomb, F.col("offset"))).over(whole))
         .withColumn("final_pos", F.max(F.when(candidate, F.col("offset"))).over(whole))
         .withColumn("next_tomb", F.min(F.when(tomb, F.col("offset"))).over(after)))
    c = c.join(same, [*KEY, "offset"], "left")
    m = F.col("m")
    installed = F.coalesce((F.coalesce("next_e", F.lit(INFINITE)) > m)
                           & (F.col("ctype") == COMMIT), F.lit(False))
    still_pending = ((F.coalesce("next_tomb", F.lit(INFINITE)) > m)
                     & (F.coalesce("next_same", F.lit(INFINITE)) > m))
    outcome = (F.when(tomb, "tombstone").when(F.col("pid") == -1, "non_transactional")
               .when(F.col("ctype") == COMMIT, COMMITTED).when(F.col("ctype") == ABORT, ABORTED)
               .otherwise(OPEN))
    return c.select(
        "group_id", "topic", F.col("topic_partition").alias("partition"), "committed_offset",
        _none_if_minus_one(F.col("leader_epoch")).alias("leader_epoch"), "metadata",
        "commit_timestamp", _none_if_minus_one(F.col("expire_timestamp")).alias("expire_timestamp"),
        _uuid_text(F.col("topic_id")).alias("topic_id"), F.col("record_type").cast("int"),
        F.col("value_version").cast("int"), "is_tombstone", F.col("pid").alias("producer_id"),
        F.coalesce("is_transactional", F.lit(False)).alias("is_transactional"),
        outcome.alias("outcome"),
        F.when(pending, installed).otherwise(F.lit(True)).alias("is_installed"),
        F.when(pending, m).alias("marker_log_offset"),
        F.col("partition").alias("log_partition"), F.col("offset").alias("log_offset"),
        F.col("timestamp").alias("log_timestamp"),
        # helpers for offsets / transactions / violations / touches
        (candidate & (F.col("offset") == F.col("final_pos"))
         & (F.col("offset") > F.coalesce("last_tomb", F.lit(-1)))).alias("is_final"),
        (pending & (F.col("ctype") == COMMIT) & still_pending & ~installed).alias("is_skipped"),
        "e", "ctype", F.col("topic_id").alias("topic_id_bytes"))


def offset_commit_rows(resolved, columns):
    return resolved.select(*columns)


def offset_rows(resolved, topic_ids, columns):
    """The final store: one row per key, topic id from the commit or else named by the group's
    replay (``topic_ids``: partition, group_id, topic, lookup_topic_id)."""
    from pyspark.sql import functions as F

    final = resolved.where("is_final").withColumn(
        "is_transactional", F.col("producer_id") != -1)
    names = topic_ids.select(F.col("log_partition").alias("t_partition"),
                             F.col("group_id").alias("t_group"), F.col("topic_name").alias("t_topic"),
                             "lookup_topic_id")
    joined = final.join(names, (F.col("log_partition") == F.col("t_partition"))
                        & (F.col("group_id") == F.col("t_group"))
                        & (F.col("topic") == F.col("t_topic")), "left")
    return joined.select(*[F.coalesce("topic_id", "lookup_topic_id").alias(c)
                           if c == "topic_id" else F.col(c) for c in columns])


def transaction_rows(resolved):
    from pyspark.sql import functions as F

    pending = resolved.where(~F.col("is_tombstone") & (F.col("producer_id") != -1))
    return (pending.groupBy("log_partition", "group_id", "producer_id", "marker_log_offset", "ctype")
            .agg(F.min("log_offset").alias("first_log_offset"),
                 F.max("log_offset").alias("last_log_offset"),
                 F.count(F.lit(1)).cast("int").alias("offset_count"))
            .select("group_id", "producer_id", "first_log_offset", "last_log_offset",
                    "marker_log_offset",
                    F.when(F.col("ctype") == COMMIT, COMMITTED)
                    .when(F.col("ctype") == ABORT, ABORTED).otherwise(OPEN).alias("outcome"),
                    "offset_count", "log_partition",
                    F.coalesce("marker_log_offset", "first_log_offset").alias("log_offset")))


def violation_rows(resolved):
    """TX-FLAG (producer id and transactional bit disagree) and TX-02 (a COMMIT skips an offset
    older than the installed one); the installed offset is found by a join on the few skips."""
    from pyspark.sql import functions as F

    pending = F.col("producer_id") != -1
    flag = resolved.where(pending != F.col("is_transactional")).select(
        F.lit("TX-FLAG").alias("rule_id"), F.lit("MEDIUM").alias("severity"), "group_id",
        F.lit(None).cast("string").alias("member_id"),
        format_columns(TX_FLAG, producer_id=F.col("producer_id"),
                       is_transactional=F.when(F.col("is_transactional"), "True")
                       .otherwise("False")).alias("message"),
        "log_partition", "log_offset")
    key = ["log_partition", "group_id", "topic", "partition"]
    skipped = resolved.where("is_skipped").select(
        *key, "producer_id", F.col("log_offset").alias("o"), F.col("marker_log_offset").alias("m"))
    # d: the key's last tombstone before the skipped commit (-1: none).
    tombs = resolved.where("is_tombstone").select(*key, F.col("log_offset").alias("t"))
    skips = (F.broadcast(skipped).join(tombs, key, "left")
             .groupBy(*key, "producer_id", "o", "m")
             .agg(F.coalesce(F.max(F.when(F.col("t") < F.col("o"), F.col("t"))), F.lit(-1))
                  .alias("d")))
    cands = resolved.where(~F.col("is_tombstone") & F.col("e").isNotNull()).select(
        *key, F.col("log_offset").alias("c_pos"), F.col("e").alias("c_e"))
    installed = (F.broadcast(skips).join(cands, key)
                 .where((F.col("c_e") < F.col("m")) & (F.col("c_pos") > F.col("d")))
                 .groupBy(*key, "producer_id", "o", "m").agg(F.max("c_pos").alias("at")))
    tx02 = installed.select(
        F.lit("TX-02").alias("rule_id"), F.lit("INFO").alias("severity"), "group_id",
        F.lit(None).cast("string").alias("member_id"),
        format_columns(TX_02, producer_id=F.col("producer_id"), topic=F.col("topic"),
                       partition=F.col("partition"), pending=F.col("o"),
                       installed=F.col("at")).alias("message"),
        "log_partition", F.col("m").alias("log_offset"))
    return flag.unionByName(tx02)


def touches(resolved, group_tombstones):
    """The commits the Python group replay must see (:func:`jobs.replay.offsets.note_commit`):
    the first commit of a group after each of its tombstones (group_tombstones: partition,
    group_id, offset of membership tombstones) and the first commit naming each topic id."""
    from pyspark.sql import functions as F

    commits = resolved.where(~F.col("is_tombstone")).select(
        F.col("log_partition").alias("partition"), "group_id", F.col("log_offset").alias("offset"),
        F.col("log_timestamp").alias("timestamp"), "topic", "topic_id_bytes")
    # First commits by their (numeric) offset alone, a hash aggregate; their other columns are
    # then joined back from the commits (a min over a struct would sort every commit instead).
    first = F.min("offset").alias("offset")
    per_interval = (_with_interval(commits.select("partition", "group_id", "offset"),
                                   group_tombstones)
                    .groupBy("partition", "group_id", "i").agg(first))
    per_topic_id = commits.where(_names_topic_id("topic_id_bytes")).groupBy(
        "partition", "group_id", "topic_id_bytes").agg(first)
    firsts = (per_interval.select("partition", "group_id", "offset")
              .unionByName(per_topic_id.select("partition", "group_id", "offset"))
              .dropDuplicates())
    return commits.join(firsts, ["partition", "group_id", "offset"]).select(
        "partition", "group_id", "offset", "timestamp", "topic", "topic_id_bytes")


def _with_interval(commits, group_tombstones):
    """``commits`` (``partition, group_id, offset``, ...) with ``i``: how many of its group's
    tombstones (``group_tombstones``: ``partition, group_id, offset``; None when there are
    none) come before it. A commit of a group without tombstones is 0 without the per-row array
    filter (an interpreted lambda); with none at all there is no join either."""
    from pyspark.sql import functions as F

    if group_tombstones is None:
        return commits.withColumn("i", F.lit(0))
    lists = group_tombstones.groupBy("partition", "group_id").agg(
        F.collect_list("offset").alias("tombs"))
    interval = F.when(F.col("tombs").isNull(), F.lit(0)).otherwise(
        F.size(F.filter("tombs", lambda t: t < F.col("offset"))))
    return (commits.join(F.broadcast(lists), ["partition", "group_id"], "left")
            .withColumn("i", interval).drop("tombs"))


def _names_topic_id(column: str):
    from pyspark.sql import functions as F

    return F.col(column).isNotNull() & (F.hex(column) != F.lit("0" * 32))


def without_superseded(commits, group_tombstones, until):
    """``commits`` (``records`` rows of offset commits, one group's or many, held before the
    records a replay adds to them) without those no row of that replay depends on but their own:
    a non-transactional commit (no producer) that is not a tombstone, at or before its group's
    ``folded_until`` (``until``: ``group_id, folded_until``; a group not in it keeps every
    commit), and before a later non-transactional commit of its key and before every pending
    transactional commit of its key, unless :func:`touches` keeps it (``group_tombstones`` as
    there; None when the commits' groups have none).

    Why nothing else changes: :func:`resolve_commits` reads, for each row, the rows after it
    (``next_e``, ``next_tomb``, ``next_same``) and the key's whole history only as the greatest
    offset of a candidate and of a tombstone. Such a commit is a candidate, but a later one of
    its key is too; a row before it is affected only if pending, and there is none; so every
    other row resolves as before, and the key's final row is the same. :func:`violation_rows`'
    TX-02 takes the newest candidate before a marker, which is never it (the later
    non-transactional commit, or the one that skipped the pending commit, is newer). The rows
    of a replay's added records come after every held one, so they read nothing of it.

    One aggregate of the commits (by key, topic id and tombstone interval), computed at once,
    gives both what supersedes and the first commits; the commits are then read again, each
    joined to the few rows per key and group that aggregate comes to."""
    from pyspark.sql import functions as F

    pid = F.coalesce("producer_id", F.lit(-1))
    live = ~F.col("is_tombstone")
    plain = live & (pid == -1)
    per = (_with_interval(commits.join(F.broadcast(until.select("group_id")), ["group_id"],
                                       "left_semi"), group_tombstones)
           .groupBy(*KEY, "topic_id", "i")
           .agg(F.max(F.when(plain, F.col("offset"))).alias("last_plain"),
                F.min(F.when(live & (pid != -1), F.col("offset"))).alias("first_pending"),
                F.min(F.when(live, F.col("offset"))).alias("first"))
           .localCheckpoint(eager=True))   # read twice below: computed once, not per read
    # per key: the offset before which a plain commit is superseded (and nothing pending reads it)
    cuts = per.groupBy(*KEY).agg(F.least(
        F.max("last_plain"), F.coalesce(F.min("first_pending"), F.lit(INFINITE))).alias("cut"))
    firsts = (per.groupBy("partition", "group_id", "i").agg(F.min("first").alias("offset"))
              .select("partition", "group_id", "offset")
              .unionByName(per.where(_names_topic_id("topic_id"))
                           .groupBy("partition", "group_id", "topic_id")
                           .agg(F.min("first").alias("offset"))
                           .select("partition", "group_id", "offset"))
              .where(F.col("offset").isNotNull()).distinct().withColumn("is_first", F.lit(True)))
    unread = F.coalesce(plain & (F.col("offset") < F.col("cut"))
                        & (F.col("offset") <= F.col("folded_until")) & F.col("is_first").isNull(),
                        F.lit(False))
    return (commits.join(F.broadcast(until), ["group_id"], "left")
            .join(F.broadcast(cuts), list(KEY), "left")
            .join(F.broadcast(firsts), ["partition", "group_id", "offset"], "left")
            .where(~unread).select(*commits.columns))

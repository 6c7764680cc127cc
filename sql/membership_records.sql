-- The membership records of a snapshot (types 2-24: every coordinator record but the offset
-- commits), each `records` row with its key bytes from `raw_records`: the few records whose
-- nested values the group views read (assignments, subscriptions, topologies, classic members)
-- and whose key tells records of one key apart (a regex of type 16, a topology of type 23).
-- A record's type is the first two bytes of its key (big-endian int16), so both sides are cut to
-- the membership records before the join; a record whose raw row is not in the lake (a
-- hand-written lake) keeps a null key. The audit and the report hold it computed once
-- (jobs.lake.views.MATERIALIZED); offset commits are 95% of a snapshot and never pass here.
select r.*, k.key
from records as r
left join (
    select snapshot_id, partition, offset, key
    from raw_records
    where not is_control and substring(key, 1, 2) not in (X'0000', X'0001')
) as k
    on r.snapshot_id = k.snapshot_id and r.partition = k.partition and r.offset = k.offset
where r.record_type between 2 and 24

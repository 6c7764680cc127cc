-- Coordinator load and compaction health, per __consumer_offsets partition of a snapshot: each
-- partition is served by one group coordinator, so a partition holding far more than its share
-- is one broker's load.
--
-- records, bytes: data records (control records apart) and their key + value bytes.
-- superseded_records: data records a later record of the same key follows in the partition. The
--   log cleaner keeps a record only while no later record of its key exists, and a tombstone only
--   until its batch's delete horizon (Kafka 4.3.1, storage/src/main/java/org/apache/kafka/storage/
--   internals/log/Cleaner.java, shouldRetainRecord): these are what the cleaner has not removed yet.
--   A record without a key counts too: the cleaner discards it as invalid (the same method).
-- load_factor: the partition's records over the mean of the snapshot's partitions that hold any.
-- top_group: the group with the most records in the partition (its records: top_group_records).
with data as (
    select snapshot_id, partition, offset, key,
           coalesce(length(key), 0) + coalesce(length(value), 0) as record_bytes,
           value is null as is_tombstone
    from raw_records
    where not is_control
),

latest as (
    select snapshot_id, partition, key, max(offset) as latest_offset
    from data
    group by snapshot_id, partition, key
),

per_partition as (
    select
        d.snapshot_id,
        d.partition,
        count(*) as records,
        sum(d.record_bytes) as bytes,
        sum(case when d.is_tombstone then 1 else 0 end) as tombstones,
        sum(case when d.key is null or d.offset < l.latest_offset then 1 else 0 end)
            as superseded_records,
        max(d.record_bytes) as largest_record_bytes,
        max_by(d.offset, struct(d.record_bytes, -d.offset)) as largest_record_offset
    from data as d
    left join latest as l
        on d.snapshot_id = l.snapshot_id and d.partition = l.partition and d.key = l.key
    group by d.snapshot_id, d.partition
),

controls as (
    select snapshot_id, partition, count(*) as control_records
    from raw_records
    where is_control
    group by snapshot_id, partition
),

group_records as (
    select snapshot_id, partition, group_id, count(*) as n
    from records
    where group_id is not null
    group by snapshot_id, partition, group_id
),

groups_per_partition as (
    select
        snapshot_id,
        partition,
        count(*) as groups,
        max_by(group_id, struct(n, group_id)) as top_group,
        max(n) as top_group_records
    from group_records
    group by snapshot_id, partition
)

select
    p.snapshot_id,
    p.partition,
    p.records,
    coalesce(c.control_records, 0) as control_records,
    p.bytes,
    coalesce(g.groups, 0) as groups,
    p.tombstones,
    p.superseded_records,
    round(p.superseded_records / p.records, 4) as superseded_share,
    p.largest_record_bytes,
    p.largest_record_offset,
    round(p.records / avg(p.records) over (partition by p.snapshot_id), 4) as load_factor,
    g.top_group,
    g.top_group_records
from per_partition as p
left join controls as c
    on p.snapshot_id = c.snapshot_id and p.partition = c.partition
left join groups_per_partition as g
    on p.snapshot_id = g.snapshot_id and p.partition = g.partition

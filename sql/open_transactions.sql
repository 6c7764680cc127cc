-- Transactional offset commits with no COMMIT/ABORT marker by the end of the snapshot: their
-- offsets are not installed yet, and the snapshot's cut went through the transaction.
with open_commits as (
    select
        snapshot_id,
        group_id,
        producer_id,
        count(*) as pending_offset_count,
        array_sort(collect_set(topic)) as topic_names,
        min(log_timestamp) as first_write_ms,
        max(log_timestamp) as last_write_ms
    from offset_commits
    where outcome = 'open'
    group by snapshot_id, group_id, producer_id
)

select
    t.snapshot_id,
    t.group_id,
    t.producer_id,
    t.offset_count,
    coalesce(c.pending_offset_count, 0) as pending_offset_count,
    c.topic_names,
    timestamp_millis(c.first_write_ms) as opened_at,
    timestamp_millis(c.last_write_ms) as last_write_at,
    t.log_partition,
    t.first_log_offset,
    t.last_log_offset
from transactions as t
left join open_commits as c
    on t.snapshot_id = c.snapshot_id and t.group_id = c.group_id and t.producer_id = c.producer_id
where t.outcome = 'open'

-- Latest committed offset per group, topic and partition with the topic's name and id (the id from
-- the offset record, else from an assignment naming the same topic) and timestamps.
with known_topic_ids as (
    select snapshot_id, topic_name, max(topic_id) as topic_id
    from (
        select snapshot_id, topic_name, topic_id from member_assignments
        union all
        select snapshot_id, topic_name, topic_id from target_assignments
    )
    where topic_name is not null and topic_id is not null
    group by snapshot_id, topic_name
)

select
    o.snapshot_id,
    o.group_id,
    g.group_type,
    o.topic as topic_name,
    coalesce(o.topic_id, k.topic_id) as topic_id,
    o.partition,
    o.committed_offset,
    o.leader_epoch,
    o.metadata,
    timestamp_millis(o.commit_timestamp) as committed_at,
    timestamp_millis(o.expire_timestamp) as expires_at,
    o.is_transactional,
    o.producer_id,
    o.log_partition,
    o.log_offset
from offsets as o
left join groups as g
    on o.snapshot_id = g.snapshot_id and o.group_id = g.group_id
left join known_topic_ids as k
    on o.snapshot_id = k.snapshot_id and o.topic = k.topic_name
where o.committed_offset is not null

-- Partitions a member still owns but must give up (PartitionsPendingRevocation), with the owner's
-- epoch and the member the target assignment gives the partition to.
with pending as (
    select *
    from member_assignments
    where is_pending_revocation
),

targets as (
    select snapshot_id, group_id, topic_id, subtopology_id, partition, member_id as target_member_id
    from target_assignments
)

select
    p.snapshot_id,
    p.group_id,
    p.member_id as owner_member_id,
    m.member_epoch as owner_member_epoch,
    m.member_state as owner_member_state,
    p.topic_id,
    p.topic_name,
    p.subtopology_id,
    p.partition,
    p.assignment_epoch,
    t.target_member_id,
    t.target_member_id is null as is_unassigned_in_target,
    p.log_partition,
    p.log_offset
from pending as p
left join members as m
    on p.snapshot_id = m.snapshot_id and p.group_id = m.group_id and p.member_id = m.member_id
left join targets as t
    on p.snapshot_id = t.snapshot_id and p.group_id = t.group_id
   and p.topic_id <=> t.topic_id and p.subtopology_id <=> t.subtopology_id
   and p.partition = t.partition

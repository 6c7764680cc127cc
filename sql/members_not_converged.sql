-- Members of consumer, share and streams groups whose member epoch is below the group's target
-- assignment epoch: they still have to reconcile. Members at -2 (static member left) or -1
-- (assignment deleted) are out of the epoch order and not listed.
with modern_groups as (
    select snapshot_id, group_id, group_type, group_state, group_epoch, target_assignment_epoch
    from groups
    where target_assignment_epoch >= 0
),

pending_partitions as (
    select snapshot_id, group_id, member_id, count(*) as pending_revocation_count
    from member_assignments
    where is_pending_revocation
    group by snapshot_id, group_id, member_id
)

select
    m.snapshot_id,
    m.group_id,
    g.group_type,
    g.group_state,
    m.member_id,
    m.instance_id,
    m.client_id,
    m.member_state,
    m.member_epoch,
    m.previous_member_epoch,
    g.target_assignment_epoch,
    g.group_epoch,
    g.target_assignment_epoch - m.member_epoch as epochs_behind,
    coalesce(p.pending_revocation_count, 0) as pending_revocation_count,
    p.member_id is not null as has_pending_revocation,
    m.log_partition,
    m.log_offset
from members as m
join modern_groups as g
    on m.snapshot_id = g.snapshot_id and m.group_id = g.group_id
left join pending_partitions as p
    on m.snapshot_id = p.snapshot_id and m.group_id = p.group_id and m.member_id = p.member_id
where m.member_epoch >= 0
  and m.member_epoch < g.target_assignment_epoch

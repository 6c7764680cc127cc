-- Every target assignment epoch of a group and how long its members took to reach it, from the
-- epochs timeline: a reconciliation starts when the target epoch is written and ends when the
-- last member writes that epoch. Pending members are live members still below the newest target.
with target_epochs as (
    select
        snapshot_id,
        group_id,
        log_partition,
        epoch as target_assignment_epoch,
        log_offset as set_log_offset,
        log_timestamp as set_ms,
        lead(log_offset) over (partition by snapshot_id, group_id order by log_offset)
            as next_set_log_offset
    from epochs
    where epoch_kind = 'target_assignment' and epoch >= 0
),

member_arrivals as (
    select
        t.snapshot_id,
        t.group_id,
        t.set_log_offset,
        e.member_id,
        min(e.log_timestamp) as arrived_ms
    from target_epochs as t
    join epochs as e
        on e.snapshot_id = t.snapshot_id
       and e.group_id = t.group_id
       and e.epoch_kind = 'member'
       and e.epoch = t.target_assignment_epoch
       and e.log_offset > t.set_log_offset
    group by t.snapshot_id, t.group_id, t.set_log_offset, e.member_id
),

arrivals as (
    select
        snapshot_id,
        group_id,
        set_log_offset,
        count(*) as arrived_member_count,
        max(arrived_ms) as last_arrived_ms
    from member_arrivals
    group by snapshot_id, group_id, set_log_offset
),

pending as (
    select m.snapshot_id, m.group_id, g.target_assignment_epoch, count(*) as pending_member_count
    from members as m
    join groups as g
        on m.snapshot_id = g.snapshot_id and m.group_id = g.group_id
    where m.member_epoch >= 0 and m.member_epoch < g.target_assignment_epoch
    group by m.snapshot_id, m.group_id, g.target_assignment_epoch
)

select
    t.snapshot_id,
    t.group_id,
    t.target_assignment_epoch,
    timestamp_millis(t.set_ms) as target_set_at,
    timestamp_millis(a.last_arrived_ms) as last_member_arrived_at,
    coalesce(a.arrived_member_count, 0) as arrived_member_count,
    coalesce(p.pending_member_count, 0) as pending_member_count,
    a.last_arrived_ms - t.set_ms as reconciliation_ms,
    t.next_set_log_offset is not null as is_superseded,
    t.next_set_log_offset is null and coalesce(p.pending_member_count, 0) > 0 as is_in_progress,
    t.log_partition,
    t.set_log_offset
from target_epochs as t
left join arrivals as a
    on t.snapshot_id = a.snapshot_id and t.group_id = a.group_id
   and t.set_log_offset = a.set_log_offset
left join pending as p
    on t.snapshot_id = p.snapshot_id and t.group_id = p.group_id
   and t.target_assignment_epoch = p.target_assignment_epoch
   and t.next_set_log_offset is null

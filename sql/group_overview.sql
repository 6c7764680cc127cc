-- One row per live group: its epochs, members, owned and pending partitions and committed
-- offsets, and whether every member has reached the target assignment epoch.
with member_facts as (
    select
        m.snapshot_id,
        m.group_id,
        count_if(m.instance_id is not null) as static_member_count,
        count_if(m.uses_classic_protocol) as classic_protocol_member_count,
        count_if(m.member_epoch >= 0 and m.member_epoch < g.target_assignment_epoch)
            as unconverged_member_count
    from members as m
    join groups as g
        on m.snapshot_id = g.snapshot_id and m.group_id = g.group_id
    group by m.snapshot_id, m.group_id
),

assignment_facts as (
    select
        snapshot_id,
        group_id,
        count(*) as owned_partition_count,
        count_if(is_pending_revocation) as pending_revocation_count
    from member_assignments
    group by snapshot_id, group_id
),

offset_facts as (
    select
        snapshot_id,
        group_id,
        count(*) as committed_partition_count,
        count(distinct topic) as committed_topic_count,
        max(commit_timestamp) as last_commit_ms
    from offsets
    where committed_offset is not null
    group by snapshot_id, group_id
),

epoch_facts as (
    select snapshot_id, group_id, max(log_timestamp) as last_epoch_change_ms
    from epochs
    group by snapshot_id, group_id
)

select
    g.snapshot_id,
    g.group_id,
    g.group_type,
    g.group_state,
    g.is_simple,
    g.group_epoch,
    g.target_assignment_epoch,
    g.generation,
    g.member_count,
    coalesce(mf.static_member_count, 0) as static_member_count,
    coalesce(mf.classic_protocol_member_count, 0) as classic_protocol_member_count,
    coalesce(mf.unconverged_member_count, 0) as unconverged_member_count,
    coalesce(af.owned_partition_count, 0) as owned_partition_count,
    coalesce(af.pending_revocation_count, 0) as pending_revocation_count,
    coalesce(o.committed_partition_count, 0) as committed_partition_count,
    coalesce(o.committed_topic_count, 0) as committed_topic_count,
    timestamp_millis(o.last_commit_ms) as last_committed_at,
    timestamp_millis(ef.last_epoch_change_ms) as last_epoch_change_at,
    coalesce(g.group_epoch > g.target_assignment_epoch, false) as is_assigning,
    coalesce(mf.unconverged_member_count, 0) = 0
        and coalesce(af.pending_revocation_count, 0) = 0 as is_converged
from groups as g
left join member_facts as mf
    on g.snapshot_id = mf.snapshot_id and g.group_id = mf.group_id
left join assignment_facts as af
    on g.snapshot_id = af.snapshot_id and g.group_id = af.group_id
left join offset_facts as o
    on g.snapshot_id = o.snapshot_id and g.group_id = o.group_id
left join epoch_facts as ef
    on g.snapshot_id = ef.snapshot_id and g.group_id = ef.group_id

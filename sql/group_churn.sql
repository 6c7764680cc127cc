-- Churn per group and hour of a snapshot: how often the group rebalanced and why. One row per
-- group and UTC hour (the session time zone is UTC: conf/offsetlake.yaml) holding at least one
-- of the events below, by the time of the record that shows it.
--
-- epoch_bumps: group epoch increases (epochs of kind 'group': ConsumerGroupMetadata and the share
--   and streams metadata records). The coordinator bumps the epoch on every change of membership
--   or subscriptions and writes the new epoch (Kafka 4.3.1, GroupMetadataManager
--   .updateSubscriptionMetadata and .consumerGroupFenceMembers, each through
--   GroupCoordinatorRecordHelpers.newConsumerGroupEpochRecord).
-- joins: a member that starts holding an epoch: its member epoch steps from 0 (new member id, or
--   a member id back after its tombstones) or from a leave epoch to a positive epoch; in a classic
--   group, a member id of a GroupMetadata record that the group's previous GroupMetadata record
--   (none after a tombstone) did not list. A static member that rejoins under a new member id
--   starts at epoch 0 (GroupMetadataManager.getOrMaybeSubscribeStaticConsumerGroupMember) and
--   counts when it reaches its first epoch.
-- leaves: a member epoch stepping to -2 (a static member's temporary leave:
--   ConsumerGroupHeartbeatRequest.LEAVE_GROUP_STATIC_MEMBER_EPOCH, written by
--   GroupMetadataManager.consumerGroupStaticMemberGroupLeave) or to -1 (its current-assignment
--   tombstone: GroupMetadataManager.removeMember; jobs/replay keeps -1 after it), except the -1
--   that follows a -2 (the same departure); in a classic group, a member id the previous
--   GroupMetadata record listed and this one (or a tombstone) does not. A conversion between
--   classic and consumer groups therefore shows every member leaving and joining.
-- static_restarts: a static member (instance id) showing up under another member id than the
--   group's previous record of that instance id (ConsumerGroupMemberMetadata / streams member
--   records, or the members of GroupMetadata; ClassicGroup.replaceStaticMember in classic groups).
-- generation_bumps: a classic group's GroupMetadata record with a higher generation than the
--   group's previous one (epochs of kind 'generation'): each rebalance that completes its join
--   phase moves the generation by one (ClassicGroup.initNextGeneration, called by
--   GroupMetadataManager.completeClassicGroupJoin) and the group is stored with it.
-- max_converge_ms: of the hour's epoch bumps, the longest time from the bump to the last member
--   reaching that epoch (the idea of long_reconciliations.sql, which measures from the target
--   assignment; here from the group epoch bump, what churn costs the members); members that
--   never reached it do not count; null when no member reached it (superseded, still in
--   progress, classic groups).
-- is_storm: epoch_bumps + generation_bumps >= settings.storm_epoch_bumps_per_hour.
-- group_type: the type of the record of the hour's last event (record types of
--   decoders/records_catalog.py), else the group's live type. log_partition: the group's __consumer_offsets partition;
--   bump_log_offsets: the log offsets of the hour's epoch and generation bumps, in order.
with group_records as (
    select
        snapshot_id,
        partition,
        offset,
        timestamp,
        group_id,
        member_id,
        record_type,
        is_tombstone,
        value,
        case
            when record_type = 2 then 'classic'
            when record_type between 3 and 8 or record_type = 16 then 'consumer'
            when record_type between 9 and 15 then 'share'
            when record_type between 17 and 24 then 'streams'
        end as group_type
    from membership_records
),

epoch_steps as (
    select e.*, r.group_type
    from epochs as e
    left join group_records as r
        on e.snapshot_id = r.snapshot_id
       and e.log_partition = r.partition
       and e.log_offset = r.offset
),

bumps as (
    select *
    from epoch_steps
    where epoch_kind = 'group' and epoch > previous_epoch
),

arrivals as (
    select
        b.snapshot_id,
        b.group_id,
        b.log_offset,
        e.member_id,
        min(e.log_timestamp) as arrived_ms
    from bumps as b
    join epochs as e
        on e.snapshot_id = b.snapshot_id
       and e.group_id = b.group_id
       and e.epoch_kind = 'member'
       and e.epoch = b.epoch
       and e.log_offset > b.log_offset
    group by b.snapshot_id, b.group_id, b.log_offset, e.member_id
),

convergence as (
    select snapshot_id, group_id, log_offset, max(arrived_ms) as last_arrived_ms
    from arrivals
    group by snapshot_id, group_id, log_offset
),

classic_records as (
    select
        snapshot_id,
        group_id,
        partition,
        offset,
        timestamp,
        transform(
            coalesce(variant_get(value, '$.data.members', 'array<struct<memberId: string>>'),
                     array()),
            m -> m.memberId) as member_ids
    from group_records
    where record_type = 2 and (is_tombstone or value is not null)
),

classic_changes as (
    select
        *,
        coalesce(lag(member_ids) over (partition by snapshot_id, group_id
                                       order by partition, offset), array()) as previous_ids
    from classic_records
),

instance_records as (
    select
        snapshot_id,
        group_id,
        group_type,
        partition,
        offset,
        timestamp,
        member_id,
        variant_get(value, '$.data.instanceId', 'string') as instance_id
    from group_records
    where record_type in (5, 19) and not is_tombstone
    union all
    select
        r.snapshot_id,
        r.group_id,
        r.group_type,
        r.partition,
        r.offset,
        r.timestamp,
        m.memberId as member_id,
        m.groupInstanceId as instance_id
    from group_records as r
    lateral view explode(variant_get(
        r.value, '$.data.members', 'array<struct<memberId: string, groupInstanceId: string>>'))
        listed as m
    where r.record_type = 2 and not r.is_tombstone
),

instance_changes as (
    select
        *,
        lag(member_id) over (partition by snapshot_id, group_id, instance_id
                             order by partition, offset) as previous_member_id
    from instance_records
    where instance_id is not null and instance_id <> ''
),

events as (
    select
        b.snapshot_id, b.group_id, b.group_type, b.log_partition, b.log_offset,
        b.log_timestamp, 'epoch_bump' as event, 1 as n,
        c.last_arrived_ms - b.log_timestamp as converge_ms
    from bumps as b
    left join convergence as c
        on b.snapshot_id = c.snapshot_id and b.group_id = c.group_id
       and b.log_offset = c.log_offset
    union all
    select
        snapshot_id, group_id, group_type, log_partition, log_offset, log_timestamp,
        case when epoch > 0 then 'join' else 'leave' end, 1, null
    from epoch_steps
    where epoch_kind = 'member'
      and ((epoch > 0 and coalesce(previous_epoch, 0) <= 0)
           or epoch = -2
           or (epoch = -1 and coalesce(previous_epoch, 0) <> -2))
    union all
    select
        snapshot_id, group_id, group_type, log_partition, log_offset, log_timestamp,
        'generation_bump', 1, null
    from epoch_steps
    where epoch_kind = 'generation' and epoch > previous_epoch
    union all
    select
        snapshot_id, group_id, 'classic', partition, offset, timestamp, 'join',
        size(array_except(member_ids, previous_ids)), null
    from classic_changes
    union all
    select
        snapshot_id, group_id, 'classic', partition, offset, timestamp, 'leave',
        size(array_except(previous_ids, member_ids)), null
    from classic_changes
    union all
    select
        snapshot_id, group_id, group_type, partition, offset, timestamp, 'static_restart', 1,
        null
    from instance_changes
    where previous_member_id <> member_id
),

hours as (
    select
        snapshot_id,
        group_id,
        date_trunc('hour', timestamp_millis(log_timestamp)) as hour_at,
        max_by(group_type, case when group_type is not null then log_offset end)
            as last_group_type,
        coalesce(sum(case when event = 'epoch_bump' then n end), 0) as epoch_bumps,
        coalesce(sum(case when event = 'join' then n end), 0) as joins,
        coalesce(sum(case when event = 'leave' then n end), 0) as leaves,
        coalesce(sum(case when event = 'static_restart' then n end), 0) as static_restarts,
        coalesce(sum(case when event = 'generation_bump' then n end), 0) as generation_bumps,
        max(converge_ms) as max_converge_ms,
        max(log_partition) as log_partition,
        sort_array(collect_list(
            case when event in ('epoch_bump', 'generation_bump') then log_offset end))
            as bump_log_offsets
    from events
    where n > 0
    group by snapshot_id, group_id, date_trunc('hour', timestamp_millis(log_timestamp))
)

select
    h.snapshot_id,
    h.group_id,
    coalesce(h.last_group_type, g.group_type) as group_type,
    h.hour_at,
    cast(h.epoch_bumps as bigint) as epoch_bumps,
    cast(h.joins as bigint) as joins,
    cast(h.leaves as bigint) as leaves,
    cast(h.static_restarts as bigint) as static_restarts,
    cast(h.generation_bumps as bigint) as generation_bumps,
    h.max_converge_ms,
    h.epoch_bumps + h.generation_bumps >= s.storm_epoch_bumps_per_hour as is_storm,
    h.log_partition,
    h.bump_log_offsets
from hours as h
cross join settings as s
left join groups as g
    on h.snapshot_id = g.snapshot_id and h.group_id = g.group_id

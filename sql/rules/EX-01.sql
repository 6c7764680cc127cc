-- EX-01 committed offsets expire soon: offsets the coordinator will expire within
-- settings.expiry_warning_ms of the snapshot time (already due included), of a group that has
-- members or was active within settings.recent_activity_ms (any record of the group: a commit,
-- group or member record; offset tombstones apart, which the coordinator's own expiry writes).
-- The forecast and its Kafka sources (OffsetMetadataManager.cleanupExpiredOffsets, the groups'
-- offsetExpirationCondition, GroupCoordinatorConfig) are in sql/offset_expiry.sql.
--
-- One finding per (group, topic), not per partition: the operator's remedy (commit again, or
-- raise offsets.retention.minutes, before the weekend) is per group and topic, and a topic of
-- hundreds of partitions would otherwise bury every other finding. The finding points at the
-- record of the partition that expires first; evidence_log_offsets holds every partition's
-- offset record; the message names the partition count and the earliest expiry.
-- Severity: medium when the group has no members (it is idle and loses these offsets, maybe
-- the group); low when it has members (a topic it no longer subscribes to).
with activity as (
    select snapshot_id, group_id, max(timestamp) as last_activity_ms
    from records
    where group_id is not null and not (record_type in (0, 1) and is_tombstone)
    group by snapshot_id, group_id
),

due as (
    select
        e.*,
        unix_millis(e.expires_at) as expires_ms,
        unix_millis(e.snapshot_at) as snapshot_ms,
        a.last_activity_ms,
        st.offsets_retention_ms
    from offset_expiry as e
    cross join settings as st
    left join activity as a
        on e.snapshot_id = a.snapshot_id and e.group_id = a.group_id
    where e.expires_at is not null
        and e.ms_until_expiry <= st.expiry_warning_ms
        and (e.member_count > 0
             or a.last_activity_ms >= unix_millis(e.snapshot_at) - st.recent_activity_ms)
),

per_topic as (
    select
        snapshot_id,
        group_id,
        topic,
        max(topic_id) as topic_id,
        max(group_state) as group_state,
        max(member_count) as member_count,
        max(last_activity_ms) as last_activity_ms,
        max(snapshot_ms) as snapshot_ms,
        max(group_expires_at) as group_expires_at,
        max(offsets_retention_ms) as offsets_retention_ms,
        count(*) as partition_count,
        min_by(struct(partition, log_partition, log_offset, expires_ms),
               struct(expires_ms, partition)) as earliest,
        max(expires_ms) as last_expires_ms,
        array_sort(collect_list(partition)) as partitions,
        array_sort(collect_list(log_offset)) as evidence_log_offsets,
        array_sort(collect_set(base_timestamp_kind)) as base_timestamp_kinds
    from due
    group by snapshot_id, group_id, topic
),

worded as (
    select
        p.*,
        case when p.member_count > 0 then 'low' else 'medium' end as severity,
        concat(
            'Group ''', p.group_id, ''' (',
            case
                when p.member_count > 0
                    then concat(p.member_count, if(p.member_count = 1, ' member', ' members'))
                else concat('no members, last active ',
                            format_number((p.snapshot_ms - p.last_activity_ms) / 3600000.0, 1),
                            ' h before the snapshot')
            end,
            ') loses its committed offsets of ', p.partition_count,
            if(p.partition_count = 1, ' partition', ' partitions'),
            ' of topic ''', p.topic, ''': the first expires at ',
            date_format(timestamp_millis(p.earliest.expires_ms), 'yyyy-MM-dd HH:mm:ss'), ' UTC, ',
            format_number(abs(p.earliest.expires_ms - p.snapshot_ms) / 3600000.0, 1), ' h ',
            if(p.earliest.expires_ms < p.snapshot_ms, 'before', 'after'), ' the snapshot',
            case
                when p.group_expires_at is not null
                    then concat('; the group is deleted with its last offset at ',
                                date_format(p.group_expires_at, 'yyyy-MM-dd HH:mm:ss'), ' UTC')
                else ''
            end,
            '.'
        ) as message
    from per_topic as p
)

select
    snapshot_id,
    'EX-01' as rule_id,
    severity,
    case when severity = 'info' then 'notice' else 'violation' end as verdict,
    group_id,
    cast(null as string) as member_id,
    topic,
    topic_id,
    earliest.partition as partition,
    earliest.log_partition as log_partition,
    earliest.log_offset as log_offset,
    evidence_log_offsets,
    message,
    to_json(named_struct(
        'partition_count', partition_count,
        'partitions', partitions,
        'earliest_expires_at', timestamp_millis(earliest.expires_ms),
        'latest_expires_at', timestamp_millis(last_expires_ms),
        'base_timestamp_kinds', base_timestamp_kinds,
        'group_state', group_state,
        'member_count', member_count,
        'last_activity_at', timestamp_millis(last_activity_ms),
        'group_expires_at', group_expires_at,
        'snapshot_at', timestamp_millis(snapshot_ms),
        'offsets_retention_ms', offsets_retention_ms
    )) as details
from worded

-- CH-01 rebalance storm: a group whose epoch (or classic generation) moved at least
-- settings.storm_epoch_bumps_per_hour times in one hour (sql/group_churn.sql, is_storm). Every
-- change of a group's membership or subscriptions bumps its epoch and makes its members reconcile
-- (Kafka 4.3.1, GroupMetadataManager.updateSubscriptionMetadata / consumerGroupFenceMembers; a
-- classic group's generation moves with each completed rebalance). One finding per group and
-- stormy hour; it points at the bump that reached the threshold and lists the hour's bumps
-- (at most 100) as evidence.
select
    c.snapshot_id,
    'CH-01' as rule_id,
    'medium' as severity,
    'violation' as verdict,
    c.group_id,
    cast(null as string) as member_id,
    cast(null as string) as topic,
    cast(null as string) as topic_id,
    cast(null as int) as partition,
    c.log_partition,
    try_element_at(c.bump_log_offsets, greatest(cast(s.storm_epoch_bumps_per_hour as int), 1))
        as log_offset,
    slice(c.bump_log_offsets, 1, 100) as evidence_log_offsets,
    concat(
        'Group ', c.group_id, ' (', coalesce(c.group_type, 'unknown type'), ') rebalanced ',
        c.epoch_bumps + c.generation_bumps, ' times in the hour from ',
        date_format(c.hour_at, 'yyyy-MM-dd HH:mm'), ' UTC (', c.epoch_bumps,
        ' group epoch bumps, ', c.generation_bumps, ' generation bumps; threshold ',
        s.storm_epoch_bumps_per_hour, '): ', c.joins, ' joins, ', c.leaves, ' leaves, ',
        c.static_restarts, ' static member restarts',
        case
            when c.max_converge_ms is null then ''
            else concat(', slowest convergence ', c.max_converge_ms, ' ms')
        end,
        '.') as message,
    to_json(named_struct(
        'hour_at', date_format(c.hour_at, "yyyy-MM-dd'T'HH:mm:ss'Z'"),
        'group_type', c.group_type,
        'epoch_bumps', c.epoch_bumps,
        'generation_bumps', c.generation_bumps,
        'joins', c.joins,
        'leaves', c.leaves,
        'static_restarts', c.static_restarts,
        'max_converge_ms', c.max_converge_ms,
        'storm_epoch_bumps_per_hour', s.storm_epoch_bumps_per_hour,
        'bump_count', size(c.bump_log_offsets)),
        map('ignoreNullFields', 'false')) as details
from group_churn as c
cross join settings as s
where c.is_storm

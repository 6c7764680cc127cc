-- GH-01 ghost group: a group that holds committed offsets, has no members and has been idle
-- (no commit, no group or member record) for longer than settings.ghost_idle_ms. Lag monitors
-- alert on it although nothing consumes; the coordinator keeps it until its offsets expire
-- (GroupCoordinatorShard.cleanupGroupMetadata) or it is deleted. The facts and their Kafka
-- sources are in sql/ghost_groups.sql.
--
-- Severity: low for a group that once had members (consumers stopped and never came back);
-- info for one that never rebalanced (offsets only, a simple group: a consumer using assign() or
-- an admin offset reset; no membership to judge it by), a notice rather than a violation.
-- The finding points at the group's newest record; evidence_log_offsets are the records of its
-- current offsets.
with worded as (
    select
        g.*,
        case when g.never_rebalanced then 'info' else 'low' end as severity,
        concat(
            'Group ''', g.group_id, ''' (',
            coalesce(concat(g.group_type, ', ', g.group_state), 'no group record'),
            if(g.never_rebalanced, ', never rebalanced', ''), ') has committed offsets for ',
            g.committed_partitions, if(g.committed_partitions = 1, ' partition', ' partitions'),
            ' of ', g.committed_topics, if(g.committed_topics = 1, ' topic', ' topics'),
            ' and no members, and has been idle for ', format_number(g.idle_ms / 3600000.0, 1),
            ' h (threshold ', format_number(st.ghost_idle_ms / 3600000.0, 1),
            ' h): lag alerts on it are false until its offsets expire or the group is deleted.'
        ) as message
    from ghost_groups as g
    cross join settings as st
    where g.is_ghost
)

select
    snapshot_id,
    'GH-01' as rule_id,
    severity,
    case when severity = 'info' then 'notice' else 'violation' end as verdict,
    group_id,
    cast(null as string) as member_id,
    cast(null as string) as topic,
    cast(null as string) as topic_id,
    cast(null as int) as partition,
    log_partition,
    log_offset,
    commit_log_offsets as evidence_log_offsets,
    message,
    to_json(named_struct(
        'group_type', group_type,
        'group_state', group_state,
        'is_simple', is_simple,
        'committed_partitions', committed_partitions,
        'committed_topics', committed_topics,
        'last_commit_at', last_commit_at,
        'last_member_activity_at', last_member_activity_at,
        'idle_ms', idle_ms,
        'never_rebalanced', never_rebalanced
    )) as details
from worded

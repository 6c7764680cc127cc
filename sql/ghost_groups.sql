-- Ghost groups: groups of a snapshot that hold committed offsets and have no members. Lag
-- monitors keep reporting lag for them (their offsets fall further behind the log end) although
-- nothing consumes, so their alerts are false until the offsets expire or the group is deleted.
--
-- Which groups: every group with current committed offsets (`offsets`) and no member: classic
-- groups in state Empty, consumer/streams groups with no members, simple groups (a classic group
-- made by offset commits alone) and offsets whose group the log no longer has (a group tombstone
-- came after the commits: group_type and group_state are null then).
--
-- How Kafka keeps them (4.3.1): an offset commit for a group id the coordinator does not know
-- creates an Empty classic group without protocol type (OffsetMetadataManager.replay calls
-- GroupMetadataManager.getOrMaybeCreateClassicGroup(groupId, true), which builds a ClassicGroup in
-- ClassicGroupState.EMPTY; ClassicGroup.isSimpleGroup: no protocol type, Empty, no pending
-- member). No GroupMetadata (type 2) value is ever written for it. It is deleted like any empty
-- group once all its offsets expired: GroupCoordinatorShard.cleanupGroupMetadata ->
-- OffsetMetadataManager.cleanupExpiredOffsets -> GroupMetadataManager.maybeDeleteGroup ->
-- ClassicGroup.createGroupTombstoneRecords, which appends a GroupMetadata tombstone although no
-- GroupMetadata value preceded it. DeleteGroups does the same (GroupCoordinatorShard.deleteGroups:
-- OffsetMetadataManager.deleteAllOffsets, then
-- GroupMetadataManager.createGroupTombstoneRecordsAndCancelTimers).
--
-- group_type, group_state, is_simple: from `groups` (null: offsets of a group the log removed).
-- committed_partitions, committed_topics: current committed offsets of the group.
-- last_commit_at: the newest commit timestamp among them (what offset expiration starts from for
--   simple and consumer groups: ClassicGroup/ConsumerGroup.offsetExpirationCondition).
-- last_member_activity_at: the newest record of the group other than offset commits (GroupMetadata,
--   consumer/share/streams group and member records, tombstones included): the last time the
--   coordinator wrote anything about its membership. Null when it never did.
-- idle_ms: snapshot time (the newest record timestamp of the snapshot: `snapshot_time`) minus the
--   later of last_commit_at and last_member_activity_at.
-- is_ghost: idle_ms > settings.ghost_idle_ms.
-- never_rebalanced: a classic group (or offsets without a group) for which the snapshot holds no
--   GroupMetadata value: it never completed a join, only offsets were committed under its id (a
--   consumer using assign(), an admin offset reset). Its deletion tombstone is the only type-2
--   record it will ever get. As far as the snapshot shows: a compacted log keeps only the latest
--   type-2 record of a group.
-- log_partition, log_offset: the group's newest record; commit_log_offsets: the records of its
--   current offsets (all in log_partition, as every record of a group).
with committed as (
    select
        snapshot_id,
        group_id,
        count(*) as committed_partitions,
        count(distinct topic) as committed_topics,
        max(commit_timestamp) as last_commit_ms,
        sort_array(collect_list(log_offset)) as commit_log_offsets
    from offsets
    where committed_offset is not null
    group by snapshot_id, group_id
),

group_records as (
    select
        snapshot_id,
        group_id,
        max(case when record_type not in (0, 1) then timestamp end) as last_member_activity_ms,
        count_if(record_type = 2 and not is_tombstone) as group_metadata_values,
        max_by(partition, offset) as log_partition,
        max(offset) as log_offset
    from records
    where group_id is not null
    group by snapshot_id, group_id
),

memberless as (
    select
        c.snapshot_id,
        c.group_id,
        g.group_type,
        g.group_state,
        g.is_simple,
        c.committed_partitions,
        c.committed_topics,
        c.last_commit_ms,
        r.last_member_activity_ms,
        s.snapshot_ms - greatest(c.last_commit_ms, r.last_member_activity_ms) as idle_ms,
        coalesce(g.group_type, 'classic') = 'classic'
            and coalesce(r.group_metadata_values, 0) = 0 as never_rebalanced,
        r.log_partition,
        r.log_offset,
        c.commit_log_offsets
    from committed as c
    left join groups as g
        on c.snapshot_id = g.snapshot_id and c.group_id = g.group_id
    left join group_records as r
        on c.snapshot_id = r.snapshot_id and c.group_id = r.group_id
    left join snapshot_time as s
        on c.snapshot_id = s.snapshot_id
    where coalesce(g.member_count, 0) = 0
)

select
    m.snapshot_id,
    m.group_id,
    m.group_type,
    m.group_state,
    m.is_simple,
    m.committed_partitions,
    m.committed_topics,
    timestamp_millis(m.last_commit_ms) as last_commit_at,
    timestamp_millis(m.last_member_activity_ms) as last_member_activity_at,
    m.idle_ms,
    coalesce(m.idle_ms > st.ghost_idle_ms, false) as is_ghost,
    m.never_rebalanced,
    m.log_partition,
    m.log_offset,
    m.commit_log_offsets
from memberless as m
cross join settings as st

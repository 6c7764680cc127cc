-- When the group coordinator will expire each committed offset of a snapshot, and delete the
-- group after its last one: one row per current committed offset (`offsets`). "Now" is the
-- snapshot's newest record timestamp (`snapshot_time`); the broker settings come from `settings`
-- (offsets_retention_ms = offsets.retention.minutes, offsets_retention_check_interval_ms =
-- offsets.retention.check.interval.ms; defaults 10080 min and 600000 ms: Kafka 4.3.1
-- GroupCoordinatorConfig, OFFSETS_RETENTION_MINUTES_DEFAULT and
-- OFFSETS_RETENTION_CHECK_INTERVAL_MS_DEFAULT; offsetsRetentionMs = minutes * 60 * 1000).
--
-- How Kafka 4.3.1 expires offsets (kafka-group-coordinator-4.3.1.jar, read in the bytecode):
-- * GroupCoordinatorShard.cleanupGroupMetadata runs every offsets.retention.check.interval.ms
--   (scheduleGroupMetadataExpiration, first armed by onLoaded) over every group whose
--   shouldExpire() is true (Group's default; ShareGroup.shouldExpire is false), calling
--   OffsetMetadataManager.cleanupExpiredOffsets and, when that returns true,
--   GroupMetadataManager.maybeDeleteGroup, which writes the group's tombstones only if
--   Group.isEmpty().
-- * cleanupExpiredOffsets: a group whose offsetExpirationCondition() is empty keeps every
--   offset. Otherwise, per topic, a topic the group isSubscribedToTopic() keeps all its offsets;
--   per partition, an offset goes (a tombstone) when the condition says it is expired and
--   hasPendingTransactionalOffsets(group, topic, partition) is false. It returns true (group may
--   go) when every offset went and OpenTransactions.contains(group) is false (no pending
--   transactional offset of the group at all); for a group without offsets, when it has no
--   open transaction.
-- * OffsetExpirationConditionImpl.isOffsetExpired(offset, now, retention): with an explicit
--   expireTimestampMs, expired when now >= it; else when now - baseTimestamp(offset) >= retention.
--   expireTimestampMs is the OffsetCommitValue's expireTimestamp unless -1
--   (OffsetAndMetadata.fromRecord, Utils.ofSentinel); commitOffset sets it from an OffsetCommit
--   v2-v4 request's retentionTimeMs (expireTimestampMs) and such a record is written as value
--   version 1 (GroupCoordinatorRecordHelpers.offsetCommitValueVersion).
-- * ClassicGroup.offsetExpirationCondition: protocol type absent (a simple group): base = commit
--   timestamp; state Empty: base = currentStateTimestamp, or the commit timestamp when absent;
--   protocol type "consumer" with a known subscription in state Stable: base = commit timestamp;
--   any other state or protocol type (a "connect" group with members): none. A group loaded
--   from GroupMetadata is Empty without members, else Stable (GroupMetadataManager.replay);
--   currentStateTimestamp -1 reads as absent. ClassicGroup.isSubscribedToTopic: the members'
--   subscribed topics (computeSubscribedTopics; none when Empty).
-- * ConsumerGroup / StreamsGroup.offsetExpirationCondition: base = commit timestamp.
--   ConsumerGroup.isSubscribedToTopic (ModernGroup): the topics its members subscribe to by
--   name plus those its resolved regular expressions (ConsumerGroupRegularExpression records,
--   updateResolvedRegularExpression) name. StreamsGroup.isSubscribedToTopic: none when Empty,
--   else the source and repartition source topics of its topology (StreamsTopology.
--   computeSourceTopicMap), none without a topology.
-- * OffsetMetadataManager.replay: a commit of an unknown group creates a simple classic group;
--   a tombstone of an offset clears that partition's pending transactional offsets; a
--   GroupMetadata tombstone removes the group but not its offsets, which cleanupGroupMetadata
--   then never visits.
--
-- Columns:
-- group_type, group_state, member_count: the group's (`groups`), null when no group holds the id.
-- topic, topic_id, partition, committed_offset, commit_at, expire_timestamp_at (the explicit
--   expireTimestamp of a value version 1, else null), log_partition, log_offset: the offset.
-- base_timestamp_kind: what expiry counts from: 'expire_timestamp' (explicit, version 1),
--   'current_state_timestamp' (Empty classic group with a protocol type), 'commit_timestamp'.
-- base_at: that timestamp (for 'expire_timestamp' the expiry itself: no retention is added).
-- blocked_by: why the offset cannot expire as things stand, or null: 'no_group' (orphaned
--   offset), 'share_group', 'non_consumer_protocol_members' (classic group with members and a
--   protocol type other than consumer), 'subscribed_by_members' (a topic the group subscribes
--   to), 'pending_transaction' (an open transaction holds a pending offset of the partition).
--   In that order: the first that applies, as cleanupExpiredOffsets checks them.
-- expires_at: when the offset becomes expired (null when blocked); ms_until_expiry: from the
--   snapshot time (negative: already due); is_expired_at_snapshot: due at the snapshot time.
-- removed_by_at: expires_at + the check interval: a coordinator running since expires_at has
--   written the offset's tombstone by then.
-- group_expires_at: when the coordinator deletes the group: its last offset's expires_at, when
--   the group has no members, none of its offsets is blocked and it has no open transaction;
--   else null. snapshot_at: the snapshot time.
with key_tombstones as (
    select snapshot_id, group_id, topic, partition, max(log_offset) as last_tombstone_offset
    from offset_commits
    where is_tombstone
    group by snapshot_id, group_id, topic, partition
),

-- Transactional offsets with no marker yet that no later tombstone of their key cleared.
pending as (
    select c.snapshot_id, c.group_id, c.topic, c.partition
    from offset_commits as c
    left join key_tombstones as t
        on c.snapshot_id = t.snapshot_id and c.group_id = t.group_id and c.topic = t.topic
        and c.partition = t.partition
    where c.outcome = 'open' and not c.is_tombstone
        and c.log_offset > coalesce(t.last_tombstone_offset, -1)
),

pending_partitions as (
    select snapshot_id, group_id, topic, partition
    from pending
    group by snapshot_id, group_id, topic, partition
),

pending_groups as (
    select snapshot_id, group_id
    from pending
    group by snapshot_id, group_id
),

-- The newest record of each regular expression (type 16) and topology (type 23) key: the key's
-- bytes (`membership_records`) tell regular expressions of one group apart.
keyed_records as (
    select
        r.snapshot_id,
        r.group_id,
        r.record_type,
        r.is_tombstone,
        r.value,
        row_number() over (
            partition by r.snapshot_id, r.partition, r.key order by r.offset desc
        ) as recency
    from membership_records as r
    where r.record_type in (16, 23)
),

live_keyed as (
    select snapshot_id, group_id, record_type, value
    from keyed_records
    where recency = 1 and not is_tombstone
),

subscribed_topics as (
    select g.snapshot_id, g.group_id, explode(m.subscribed_topic_names) as topic
    from groups as g
    join members as m
        on g.snapshot_id = m.snapshot_id and g.group_id = m.group_id
    where g.group_type = 'consumer'
        or (g.group_type = 'classic' and g.protocol_type = 'consumer')
    union all
    select k.snapshot_id, k.group_id,
           explode(variant_get(k.value, '$.data.topics', 'array<string>')) as topic
    from live_keyed as k
    join groups as g
        on k.snapshot_id = g.snapshot_id and k.group_id = g.group_id
    where k.record_type = 16 and g.group_type = 'consumer'
    union all
    select k.snapshot_id, k.group_id, explode(flatten(transform(
        variant_get(k.value, '$.data.subtopologies',
                    'array<struct<sourceTopics: array<string>,
                                  repartitionSourceTopics: array<struct<name: string>>>>'),
        s -> concat(coalesce(s.sourceTopics, array()),
                    transform(coalesce(s.repartitionSourceTopics, array()), t -> t.name))
    ))) as topic
    from live_keyed as k
    join groups as g
        on k.snapshot_id = g.snapshot_id and k.group_id = g.group_id
    where k.record_type = 23 and g.group_type = 'streams' and g.member_count > 0
),

subscriptions as (
    select snapshot_id, group_id, topic
    from subscribed_topics
    group by snapshot_id, group_id, topic
),

classified as (
    select
        o.snapshot_id,
        o.group_id,
        g.group_type,
        g.group_state,
        g.member_count,
        o.topic,
        o.topic_id,
        o.partition,
        o.committed_offset,
        o.commit_timestamp,
        o.expire_timestamp,
        o.log_partition,
        o.log_offset,
        t.snapshot_ms,
        case
            when g.group_id is null then 'no_group'
            when g.group_type = 'share' then 'share_group'
            when g.group_type = 'classic' and g.protocol_type is not null
                and g.protocol_type <> 'consumer' and g.member_count > 0
                then 'non_consumer_protocol_members'
            when s.topic is not null then 'subscribed_by_members'
            when p.topic is not null then 'pending_transaction'
        end as blocked_by,
        case
            when o.expire_timestamp is not null then 'expire_timestamp'
            when g.group_type = 'classic' and g.protocol_type is not null and g.member_count = 0
                and g.current_state_timestamp is not null then 'current_state_timestamp'
            else 'commit_timestamp'
        end as base_timestamp_kind,
        case
            when o.expire_timestamp is not null then o.expire_timestamp
            when g.group_type = 'classic' and g.protocol_type is not null and g.member_count = 0
                then coalesce(g.current_state_timestamp, o.commit_timestamp)
            else o.commit_timestamp
        end as base_ms
    from offsets as o
    left join groups as g
        on o.snapshot_id = g.snapshot_id and o.group_id = g.group_id
    left join snapshot_time as t
        on o.snapshot_id = t.snapshot_id
    left join subscriptions as s
        on o.snapshot_id = s.snapshot_id and o.group_id = s.group_id and o.topic = s.topic
    left join pending_partitions as p
        on o.snapshot_id = p.snapshot_id and o.group_id = p.group_id and o.topic = p.topic
        and o.partition = p.partition
),

forecast as (
    select
        c.*,
        case
            when c.blocked_by is not null then null
            when c.base_timestamp_kind = 'expire_timestamp' then c.base_ms
            else c.base_ms + st.offsets_retention_ms
        end as expires_ms,
        st.offsets_retention_check_interval_ms as check_interval_ms
    from classified as c
    cross join settings as st
),

group_deletion as (
    select
        f.snapshot_id,
        f.group_id,
        case
            when count_if(f.blocked_by is not null) = 0 and max(f.member_count) = 0
                and max(pg.group_id) is null
                then max(f.expires_ms)
        end as group_expires_ms
    from forecast as f
    left join pending_groups as pg
        on f.snapshot_id = pg.snapshot_id and f.group_id = pg.group_id
    group by f.snapshot_id, f.group_id
)

select
    f.snapshot_id,
    f.group_id,
    f.group_type,
    f.group_state,
    f.member_count,
    f.topic,
    f.topic_id,
    f.partition,
    f.committed_offset,
    timestamp_millis(f.commit_timestamp) as commit_at,
    timestamp_millis(f.expire_timestamp) as expire_timestamp_at,
    f.base_timestamp_kind,
    timestamp_millis(f.base_ms) as base_at,
    f.blocked_by,
    timestamp_millis(f.expires_ms) as expires_at,
    f.expires_ms - f.snapshot_ms as ms_until_expiry,
    coalesce(f.expires_ms <= f.snapshot_ms, false) as is_expired_at_snapshot,
    timestamp_millis(f.expires_ms + f.check_interval_ms) as removed_by_at,
    timestamp_millis(d.group_expires_ms) as group_expires_at,
    timestamp_millis(f.snapshot_ms) as snapshot_at,
    f.log_partition,
    f.log_offset
from forecast as f
join group_deletion as d
    on f.snapshot_id = d.snapshot_id and f.group_id = d.group_id

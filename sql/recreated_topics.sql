-- Offsets of a deleted and recreated topic: offset commits whose topic id is not the id the same
-- topic name has in later records. A topic id names one incarnation of a topic (KIP-516); a
-- topic deleted and created again under its name gets a new id, and an offset committed for the
-- old incarnation points into a log that no longer exists.
--
-- What the broker does with such an offset (Kafka 4.3.1):
-- * every commit of an existing topic carries its id: OffsetCommit v10+ names topics by id
--   (KafkaApis.handleOffsetCommitRequest resolves the id with MetadataCache.getTopicName), and for
--   older versions the broker looks the id up by name (MetadataCache.getTopicId) before the
--   coordinator writes OffsetCommitValue.TopicId (OffsetAndMetadata.fromRequest).
-- * when a topic is deleted, each loaded coordinator writes tombstones for the offsets of that
--   name whose id is the deleted one or unknown (GroupCoordinatorService.onMetadataUpdate ->
--   handleTopicsDeletion -> OffsetMetadataManager.onTopicsDeleted). An old-incarnation offset is
--   still current only when that did not happen: the coordinator of the group's partition was
--   not loaded while the deletion went through (its broker was down), or the log was written by
--   a release without it.
-- * an OffsetFetch by topic id (v10+) for the new id answers offset -1, no error, for an offset
--   stored under another non-zero id (OffsetMetadataManager.fetchOffsets: isOffsetInvalid ->
--   isMismatchedTopicId): the consumer finds no committed offset and applies auto.offset.reset
--   (latest: it silently skips what was produced to the new topic meanwhile). An OffsetFetch by
--   name (v9 and older: topic id ZERO, which never mismatches) returns the old offset: the
--   consumer resumes at a position of the old log in the new one (out of range: reset; in range:
--   the records before it are skipped). A fetch naming the old id fails with UNKNOWN_TOPIC_ID
--   (KafkaApis.fetchOffsetsForGroup).
--
-- The incarnations of a name are ordered by where each id first appears (record timestamp, then
-- log position): in offset commits with a topic id, and in consumer-group member and target
-- assignments (ids from the records, names resolved across the snapshot; classic assignments
-- are left out, their ids are looked up by name, not recorded). new_topic_id is the id that
-- appeared last: the topic as the snapshot ends. Commits without a topic id (transactional
-- commits, releases before 4.1) cannot be placed and are left out.
--
-- old_topic_id: the commit's id; new_topic_id: the current incarnation's.
-- seen_new_id_at, seen_new_id_log_partition, seen_new_id_log_offset: where the new id first
--   appears.
-- is_current: the commit is the group's current committed offset for the partition (`offsets`
--   holds this very record); false: a later commit or a tombstone replaced it.
-- commit_at: the commit's timestamp; log_partition, log_offset: its record.
with record_times as (
    select snapshot_id, partition, offset, timestamp
    from membership_records
),

sightings as (
    select snapshot_id, topic as topic_name, topic_id, log_partition, log_offset, log_timestamp
    from offset_commits
    where topic_id is not null and not is_tombstone
    union all
    select a.snapshot_id, a.topic_name, a.topic_id, a.log_partition, a.log_offset, t.timestamp
    from member_assignments as a
    left join record_times as t
        on a.snapshot_id = t.snapshot_id and a.log_partition = t.partition
            and a.log_offset = t.offset
    where a.topic_name is not null and a.topic_id is not null
        and coalesce(a.assignment_epoch_source, '') <> 'classic'
    union all
    select a.snapshot_id, a.topic_name, a.topic_id, a.log_partition, a.log_offset, t.timestamp
    from target_assignments as a
    left join record_times as t
        on a.snapshot_id = t.snapshot_id and a.log_partition = t.partition
            and a.log_offset = t.offset
    where a.topic_name is not null and a.topic_id is not null
),

incarnations as (
    select
        snapshot_id,
        topic_name,
        topic_id,
        min(struct(log_timestamp, log_partition, log_offset)) as first_seen
    from sightings
    group by snapshot_id, topic_name, topic_id
),

current_incarnations as (
    select
        snapshot_id,
        topic_name,
        max_by(topic_id, first_seen) as new_topic_id,
        max(first_seen) as new_first_seen
    from incarnations
    group by snapshot_id, topic_name
    having count(*) > 1
)

select
    c.snapshot_id,
    c.group_id,
    c.topic,
    c.partition,
    c.topic_id as old_topic_id,
    n.new_topic_id,
    c.committed_offset,
    timestamp_millis(c.commit_timestamp) as commit_at,
    timestamp_millis(n.new_first_seen.log_timestamp) as seen_new_id_at,
    n.new_first_seen.log_partition as seen_new_id_log_partition,
    n.new_first_seen.log_offset as seen_new_id_log_offset,
    o.group_id is not null as is_current,
    c.log_partition,
    c.log_offset
from offset_commits as c
join current_incarnations as n
    on c.snapshot_id = n.snapshot_id and c.topic = n.topic_name
left join offsets as o
    on c.snapshot_id = o.snapshot_id and c.group_id = o.group_id and c.topic = o.topic
        and c.partition = o.partition and c.log_partition = o.log_partition
        and c.log_offset = o.log_offset
where c.topic_id is not null
    and not c.is_tombstone
    and c.topic_id <> n.new_topic_id

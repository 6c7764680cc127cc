-- TP-01 offset of a recreated topic: a group's current committed offset names a topic id that
-- is an older incarnation of the topic (the name has appeared with a newer id since). Deleting a
-- topic makes every loaded coordinator tombstone the offsets of the deleted id
-- (OffsetMetadataManager.onTopicsDeleted, Kafka 4.3.1), so such an offset survived a deletion its
-- coordinator did not see. A consumer of the group resuming on the new topic is answered offset
-- -1 when it fetches by topic id (OffsetMetadataManager.fetchOffsets, isMismatchedTopicId) and
-- falls back to auto.offset.reset, or gets the old log's offset when it fetches by name: either
-- way it skips or rereads data without an error. Facts and sources: sql/recreated_topics.sql.
--
-- One finding per partition; it points at the offset's commit record; evidence: that record and
-- the record where the new id first appears (which may be in another __consumer_offsets
-- partition: details says which).
select
    snapshot_id,
    'TP-01' as rule_id,
    'high' as severity,
    'violation' as verdict,
    group_id,
    cast(null as string) as member_id,
    topic,
    old_topic_id as topic_id,
    partition,
    log_partition,
    log_offset,
    array(log_offset, seen_new_id_log_offset) as evidence_log_offsets,
    concat(
        'Group ''', group_id, ''' still has committed offset ', committed_offset, ' for ',
        topic, '-', partition, ' under topic id ', old_topic_id, ', but topic ''', topic,
        ''' was recreated with id ', new_topic_id, ' (first seen ',
        date_format(seen_new_id_at, 'yyyy-MM-dd HH:mm:ss'), ' UTC): a consumer fetching by ',
        'topic id gets no offset and applies auto.offset.reset, one fetching by name resumes ',
        'at ', committed_offset, ' of the new log; either way data is skipped or reread ',
        'silently.'
    ) as message,
    to_json(named_struct(
        'old_topic_id', old_topic_id,
        'new_topic_id', new_topic_id,
        'committed_offset', committed_offset,
        'commit_at', commit_at,
        'seen_new_id_at', seen_new_id_at,
        'seen_new_id_log_partition', seen_new_id_log_partition,
        'seen_new_id_log_offset', seen_new_id_log_offset
    )) as details
from recreated_topics
where is_current

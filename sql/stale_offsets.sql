-- Stale offsets: committed offsets of groups that have members, for topics none of the members
-- subscribes to (the group read the topic once; lag monitors still report lag for it, and the
-- offsets live on until the group empties and they expire).
--
-- Which groups: consumer groups, and classic groups of protocol type "consumer", with members.
-- Other classic protocols (Connect, custom) carry no consumer subscription, and streams groups
-- subscribe through their topology, not through member subscriptions: they are left out. So is a
-- group any member of which has no subscription in the snapshot (no names, no regex: e.g. a
-- member known only from a current-assignment record), or an unresolved regex this view cannot
-- evaluate (below): what it subscribes to is unknown.
--
-- What a member subscribes to (4.3.1):
-- * explicit names: members.subscribed_topic_names. Consumer-protocol members write them in
--   ConsumerGroupMemberMetadataValue.SubscribedTopicNames; classic-protocol members of a consumer
--   group have the subscription of their JoinGroup metadata there too; members of a classic group
--   have the topics of their ConsumerProtocolSubscription (the GroupMetadata member's
--   subscription, decoded in jobs/replay/classic.py). A classic consumer subscribed by pattern
--   sends the topics the pattern matched on the client, so its names already cover the pattern.
-- * a regular expression (members.subscribed_topic_regex, consumer protocol): the coordinator
--   resolves it against the cluster's topic names with RE2/J, as a full match
--   (TopicRegexResolver.resolveRegularExpressions: com.google.re2j.Pattern.compile, then
--   Matcher.matches(); only topics the member may DESCRIBE are kept), and writes the result as a
--   ConsumerGroupRegularExpression record (type 16: key GroupId + RegularExpression, value
--   Topics; a tombstone once no member uses the regex: GroupMetadataManager
--   .maybeDeleteResolvedRegularExpressions). The member's topics are that record's Topics. The
--   key is not a column of `records`, so it is read from `membership_records`.key: int16 record type, then
--   two non-flexible strings (int16 length + UTF-8 bytes), GroupId and RegularExpression
--   (ConsumerGroupRegularExpressionKey, version 0, "flexibleVersions": "none").
-- * a regex without a live resolution record in the snapshot (not resolved yet, or compacted
--   away) is matched here with Spark's rlike as a full match, '^(?:regex)$'. rlike is
--   java.util.regex, the broker RE2/J: every regex the broker stored compiles in RE2/J (it refuses
--   others at heartbeat: Utils.throwIfRegularExpressionIsInvalid), and for a match/no-match
--   question on topic names ([a-zA-Z0-9._-]) the two agree except on RE2-only syntax, which Java
--   rejects or reads differently: (?P<name>...) groups, POSIX classes [[:alpha:]], \C, \p/\P
--   classes, and '{' starting no repetition (RE2 reads it literally, Java rejects it). A regex
--   holding any of these is not evaluated (its group is left out). The match ignores DESCRIBE
--   authorization, so it may count a topic as subscribed that the broker would not.
--
-- subscribed_by: always null (no member subscribes to the topic; the column lines up with a
--   subscription listing where it names the member).
-- reason: why the topic counts as unsubscribed: the group's member count, the regexes whose
--   resolution leaves it out, the unresolved regexes it does not fully match.
-- commit_at: the offset's commit timestamp; log_partition, log_offset: its record.
with subscribing_groups as (
    select snapshot_id, group_id, group_type
    from groups
    where member_count > 0
        and (group_type = 'consumer' or (group_type = 'classic' and protocol_type = 'consumer'))
),

regex_keys as (
    select
        r.snapshot_id,
        r.group_id,
        r.offset,
        r.is_tombstone,
        r.value,
        r.key,
        cast(conv(hex(substring(r.key, 3, 2)), 16, 10) as int) as group_id_bytes
    from membership_records as r
    where r.record_type = 16
),

regex_records as (
    select
        snapshot_id,
        group_id,
        offset,
        case when not is_tombstone
            then variant_get(value, '$.data.topics', 'array<string>') end as topics,
        cast(substring(key, 7 + group_id_bytes,
                       cast(conv(hex(substring(key, 5 + group_id_bytes, 2)), 16, 10) as int))
             as string) as regular_expression
    from regex_keys
),

-- The latest record of each (group, regex): its topics, or null after a tombstone.
resolved_regexes as (
    select snapshot_id, group_id, regular_expression, max_by(topics, offset) as topics
    from regex_records
    group by snapshot_id, group_id, regular_expression
),

member_subscriptions as (
    select
        m.snapshot_id,
        m.group_id,
        m.subscribed_topic_names,
        m.subscribed_topic_regex,
        rr.topics as resolved_topics,
        coalesce(size(m.subscribed_topic_names), 0) = 0
            and m.subscribed_topic_regex is null as has_no_subscription,
        m.subscribed_topic_regex is not null and rr.topics is null as is_regex_unresolved,
        coalesce(m.subscribed_topic_regex
            rlike r'\(\?P<|\[\[:|\\C|\\[pP]|\{(?![0-9]+(,[0-9]*)?\})', false) as has_re2_only_syntax
    from members as m
    join subscribing_groups as sg
        on m.snapshot_id = sg.snapshot_id and m.group_id = sg.group_id
    left join resolved_regexes as rr
        on m.snapshot_id = rr.snapshot_id and m.group_id = rr.group_id
            and m.subscribed_topic_regex = rr.regular_expression
),

group_subscriptions as (
    select
        snapshot_id,
        group_id,
        count(*) as member_count,
        array_distinct(flatten(collect_list(subscribed_topic_names))) as named_topics,
        array_distinct(flatten(collect_list(resolved_topics))) as resolved_topics,
        array_sort(array_distinct(collect_list(case when not is_regex_unresolved
            then subscribed_topic_regex end))) as resolved_regexes,
        array_sort(array_distinct(collect_list(case when is_regex_unresolved
            then subscribed_topic_regex end))) as unresolved_regexes,
        bool_or(has_no_subscription or (is_regex_unresolved and has_re2_only_syntax))
            as is_undecidable
    from member_subscriptions
    group by snapshot_id, group_id
)

select
    o.snapshot_id,
    o.group_id,
    sg.group_type,
    o.topic,
    o.partition,
    o.committed_offset,
    timestamp_millis(o.commit_timestamp) as commit_at,
    cast(null as string) as subscribed_by,
    concat('no member names it (', gs.member_count,
           if(gs.member_count = 1, ' member)', ' members)'),
           if(size(gs.resolved_regexes) > 0,
              concat('; not in the resolved topics of ', array_join(gs.resolved_regexes, ', ')),
              ''),
           if(size(gs.unresolved_regexes) > 0,
              concat('; no full match with ', array_join(gs.unresolved_regexes, ', ')), ''))
        as reason,
    o.log_partition,
    o.log_offset
from offsets as o
join subscribing_groups as sg
    on o.snapshot_id = sg.snapshot_id and o.group_id = sg.group_id
join group_subscriptions as gs
    on o.snapshot_id = gs.snapshot_id and o.group_id = gs.group_id
where o.committed_offset is not null
    and not gs.is_undecidable
    and not array_contains(gs.named_topics, o.topic)
    and not coalesce(array_contains(gs.resolved_topics, o.topic), false)
    and not exists(gs.unresolved_regexes, re -> o.topic rlike concat('^(?:', re, ')$'))

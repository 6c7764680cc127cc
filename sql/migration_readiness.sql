-- Online migration between the classic and the consumer group protocol, as Kafka 4.3.1 would
-- decide it for each live group of the snapshot: 'upgrade' for every classic group (a member
-- joins it with the consumer protocol), 'downgrade' for every consumer group (its members using
-- the consumer protocol leave and only classic-protocol members stay). Classes cited are Kafka
-- 4.3.1's (org.apache.kafka.coordinator.group unless named: kafka-group-coordinator-4.3.1.jar;
-- ConsumerProtocol: kafka-clients; CoordinatorRuntime: kafka-coordinator-common).
--
-- The broker settings come from `settings` (the captured cluster's broker_configs, else conf/),
-- at Kafka's defaults unless set (GroupCoordinatorConfig): group.consumer.max.size
-- 2147483647 (CONSUMER_GROUP_MAX_SIZE_DEFAULT), group.max.size 2147483647 (GROUP_MAX_SIZE_DEFAULT,
-- read as classicGroupMaxSize) and group.consumer.migration.policy 'bidirectional'
-- (CONSUMER_GROUP_MIGRATION_POLICY_DEFAULT = ConsumerGroupMigrationPolicy.BIDIRECTIONAL, which
-- enables both directions; UPGRADE and DOWNGRADE enable one, DISABLED none).
--
-- An empty group needs no conversion: a consumer-protocol member joining an empty classic group,
-- or a classic one joining an empty consumer group, replaces the group whatever the policy
-- (GroupMetadataManager.getOrMaybeCreateConsumerGroup through maybeDeleteEmptyClassicGroup;
-- classicGroupJoinToClassicGroup through maybeDeleteEmptyConsumerGroup): is_ready, no blockers.
--
-- blockers of an upgrade (GroupMetadataManager.validateOnlineUpgrade, then
-- convertToConsumerGroup / ConsumerGroup.fromClassicGroup), each refusing the join:
--   migration_policy     the policy does not enable upgrades (isUpgradeEnabled);
--   protocol_type        the group's protocol type is not "consumer"
--                        (ClassicGroup.usesConsumerGroupProtocol);
--   group_size           member_count >= group.consumer.max.size: validateOnlineUpgrade refuses
--                        member_count > max, and the joining member itself is then refused when
--                        member_count >= max (consumerGroupHeartbeat calls
--                        throwIfConsumerGroupIsFull right after the conversion, and a write
--                        that throws appends none of its records: CoordinatorRuntime
--                        $CoordinatorWriteEvent.run appends only a returned result's records);
--   malformed_subscription  a member's subscription (its metadata for the group's protocol) is
--                        not a ConsumerProtocolSubscription (ConsumerProtocol
--                        .deserializeConsumerProtocolSubscription throws SchemaException, which
--                        convertToConsumerGroup turns into a refusal); records decode it the
--                        same way (decoders/embedded.py: negative version, short buffer), so a
--                        subscription left undecoded, empty included, is malformed;
--   malformed_assignment a member's non-empty assignment is not a ConsumerProtocolAssignment
--                        (an empty one is skipped: ClassicGroupMember.EMPTY_ASSIGNMENT);
--   custom_assignor_user_data  a member's assignment carries userData (a custom assignor's),
--                        which has no place in a consumer group (ConsumerGroup.fromClassicGroup
--                        throws UnsupportedVersionException).
--   The member checks read the group's last GroupMetadata record, and only when the protocol
--   type is "consumer" (the records decode the blobs of such groups only, and Kafka stops
--   at protocol_type first).
-- blockers of a downgrade (GroupMetadataManager.consumerGroupFenceMembers calls
-- validateOnlineDowngradeWithFencedMembers when a member leaves; the group converts when the
-- leaving member is the last one using the consumer protocol,
-- ConsumerGroup.allMembersUseClassicProtocolExcept):
--   no_classic_protocol_members  no member uses the classic protocol: the group would be
--                        empty, and Kafka skips the conversion of an empty group;
--   migration_policy     the policy does not enable downgrades (isDowngradeEnabled);
--   group_size           the classic-protocol members outnumber group.max.size
--                        (numMembers - leaving members > classicGroupMaxSize).
--   A static consumer-protocol member replaced by a classic one with its instance id converts
--   the same way (validateOnlineDowngradeWithReplacedMember: same policy, and the size counts
--   the replaced member too).
--   Not checked: ClassicGroup.fromConsumerGroup reads the version of each member's metadata for
--   the protocol the new group selects (ConsumerProtocol.deserializeVersion, SchemaException
--   under 2 bytes); which protocol is selected is decided at conversion time.
--
-- Values checked: member_count (the group's members), is_empty, classic_protocol_member_count and
-- consumer_protocol_member_count (consumer groups; a classic group's members all use the classic
-- protocol), protocol_type, migration_policy, group_max_size with the setting it comes from
-- (group_max_size_config), and per upgrade the members whose subscription or assignment is
-- malformed or whose assignment has userData (null for a downgrade). log_partition and log_offset
-- point at the group's last record.
with config as (
    -- The cluster's settings: a capture's own (broker_configs), else conf/ (insights), at
    -- Kafka's defaults unless set there
    -- (GroupCoordinatorConfig, 4.3.1); see the header.
    select
        consumer_group_max_size,
        classic_group_max_size,
        consumer_group_migration_policy as migration_policy
    from settings
),

policy as (
    select
        *,
        lower(migration_policy) in ('bidirectional', 'upgrade') as is_upgrade_enabled,
        lower(migration_policy) in ('bidirectional', 'downgrade') as is_downgrade_enabled
    from config
),

classic_groups as (
    select snapshot_id, group_id, group_type, protocol_type, member_count, log_partition,
           log_offset
    from groups
    where group_type = 'classic'
),

classic_members as (
    select g.snapshot_id, g.group_id, member
    from classic_groups as g
    join membership_records as r
        on r.snapshot_id = g.snapshot_id
       and r.partition = g.log_partition
       and r.offset = g.log_offset
       and r.record_type = 2
    lateral view explode(variant_get(r.value, '$.data.members', 'array<variant>')) listed as member
    where g.protocol_type = 'consumer'
),

member_checks as (
    select
        snapshot_id,
        group_id,
        count_if(try_variant_get(member, '$.subscription.topics', 'array<variant>') is null)
            as malformed_subscription_count,
        count_if(
            try_variant_get(member, '$.assignment.assignedPartitions', 'array<variant>') is null
            and coalesce(try_variant_get(member, '$.assignment', 'string'), '') <> '')
            as malformed_assignment_count,
        count_if(coalesce(try_variant_get(member, '$.assignment.userData', 'string'), '') <> '')
            as custom_assignor_member_count
    from classic_members
    group by snapshot_id, group_id
),

upgrades as (
    select
        g.snapshot_id,
        g.group_id,
        g.group_type,
        'upgrade' as direction,
        g.member_count,
        g.member_count = 0 as is_empty,
        g.protocol_type,
        cast(null as int) as classic_protocol_member_count,
        cast(null as int) as consumer_protocol_member_count,
        p.consumer_group_max_size as group_max_size,
        'group.consumer.max.size' as group_max_size_config,
        p.migration_policy,
        coalesce(c.malformed_subscription_count, 0) as malformed_subscription_count,
        coalesce(c.malformed_assignment_count, 0) as malformed_assignment_count,
        coalesce(c.custom_assignor_member_count, 0) as custom_assignor_member_count,
        filter(array(
            case when not p.is_upgrade_enabled then 'migration_policy' end,
            case when coalesce(g.protocol_type, '') <> 'consumer' then 'protocol_type' end,
            case when g.member_count >= p.consumer_group_max_size then 'group_size' end,
            case when c.malformed_subscription_count > 0 then 'malformed_subscription' end,
            case when c.malformed_assignment_count > 0 then 'malformed_assignment' end,
            case when c.custom_assignor_member_count > 0 then 'custom_assignor_user_data' end),
            blocker -> blocker is not null) as failed,
        g.log_partition,
        g.log_offset
    from classic_groups as g
    cross join policy as p
    left join member_checks as c
        on g.snapshot_id = c.snapshot_id and g.group_id = c.group_id
),

protocol_counts as (
    select
        snapshot_id,
        group_id,
        cast(count_if(uses_classic_protocol) as int) as classic_protocol_member_count,
        cast(count_if(not coalesce(uses_classic_protocol, false)) as int)
            as consumer_protocol_member_count
    from members
    group by snapshot_id, group_id
),

downgrades as (
    select
        g.snapshot_id,
        g.group_id,
        g.group_type,
        'downgrade' as direction,
        g.member_count,
        g.member_count = 0 as is_empty,
        g.protocol_type,
        coalesce(m.classic_protocol_member_count, 0) as classic_protocol_member_count,
        coalesce(m.consumer_protocol_member_count, 0) as consumer_protocol_member_count,
        p.classic_group_max_size as group_max_size,
        'group.max.size' as group_max_size_config,
        p.migration_policy,
        cast(null as bigint) as malformed_subscription_count,
        cast(null as bigint) as malformed_assignment_count,
        cast(null as bigint) as custom_assignor_member_count,
        filter(array(
            case when coalesce(m.classic_protocol_member_count, 0) = 0
                 then 'no_classic_protocol_members' end,
            case when not p.is_downgrade_enabled then 'migration_policy' end,
            case when m.classic_protocol_member_count > p.classic_group_max_size
                 then 'group_size' end),
            blocker -> blocker is not null) as failed,
        g.log_partition,
        g.log_offset
    from groups as g
    cross join policy as p
    left join protocol_counts as m
        on g.snapshot_id = m.snapshot_id and g.group_id = m.group_id
    where g.group_type = 'consumer'
),

candidates as (
    select * from upgrades
    union all
    select * from downgrades
)

select
    snapshot_id,
    group_id,
    group_type,
    direction,
    member_count,
    is_empty or size(failed) = 0 as is_ready,
    case when is_empty then cast(array() as array<string>) else failed end as blockers,
    is_empty,
    protocol_type,
    classic_protocol_member_count,
    consumer_protocol_member_count,
    group_max_size,
    group_max_size_config,
    migration_policy,
    malformed_subscription_count,
    malformed_assignment_count,
    custom_assignor_member_count,
    log_partition,
    log_offset
from candidates

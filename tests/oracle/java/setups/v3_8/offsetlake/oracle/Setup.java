package offsetlake.oracle;

import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.group.ConsumerGroupMigrationPolicy;
import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;
import org.apache.kafka.coordinator.group.GroupCoordinatorShard;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.metrics.GroupCoordinatorMetrics;
import org.apache.kafka.coordinator.group.runtime.CoordinatorTimer;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.timeline.SnapshotRegistry;

/**
 * 3.8: GroupCoordinatorConfig has one positional constructor (18 values; the broker's defaults
 * are the class's own *_DEFAULT constants). The Builder and onLoaded are as in 3.9 (see its
 * Setup): snapshot registry, time, timer, GroupCoordinatorMetrics and topic partition required.
 */
final class Setup {
    private static final GroupCoordinatorConfig CONFIG = new GroupCoordinatorConfig(
        GroupCoordinatorConfig.GROUP_COORDINATOR_NUM_THREADS_DEFAULT,
        GroupCoordinatorConfig.GROUP_COORDINATOR_APPEND_LINGER_MS_DEFAULT,
        GroupCoordinatorConfig.CONSUMER_GROUP_SESSION_TIMEOUT_MS_DEFAULT,
        GroupCoordinatorConfig.CONSUMER_GROUP_HEARTBEAT_INTERVAL_MS_DEFAULT,
        GroupCoordinatorConfig.CONSUMER_GROUP_MAX_SIZE_DEFAULT,
        List.of(new UniformAssignor(), new RangeAssignor()),
        GroupCoordinatorConfig.OFFSETS_TOPIC_SEGMENT_BYTES_DEFAULT,
        GroupCoordinatorConfig.OFFSET_METADATA_MAX_SIZE_DEFAULT,
        GroupCoordinatorConfig.GROUP_MAX_SIZE_DEFAULT,
        GroupCoordinatorConfig.GROUP_INITIAL_REBALANCE_DELAY_MS_DEFAULT,
        GroupCoordinatorConfig.CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS,
        GroupCoordinatorConfig.GROUP_MIN_SESSION_TIMEOUT_MS_DEFAULT,
        GroupCoordinatorConfig.GROUP_MAX_SESSION_TIMEOUT_MS_DEFAULT,
        GroupCoordinatorConfig.OFFSETS_RETENTION_CHECK_INTERVAL_MS_DEFAULT,
        GroupCoordinatorConfig.OFFSETS_RETENTION_MINUTES_DEFAULT * 60L * 1000L,
        GroupCoordinatorConfig.OFFSET_COMMIT_TIMEOUT_MS_DEFAULT,
        ConsumerGroupMigrationPolicy.parse(GroupCoordinatorConfig.CONSUMER_GROUP_MIGRATION_POLICY_DEFAULT),
        GroupCoordinatorConfig.OFFSETS_TOPIC_COMPRESSION_CODEC_DEFAULT);
    private static final GroupCoordinatorMetrics METRICS = new GroupCoordinatorMetrics();

    private Setup() {
    }

    static GroupCoordinatorShard newShard(int partition) {
        GroupCoordinatorShard.Builder builder = new GroupCoordinatorShard.Builder(CONFIG);
        builder.withTime(Time.SYSTEM);
        builder.withTimer(NoOps.of(CoordinatorTimer.class));
        builder.withCoordinatorMetrics(METRICS);
        builder.withTopicPartition(new TopicPartition("__consumer_offsets", partition));
        builder.withSnapshotRegistry(new SnapshotRegistry(new LogContext()));
        return builder.build();
    }

    static void onLoaded(GroupCoordinatorShard shard) {
        shard.onLoaded(MetadataImage.EMPTY);
    }
}

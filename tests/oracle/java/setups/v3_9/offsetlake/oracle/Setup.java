package offsetlake.oracle;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;
import org.apache.kafka.coordinator.group.GroupCoordinatorShard;
import org.apache.kafka.coordinator.group.metrics.GroupCoordinatorMetrics;
import org.apache.kafka.coordinator.group.runtime.CoordinatorTimer;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.timeline.SnapshotRegistry;

/**
 * 3.9: GroupCoordinatorConfig(AbstractConfig) reads the broker's group coordinator keys, defined
 * by the class's own ConfigDefs (merged here, all at their defaults). GroupCoordinatorShard.Builder
 * (GroupCoordinatorConfig) needs a snapshot registry, time, timer, GroupCoordinatorMetrics and
 * topic partition (build() throws IllegalArgumentException for any missing). onLoaded(MetadataImage)
 * applies the image to both managers, activates the metrics shard, schedules session timeouts and
 * the offset expiration (timers: no-ops here); with the default group size limits it changes no
 * group.
 */
final class Setup {
    private static final GroupCoordinatorConfig CONFIG = new GroupCoordinatorConfig(
        new AbstractConfig(definitions(), Map.of()));
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

    private static ConfigDef definitions() {
        ConfigDef merged = new ConfigDef();
        for (ConfigDef part : List.of(GroupCoordinatorConfig.GROUP_COORDINATOR_CONFIG_DEF,
                GroupCoordinatorConfig.NEW_GROUP_CONFIG_DEF, GroupCoordinatorConfig.OFFSET_MANAGEMENT_CONFIG_DEF,
                GroupCoordinatorConfig.CONSUMER_GROUP_CONFIG_DEF, GroupCoordinatorConfig.SHARE_GROUP_CONFIG_DEF)) {
            part.configKeys().values().forEach(merged::define);
        }
        return merged;
    }
}

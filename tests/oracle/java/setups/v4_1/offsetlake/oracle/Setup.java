package offsetlake.oracle;

import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.common.runtime.CoordinatorExecutor;
import org.apache.kafka.coordinator.common.runtime.CoordinatorTimer;
import org.apache.kafka.coordinator.group.GroupConfigManager;
import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;
import org.apache.kafka.coordinator.group.GroupCoordinatorShard;
import org.apache.kafka.coordinator.group.metrics.GroupCoordinatorMetrics;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.timeline.SnapshotRegistry;

/**
 * 4.1: as 4.2 (Builder(GroupCoordinatorConfig, GroupConfigManager), withAuthorizerPlugin,
 * GroupConfigManager(Map)), but onLoaded still takes the KRaft
 * org.apache.kafka.image.MetadataImage (kafka-metadata), empty here. Its loader is still the Scala
 * one in kafka_2.13. The broker defaults stand for every config.
 */
final class Setup {
    private static final GroupCoordinatorConfig CONFIG = GroupCoordinatorConfig.fromProps(Map.of());
    private static final GroupConfigManager GROUP_CONFIGS = new GroupConfigManager(Map.of());
    private static final GroupCoordinatorMetrics METRICS = new GroupCoordinatorMetrics();

    private Setup() {
    }

    static GroupCoordinatorShard newShard(int partition) {
        GroupCoordinatorShard.Builder builder = new GroupCoordinatorShard.Builder(CONFIG, GROUP_CONFIGS);
        builder.withAuthorizerPlugin(Optional.empty());
        builder.withTime(Time.SYSTEM);
        builder.withTimer(NoOps.of(CoordinatorTimer.class));
        builder.withExecutor(NoOps.of(CoordinatorExecutor.class));
        builder.withCoordinatorMetrics(METRICS);
        builder.withTopicPartition(new TopicPartition("__consumer_offsets", partition));
        builder.withSnapshotRegistry(new SnapshotRegistry(new LogContext()));
        return builder.build();
    }

    static void onLoaded(GroupCoordinatorShard shard) {
        shard.onLoaded(MetadataImage.EMPTY);
    }
}

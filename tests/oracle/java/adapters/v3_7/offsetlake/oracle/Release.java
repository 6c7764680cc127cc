package offsetlake.oracle;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.requests.TransactionResult;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;
import org.apache.kafka.coordinator.group.GroupCoordinatorShard;
import org.apache.kafka.coordinator.group.Record;
import org.apache.kafka.coordinator.group.RecordSerde;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.metrics.GroupCoordinatorMetrics;
import org.apache.kafka.coordinator.group.runtime.CoordinatorLoader;
import org.apache.kafka.coordinator.group.runtime.CoordinatorTimer;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.timeline.SnapshotRegistry;

/**
 * Release 3.7 (its Java coordinator is KIP-848 early access). Checked with javap:
 *
 * <ul>
 *   <li>loader: kafka.coordinator.group.CoordinatorLoaderImpl (Scala, kafka_2.13) doLoad calls
 *       deserializer.deserialize(key, value) and replay(batch.producerId, batch.producerEpoch,
 *       record): no offset yet; it catches only CoordinatorLoader.UnknownRecordTypeException (WARN,
 *       skip). Control batches: COMMIT/ABORT records go to replayEndTransactionMarker(producerId,
 *       producerEpoch, TransactionResult), the first release to replay them;</li>
 *   <li>serde: RecordSerde; no version check (an unknown value version is read in the highest
 *       layout the release knows); it reads the 3.7 layout of types 4/5/7/8;</li>
 *   <li>replay: GroupCoordinatorShard.replay(long producerId, short producerEpoch, Record);</li>
 *   <li>shard: GroupCoordinatorShard.Builder(GroupCoordinatorConfig) needs a snapshot registry,
 *       time, timer, GroupCoordinatorMetrics and topic partition; GroupCoordinatorConfig has one
 *       positional constructor, given the broker's defaults (KafkaConfig 3.7);</li>
 *   <li>onLoaded(MetadataImage): the image to both managers, the metrics shard activated, session
 *       timeouts scheduled (no-op timers here); no group changes at the default size limits.</li>
 * </ul>
 */
final class Release implements ReleaseShard {
    private static final GroupCoordinatorConfig CONFIG = new GroupCoordinatorConfig(
        1,                                      // group.coordinator.threads
        45_000,                                 // group.consumer.session.timeout.ms
        5_000,                                  // group.consumer.heartbeat.interval.ms
        Integer.MAX_VALUE,                      // group.consumer.max.size
        List.of(new UniformAssignor(), new RangeAssignor()),
        100 * 1024 * 1024,                      // offsets.topic.segment.bytes
        4096,                                   // offset.metadata.max.bytes
        Integer.MAX_VALUE,                      // group.max.size
        3_000,                                  // group.initial.rebalance.delay.ms
        GroupCoordinatorConfig.CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS,
        6_000,                                  // group.min.session.timeout.ms
        1_800_000,                              // group.max.session.timeout.ms
        600_000L,                               // offsets.retention.check.interval.ms
        TimeUnit.DAYS.toMillis(7),              // offsets.retention.minutes
        5_000);                                 // offsets.commit.timeout.ms
    private static final GroupCoordinatorMetrics METRICS = new GroupCoordinatorMetrics();

    private final RecordSerde serde = new RecordSerde();
    private final GroupCoordinatorShard shard;

    private Release(int partition) {
        GroupCoordinatorShard.Builder builder = new GroupCoordinatorShard.Builder(CONFIG);
        builder.withTime(Time.SYSTEM);
        builder.withTimer(NoOps.of(CoordinatorTimer.class));
        builder.withCoordinatorMetrics(METRICS);
        builder.withTopicPartition(new TopicPartition("__consumer_offsets", partition));
        builder.withSnapshotRegistry(new SnapshotRegistry(new LogContext()));
        shard = builder.build();
    }

    static ReleaseShard newShard(int partition) {
        return new Release(partition);
    }

    public Object deserialize(ByteBuffer key, ByteBuffer value) {
        try {
            return serde.deserialize(key, value);
        } catch (CoordinatorLoader.UnknownRecordTypeException e) {
            throw new UnknownRecordType(e.unknownType(), e);
        }
    }

    public void replay(long offset, long producerId, short producerEpoch, Object record) {
        shard.replay(producerId, producerEpoch, (Record) record);
    }

    public boolean replaysMarkers() {
        return true;
    }

    public void replayEndTransactionMarker(long producerId, short producerEpoch, boolean commit) {
        shard.replayEndTransactionMarker(producerId, producerEpoch,
            commit ? TransactionResult.COMMIT : TransactionResult.ABORT);
    }

    public void onLoaded() {
        shard.onLoaded(MetadataImage.EMPTY);
    }

    public Object shard() {
        return shard;
    }
}

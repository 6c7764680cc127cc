package offsetlake.oracle;

import java.nio.ByteBuffer;
import java.util.List;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;
import org.apache.kafka.coordinator.group.GroupCoordinatorShard;
import org.apache.kafka.coordinator.group.Record;
import org.apache.kafka.coordinator.group.RecordSerde;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.runtime.CoordinatorLoader;
import org.apache.kafka.coordinator.group.runtime.CoordinatorTimer;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.timeline.SnapshotRegistry;

/**
 * Release 3.6 (the first Java group coordinator, KIP-848 early access). Checked with javap:
 *
 * <ul>
 *   <li>loader: kafka.coordinator.group.CoordinatorLoaderImpl (Scala, kafka_2.13) doLoad throws
 *       IllegalStateException("Control batches are not supported yet.") on any control batch, so
 *       a log with a transaction marker fails to load (PartitionLoader raises it for us); data
 *       records go to deserializer.deserialize(key, value), then replay(record) with no offset or
 *       producer; only CoordinatorLoader.UnknownRecordTypeException is caught (WARN, skip);</li>
 *   <li>serde: RecordSerde; no version check (an unknown value version is read in the highest
 *       layout the release knows); it reads the 3.7 layout of types 4/5/7/8;</li>
 *   <li>replay: GroupCoordinatorShard.replay(Record): transactional offset commits are applied
 *       as plain ones (there is no pending-transaction state in 3.6);</li>
 *   <li>shard: GroupCoordinatorShard.Builder(GroupCoordinatorConfig) needs a snapshot registry,
 *       time and timer; no metrics yet. GroupCoordinatorConfig has one positional constructor,
 *       given the broker's defaults (KafkaConfig 3.6; RangeAssignor is its only assignor);</li>
 *   <li>onLoaded(MetadataImage): the image to both managers and session timeouts scheduled
 *       (no-op timers here); no group changes at the default size limits.</li>
 * </ul>
 */
final class Release implements ReleaseShard {
    private static final GroupCoordinatorConfig CONFIG = new GroupCoordinatorConfig(
        1,                                      // group.coordinator.threads
        45_000,                                 // group.consumer.session.timeout.ms
        5_000,                                  // group.consumer.heartbeat.interval.ms
        Integer.MAX_VALUE,                      // group.consumer.max.size
        List.of(new RangeAssignor()),           // group.consumer.assignors
        100 * 1024 * 1024,                      // offsets.topic.segment.bytes
        4096,                                   // offset.metadata.max.bytes
        Integer.MAX_VALUE,                      // group.max.size
        3_000,                                  // group.initial.rebalance.delay.ms
        300_000,                                // new member join timeout (5 minutes, fixed)
        6_000,                                  // group.min.session.timeout.ms
        1_800_000);                             // group.max.session.timeout.ms

    private final RecordSerde serde = new RecordSerde();
    private final GroupCoordinatorShard shard;

    private Release(int partition) {
        GroupCoordinatorShard.Builder builder = new GroupCoordinatorShard.Builder(CONFIG);
        builder.withTime(Time.SYSTEM);
        builder.withTimer(NoOps.of(CoordinatorTimer.class));
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
        shard.replay((Record) record);
    }

    public boolean replaysMarkers() {
        return false;
    }

    public void replayEndTransactionMarker(long producerId, short producerEpoch, boolean commit) {
        throw new IllegalStateException(PartitionLoader.CONTROL_BATCHES_UNSUPPORTED);
    }

    public void onLoaded() {
        shard.onLoaded(MetadataImage.EMPTY);
    }

    public Object shard() {
        return shard;
    }
}

package offsetlake.oracle;

import java.nio.ByteBuffer;
import org.apache.kafka.common.requests.TransactionResult;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.common.runtime.Deserializer;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde;
import org.apache.kafka.coordinator.group.GroupCoordinatorShard;

/**
 * Releases 4.0-4.4: the coordinator runtime lives in kafka-coordinator-common
 * (org.apache.kafka.coordinator.common.runtime). Checked with javap:
 *
 * <ul>
 *   <li>loader: 4.0/4.1 kafka.coordinator.group.CoordinatorLoaderImpl (Scala, kafka_2.13) and
 *       4.2+ org.apache.kafka.coordinator.common.runtime.CoordinatorLoaderImpl (Java) both call
 *       deserializer.deserialize(key, value), catch Deserializer.UnknownRecordTypeException (WARN
 *       "Ignoring it. It could be a left over from an aborted upgrade.", skip), rethrow any other
 *       RuntimeException wrapped, then replay(record.offset, batch.producerId,
 *       batch.producerEpoch, record); control batches: COMMIT/ABORT records go to
 *       replayEndTransactionMarker(producerId, producerEpoch, TransactionResult);</li>
 *   <li>serde: GroupCoordinatorRecordSerde (CoordinatorRecordSerde.deserialize): an unknown key
 *       type throws UnknownRecordTypeException; a value version outside the message's
 *       lowest..highest supported versions throws Deserializer.UnknownRecordVersionException,
 *       which the loader does not catch: the load fails (fail closed);</li>
 *   <li>replay: GroupCoordinatorShard.replay(long offset, long producerId, short producerEpoch,
 *       CoordinatorRecord) and replayEndTransactionMarker(long, short, TransactionResult);</li>
 *   <li>what differs inside the family (the Builder's arguments, GroupCoordinatorConfig,
 *       GroupConfigManager, the metadata image onLoaded takes) is in Setup.java, one per release.</li>
 * </ul>
 */
final class Release implements ReleaseShard {
    private final GroupCoordinatorRecordSerde serde = new GroupCoordinatorRecordSerde();
    private final GroupCoordinatorShard shard;

    private Release(int partition) {
        shard = Setup.newShard(partition);
    }

    static ReleaseShard newShard(int partition) {
        return new Release(partition);
    }

    public Object deserialize(ByteBuffer key, ByteBuffer value) {
        try {
            return serde.deserialize(key, value);
        } catch (Deserializer.UnknownRecordTypeException e) {
            throw new UnknownRecordType(e.unknownType(), e);
        }
    }

    public void replay(long offset, long producerId, short producerEpoch, Object record) {
        shard.replay(offset, producerId, producerEpoch, (CoordinatorRecord) record);
    }

    public boolean replaysMarkers() {
        return true;
    }

    public void replayEndTransactionMarker(long producerId, short producerEpoch, boolean commit) {
        shard.replayEndTransactionMarker(producerId, producerEpoch,
            commit ? TransactionResult.COMMIT : TransactionResult.ABORT);
    }

    public void onLoaded() {
        Setup.onLoaded(shard);
    }

    public Object shard() {
        return shard;
    }
}

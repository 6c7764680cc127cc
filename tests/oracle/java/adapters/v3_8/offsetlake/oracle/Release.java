package offsetlake.oracle;

import java.nio.ByteBuffer;
import org.apache.kafka.common.requests.TransactionResult;
import org.apache.kafka.coordinator.group.CoordinatorRecord;
import org.apache.kafka.coordinator.group.CoordinatorRecordSerde;
import org.apache.kafka.coordinator.group.GroupCoordinatorShard;
import org.apache.kafka.coordinator.group.runtime.CoordinatorLoader;

/**
 * Releases 3.8-3.9: the runtime is still inside kafka-group-coordinator
 * (org.apache.kafka.coordinator.group.runtime). Checked with javap:
 *
 * <ul>
 *   <li>loader: kafka.coordinator.group.CoordinatorLoaderImpl (Scala, kafka_2.13) doLoad calls
 *       deserializer.deserialize(key, value) and replay(record.offset, batch.producerId,
 *       batch.producerEpoch, record); it catches only CoordinatorLoader.UnknownRecordTypeException
 *       (WARN "Ignoring it. It could be a left over from an aborted upgrade.", skip); anything else
 *       fails the load. Control batches: COMMIT/ABORT records go to
 *       replayEndTransactionMarker(producerId, producerEpoch, TransactionResult);</li>
 *   <li>serde: CoordinatorRecordSerde; no version check: a value version above the highest known
 *       is read with the message's own reader, that is in its highest layout (3.9 knows record
 *       types 0-8 only: share-group types 9-15 are unknown types and skipped);</li>
 *   <li>replay: GroupCoordinatorShard.replay(long offset, long producerId, short producerEpoch,
 *       CoordinatorRecord) and replayEndTransactionMarker(long, short, TransactionResult);</li>
 *   <li>GroupCoordinatorConfig differs (3.8 positional, 3.9 from an AbstractConfig): Setup.java.</li>
 * </ul>
 */
final class Release implements ReleaseShard {
    private final CoordinatorRecordSerde serde = new CoordinatorRecordSerde();
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
        } catch (CoordinatorLoader.UnknownRecordTypeException e) {
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

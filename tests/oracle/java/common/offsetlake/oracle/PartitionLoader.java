package offsetlake.oracle;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The loader loop every supported release shares, replicated from its CoordinatorLoaderImpl
 * (3.6-4.1: the Scala kafka.coordinator.group.CoordinatorLoaderImpl in kafka_2.13; 4.2+: the Java
 * org.apache.kafka.coordinator.common.runtime.CoordinatorLoaderImpl in kafka-coordinator-common),
 * read with javap:
 *
 * <ul>
 *   <li>every batch from the log start to its end is read, transactional data of aborted
 *       transactions included (the loader reads with FetchIsolation.LOG_END);</li>
 *   <li>a control batch: 3.6 throws IllegalStateException("Control batches are not supported
 *       yet."); 3.7+ replay each COMMIT or ABORT record as an end-transaction marker with the
 *       batch's producer id and epoch and ignore any other control type;</li>
 *   <li>a data record: the release's serde deserializes key and value; its
 *       UnknownRecordTypeException is logged at WARN and the record skipped; any other exception,
 *       in deserialize or in replay, fails the load at that record (4.0+ wrap it in a
 *       RuntimeException; we report the original, the one the broker logs as the cause);</li>
 *   <li>after the last batch the runtime calls the shard's onLoaded.</li>
 * </ul>
 *
 * When the load fails, the state replayed so far is still reported: the caller decides what a
 * failed partition means (a broker shows none of it).
 */
final class PartitionLoader {
    static final String CONTROL_BATCHES_UNSUPPORTED = "Control batches are not supported yet.";

    private final int partition;
    private final ReleaseShard shard;
    private long replayed;
    private long controlBatches;
    private long nextOffset;
    private final List<Object> skipped = new ArrayList<>();
    private Map<String, Object> failure;

    private PartitionLoader(int partition, ReleaseShard shard) {
        this.partition = partition;
        this.shard = shard;
    }

    static Map<String, Object> load(int partition, List<Path> segmentFiles) {
        PartitionLoader loader = new PartitionLoader(partition, Release.newShard(partition));
        if (loader.replaySegments(segmentFiles)) {
            loader.callOnLoaded();
        }
        return loader.result();
    }

    private boolean replaySegments(List<Path> segmentFiles) {
        for (Path file : segmentFiles) {
            try (Segment segment = Segment.open(file)) {
                Iterator<LogBatch> batches = segment.batches();
                while (batches.hasNext()) {
                    if (!replayBatch(batches.next())) {
                        return false;
                    }
                }
            } catch (Exception e) {
                // A batch the log layer cannot read: the broker's log recovery would have
                // truncated the log here, but we have no broker. Report it at the next offset.
                return fail("read", nextOffset, null, e);
            }
        }
        return true;
    }

    private boolean replayBatch(LogBatch batch) {
        if (batch.isControl()) {
            controlBatches++;
            if (!shard.replaysMarkers()) {
                return fail("control", batch.baseOffset(), null,
                    new IllegalStateException(CONTROL_BATCHES_UNSUPPORTED));
            }
        }
        Iterator<LogBatch.LogRecord> records = batch.records();
        while (records.hasNext()) {
            LogBatch.LogRecord record = records.next();
            nextOffset = record.offset() + 1;
            boolean ok = batch.isControl() ? replayMarker(batch, record) : replayRecord(batch, record);
            if (!ok) {
                return false;
            }
        }
        nextOffset = batch.nextOffset();
        return true;
    }

    private boolean replayMarker(LogBatch batch, LogBatch.LogRecord record) {
        try {
            String type = record.controlType();
            if (type.equals("COMMIT") || type.equals("ABORT")) {
                shard.replayEndTransactionMarker(batch.producerId(), batch.producerEpoch(),
                    type.equals("COMMIT"));
            }
            return true;
        } catch (RuntimeException e) {
            return fail("control", record.offset(), null, e);
        }
    }

    private boolean replayRecord(LogBatch batch, LogBatch.LogRecord record) {
        Short type = recordType(record.key());
        Object deserialized;
        try {
            deserialized = shard.deserialize(record.key(), record.value());
        } catch (ReleaseShard.UnknownRecordType e) {
            Map<String, Object> skip = new LinkedHashMap<>();
            skip.put("offset", record.offset());
            skip.put("record_type", e.type);
            skip.put("reason", "unknown_record_type");
            skipped.add(skip);
            return true;
        } catch (RuntimeException e) {
            return fail("deserialize", record.offset(), type, e);
        }
        try {
            shard.replay(record.offset(), batch.producerId(), batch.producerEpoch(), deserialized);
            replayed++;
            return true;
        } catch (RuntimeException e) {
            return fail("replay", record.offset(), type, e);
        }
    }

    private void callOnLoaded() {
        try {
            shard.onLoaded();
        } catch (RuntimeException e) {
            fail("on_loaded", null, null, e);
        }
    }

    /** The key's leading int16: the record type (null when the key is too short to hold one). */
    private static Short recordType(ByteBuffer key) {
        return key != null && key.remaining() >= 2 ? key.getShort(key.position()) : null;
    }

    private boolean fail(String stage, Long offset, Short recordType, Exception e) {
        e.printStackTrace(System.err);
        failure = new LinkedHashMap<>();
        failure.put("offset", offset);
        failure.put("record_type", recordType);
        failure.put("stage", stage);
        failure.put("exception", e.getClass().getName());
        failure.put("message", e.getMessage());
        return false;
    }

    private Map<String, Object> result() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("partition", partition);
        out.put("status", failure == null ? "loaded" : "failed");
        out.put("failure", failure);
        out.put("replayed", replayed);
        out.put("skipped", skipped);
        out.put("control_batches", controlBatches);
        out.put("markers_replayed", shard.replaysMarkers());
        out.putAll(ShardState.read(shard.shard()));
        return out;
    }
}

package offsetlake.oracle;

import java.nio.ByteBuffer;
import java.util.Iterator;

/**
 * A record batch of a segment file as the loaders see it. kafka-clients' own FileRecords and
 * RecordBatch read the file (Segment.java, one per package layout: 4.3 moved them to
 * org.apache.kafka.common.record.internal); this view lets the loader loop stay common.
 */
interface LogBatch {
    long baseOffset();

    long nextOffset();

    boolean isControl();

    long producerId();

    short producerEpoch();

    /** Decompresses on first use, as the real loader's iteration does; may throw. */
    Iterator<LogRecord> records();

    interface LogRecord {
        long offset();

        ByteBuffer key();

        ByteBuffer value();

        /** ControlRecordType.parse(key).name(): COMMIT, ABORT or another control type. */
        String controlType();
    }
}

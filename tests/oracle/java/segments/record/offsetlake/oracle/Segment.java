package offsetlake.oracle;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Iterator;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;

/**
 * One segment file read with kafka-clients' FileRecords, for releases up to 4.2 (package
 * org.apache.kafka.common.record). FileRecords stops at a truncated last batch, as the broker's
 * log recovery does; it is opened read-only.
 */
final class Segment implements AutoCloseable {
    private final FileRecords file;

    private Segment(FileRecords file) {
        this.file = file;
    }

    static Segment open(Path path) throws IOException {
        return new Segment(FileRecords.open(path.toFile(), false));
    }

    Iterator<LogBatch> batches() {
        Iterator<? extends RecordBatch> batches = file.batches().iterator();
        return new Iterator<>() {
            public boolean hasNext() {
                return batches.hasNext();
            }

            public LogBatch next() {
                return new Batch(batches.next());
            }
        };
    }

    @Override
    public void close() throws IOException {
        file.close();
    }

    private static final class Batch implements LogBatch {
        private final RecordBatch batch;

        Batch(RecordBatch batch) {
            this.batch = batch;
        }

        public long baseOffset() {
            return batch.baseOffset();
        }

        public long nextOffset() {
            return batch.nextOffset();
        }

        public boolean isControl() {
            return batch.isControlBatch();
        }

        public long producerId() {
            return batch.producerId();
        }

        public short producerEpoch() {
            return batch.producerEpoch();
        }

        public Iterator<LogRecord> records() {
            Iterator<Record> records = batch.iterator();
            return new Iterator<>() {
                public boolean hasNext() {
                    return records.hasNext();
                }

                public LogRecord next() {
                    return new Entry(records.next());
                }
            };
        }
    }

    private static final class Entry implements LogBatch.LogRecord {
        private final Record record;

        Entry(Record record) {
            this.record = record;
        }

        public long offset() {
            return record.offset();
        }

        public ByteBuffer key() {
            return record.key();
        }

        public ByteBuffer value() {
            return record.value();
        }

        public String controlType() {
            return ControlRecordType.parse(record.key()).name();
        }
    }
}

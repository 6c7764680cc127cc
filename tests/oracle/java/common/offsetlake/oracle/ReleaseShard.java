package offsetlake.oracle;

import java.nio.ByteBuffer;

/**
 * One release's GroupCoordinatorShard, driven the way that release's loader drives it. Each
 * release family implements it once (tests/oracle/java/adapters/FAMILY/.../Release.java); the
 * loader loop that calls it is common (PartitionLoader).
 */
interface ReleaseShard {

    /** The release's own record serde: a record's key and value buffers to what replay takes. */
    Object deserialize(ByteBuffer key, ByteBuffer value);

    /** The shard's replay with what the release's loader passes it (3.6: the record only). */
    void replay(long offset, long producerId, short producerEpoch, Object record);

    /** Whether the release's loader replays transaction markers (3.7+) or fails on them (3.6). */
    boolean replaysMarkers();

    void replayEndTransactionMarker(long producerId, short producerEpoch, boolean commit);

    /** What the coordinator runtime calls once a load succeeds; an empty metadata image here. */
    void onLoaded();

    /** The GroupCoordinatorShard itself, for reading its final state. */
    Object shard();

    /** The release's "unknown record type" exception, which its loader skips with a warning. */
    final class UnknownRecordType extends RuntimeException {
        final short type;

        UnknownRecordType(short type, Throwable cause) {
            super("unknown record type " + type, cause);
            this.type = type;
        }
    }
}

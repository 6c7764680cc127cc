// The integration suite's Kafka Streams application (tests/integration/streams_app.py compiles it
// with javac against build/streams/fetch.sh's jars and runs it, one JVM per instance).
//
// Topology: st-input (String keys and values) -> re-keyed by value (a repartition topic) -> counted
// per key in the state store "counts" (a changelog topic) -> st-output. Two subtopologies, so the
// streams group has a repartition source topic, a state store and tasks of both subtopologies.
//
// Usage: StreamsApp BOOTSTRAP APPLICATION_ID STATE_DIR INSTANCE_ID|- ; prints "STATE <new state>"
// on every state change and stops cleanly (leaving the group) on SIGTERM.

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

public final class StreamsApp {
    public static void main(String[] args) throws InterruptedException {
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[2]);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        if (!args[3].equals("-")) {
            props.put(StreamsConfig.mainConsumerPrefix("group.instance.id"), args[3]);
        }

        StreamsBuilder builder = new StreamsBuilder();
        builder.stream("st-input", Consumed.with(Serdes.String(), Serdes.String()))
               .selectKey((key, value) -> value)
               .groupByKey(Grouped.with("by-value", Serdes.String(), Serdes.String()))
               .count(Materialized.as("counts"))
               .toStream()
               .to("st-output", Produced.with(Serdes.String(), Serdes.Long()));

        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        CountDownLatch stopped = new CountDownLatch(1);
        streams.setStateListener((now, before) -> {
            System.out.println("STATE " + now);
            System.out.flush();
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(20));
            stopped.countDown();
        }));
        streams.start();
        stopped.await();
    }
}

package offsetlake.oracle;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The coordinator oracle: hands every record of a __consumer_offsets log, in log order, to one
 * release's real group coordinator shard (the release whose jars are on the classpath) and prints
 * what happened as JSON. Reads paths from stdin, one per line: a snapshot root holding
 * __consumer_offsets-N directories, or one such directory. Answers each with exactly one line on
 * stdout, {"log", "release", "partitions": [...]}, or {"log", "error"} when the path cannot be
 * read; a bad log never ends the process. Usage: OracleMain RELEASE (the version it reports).
 */
public final class OracleMain {
    private static final Pattern PARTITION_DIR = Pattern.compile("__consumer_offsets-(\\d+)");
    private static final Pattern SEGMENT_FILE = Pattern.compile("(\\d+)\\.log");

    private OracleMain() {
    }

    public static void main(String[] args) throws IOException {
        String release = args.length > 0 ? args[0] : "unknown";
        // Answers go to the real stdout; anything a library prints goes to stderr instead.
        PrintStream answers = new PrintStream(new FileOutputStream(FileDescriptor.out), true,
            StandardCharsets.UTF_8);
        System.setOut(System.err);
        BufferedReader paths = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = paths.readLine(); line != null; line = paths.readLine()) {
            answers.println(Json.write(answer(release, line.strip())));
        }
    }

    static Map<String, Object> answer(String release, String input) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("log", input);
        try {
            List<Object> partitions = new ArrayList<>();
            for (Map.Entry<Integer, Path> dir : partitionDirs(Path.of(input)).entrySet()) {
                partitions.add(PartitionLoader.load(dir.getKey(), segmentFiles(dir.getValue())));
            }
            out.put("release", release);
            out.put("partitions", partitions);
        } catch (Throwable t) {
            t.printStackTrace(System.err);
            out.remove("release");
            out.remove("partitions");
            out.put("error", t.toString());
        }
        return out;
    }

    /** Partition number -> directory: the input itself, or the partition directories under it. */
    static TreeMap<Integer, Path> partitionDirs(Path input) throws IOException {
        if (!Files.isDirectory(input)) {
            throw new NoSuchFileException(input.toString(), null, "not a directory");
        }
        TreeMap<Integer, Path> dirs = new TreeMap<>();
        Integer own = partitionOf(input);
        if (own != null) {
            dirs.put(own, input);
            return dirs;
        }
        try (Stream<Path> children = Files.list(input)) {
            children.filter(Files::isDirectory).forEach(child -> {
                Integer partition = partitionOf(child);
                if (partition != null) {
                    dirs.put(partition, child);
                }
            });
        }
        if (dirs.isEmpty()) {
            throw new IOException("no __consumer_offsets-N directories in " + input);
        }
        return dirs;
    }

    /** The *.log segment files named by their base offset, in offset order. */
    static List<Path> segmentFiles(Path dir) throws IOException {
        TreeMap<Long, Path> segments = new TreeMap<>();
        try (Stream<Path> files = Files.list(dir)) {
            files.forEach(file -> {
                Matcher name = SEGMENT_FILE.matcher(file.getFileName().toString());
                if (name.matches() && Files.isRegularFile(file)) {
                    segments.put(Long.parseLong(name.group(1)), file);
                }
            });
        }
        return new ArrayList<>(segments.values());
    }

    private static Integer partitionOf(Path dir) {
        Path name = dir.toAbsolutePath().normalize().getFileName();
        Matcher match = name == null ? null : PARTITION_DIR.matcher(name.toString());
        return match != null && match.matches() ? Integer.valueOf(match.group(1)) : null;
    }
}

package io.binomic.core.internal.process;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The line of a worker's log that says why it did not start, so the master can repeat it where an
 * operator looks first instead of only pointing at the log file.
 */
final class StartupFailureLine {
    /** A failing start writes a few kilobytes at most; more than this is read from its end. */
    private static final int MAX_BYTES = 256 * 1024;
    /** The worker's own one-line account, written before its stack trace. */
    private static final String WORKER_FAILURE = "start-up failed";
    /** What the JVM itself writes when it cannot start the worker's main class at all. */
    private static final List<String> JVM_FAILURES = List.of("Error:", "Error occurred", "Exception in thread", "Caused by:");

    /**
     * The lines the JVM adds after any reason it cannot start ("Unrecognized VM option 'Bogus'",
     * "Invalid maximum heap size: -Xmx1gb"): they say only that it did not start, the line before them says why.
     */
    private static final List<String> JVM_GENERIC = List.of("Error: Could not create the Java Virtual Machine.",
            "Error: A fatal exception has occurred. Program will exit.");

    private StartupFailureLine() { }

    /**
     * The last line written from {@code offset} on that tells why the worker failed: its own
     * {@code start-up failed} line when there is one, otherwise the JVM's last error line.
     */
    static Optional<String> read(Path log, long offset) {
        // The master is run from settings, not code: name the flag and keys where the worker's line names the API.
        return reason(log, offset).map(OperatorTerms::inOperatorTerms);
    }

    private static Optional<String> reason(Path log, long offset) {
        List<String> lines;
        try {
            lines = lines(log, offset);
        } catch (IOException unreadable) {
            return Optional.empty();
        }
        return reason(lines);
    }

    /** The line of {@code lines}, a JVM's output, that tells why it did not start, by the rules of {@link #read}. */
    static Optional<String> reason(List<String> lines) {
        Optional<String> own = last(lines, line -> line.contains(WORKER_FAILURE));
        if (own.isPresent()) {
            return own;
        }
        List<String> stripped = lines.stream().map(String::strip).toList();
        for (int i = stripped.size() - 1; i > 0; i--) {
            String before = stripped.get(i - 1);
            if (JVM_GENERIC.contains(stripped.get(i)) && !JVM_GENERIC.contains(before) && !before.isEmpty() && !before.startsWith("----")) {
                return Optional.of(before);
            }
        }
        return last(stripped, line -> JVM_FAILURES.stream().anyMatch(line::startsWith) && !JVM_GENERIC.contains(line))
                .or(() -> last(stripped, line -> JVM_FAILURES.stream().anyMatch(line::startsWith)));
    }

    private static Optional<String> last(List<String> lines, Predicate<String> wanted) {
        return lines.reversed().stream().map(String::strip).filter(wanted).findFirst();
    }

    private static List<String> lines(Path log, long offset) throws IOException {
        long size = Files.size(log);
        long from = Math.max(offset, size - MAX_BYTES);
        if (from >= size) {
            return List.of();
        }
        try (InputStream in = Files.newInputStream(log)) {
            in.skipNBytes(from);
            return new String(in.readNBytes((int) (size - from)), StandardCharsets.UTF_8).lines().toList();
        }
    }
}

package io.binomic.it;

import io.binomic.api.TaskContext;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The chaos suite's record of every execution, kept apart from the Redis under test so that a
 * restart, an outage or a CLIENT KILL of that Redis cannot touch it: one file per JVM in a
 * directory, each line written with a single {@code write(2)}, so that a SIGKILL loses nothing
 * already recorded. An execution writes {@code S id attempt pid start n tick} when it starts,
 * {@code E id attempt pid start end n} when its handler returns, and {@code F ...} instead when it
 * throws its planned failure; a killed one has neither.
 */
final class ChaosLedger implements TestApp.Runs {
    /** One execution; {@code end} is -1 when the handler never returned, {@code failedAt} -1 unless it threw its planned failure. */
    record Run(UUID id, int attempt, long pid, long start, long end, long failedAt, int n, long tick) {
        boolean completed() {
            return end >= 0;
        }

        /** When it stopped running by itself (returned or threw); -1 when it was killed or is still running. */
        long over() {
            return completed() ? end : failedAt;
        }
    }

    private final FileOutputStream out;
    private final long pid = ProcessHandle.current().pid();
    private final ThreadLocal<Long> startedAt = new ThreadLocal<>();

    ChaosLedger(Path directory) {
        out = open(directory, "runs-" + pid + ".log");
    }

    /** Opens ledger file {@code name} in {@code directory} (created if missing) for appending. */
    static FileOutputStream open(Path directory, String name) {
        try {
            Files.createDirectories(directory);
            return new FileOutputStream(directory.resolve(name).toFile(), true);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Appends {@code line} to {@code out} in one {@code write(2)}: the threads of a JVM never
     * interleave within a line, and a SIGKILL never leaves half of one.
     */
    static void writeLine(FileOutputStream out, String line) {
        byte[] bytes = (line + "\n").getBytes(StandardCharsets.US_ASCII);
        synchronized (out) {
            try {
                out.write(bytes);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    @Override
    public long started(int n) {
        TaskContext context = TaskContext.current();
        long start = System.currentTimeMillis();
        startedAt.set(start);
        String tick = context.headers().get("tick");
        write("S " + context.messageId() + " " + context.attempt() + " " + pid + " " + start + " " + n + " "
                + (tick == null ? -1 : Instant.parse(tick).toEpochMilli()));
        return context.attempt();
    }

    @Override
    public void sawAttempt(int n, int attempt) {
        // The attempt is on the S line already.
    }

    @Override
    public void finished(int n) {
        end("E", n);
    }

    @Override
    public void failing(int n) {
        end("F", n);
    }

    private void end(String kind, int n) {
        TaskContext context = TaskContext.current();
        write(kind + " " + context.messageId() + " " + context.attempt() + " " + pid + " " + startedAt.get() + " "
                + System.currentTimeMillis() + " " + n);
    }

    private void write(String line) {
        writeLine(out, line);
    }

    /** Every execution recorded in {@code directory}, in no particular order. */
    static List<Run> read(Path directory) {
        Map<String, long[]> ends = new LinkedHashMap<>();
        Map<String, long[]> failures = new LinkedHashMap<>();
        List<String[]> starts = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, "runs-*.log")) {
            for (Path file : files) {
                for (String line : Files.readAllLines(file, StandardCharsets.US_ASCII)) {
                    String[] f = line.split(" ");
                    if (f[0].equals("S") && f.length == 7) {
                        starts.add(f);
                    } else if ((f[0].equals("E") || f[0].equals("F")) && f.length == 7) {
                        (f[0].equals("E") ? ends : failures).put(f[1] + " " + f[2] + " " + f[3] + " " + f[4],
                                new long[] {Long.parseLong(f[5])});
                    }
                    // A line cut short cannot happen (one write per line); anything else is ignored.
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Run> runs = new ArrayList<>(starts.size());
        for (String[] f : starts) {
            String key = f[1] + " " + f[2] + " " + f[3] + " " + f[4];
            long[] end = ends.get(key);
            long[] failed = failures.get(key);
            runs.add(new Run(UUID.fromString(f[1]), Integer.parseInt(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]),
                    end == null ? -1 : end[0], failed == null ? -1 : failed[0], Integer.parseInt(f[5]), Long.parseLong(f[6])));
        }
        return runs;
    }
}

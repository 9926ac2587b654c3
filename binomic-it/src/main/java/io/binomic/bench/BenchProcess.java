package io.binomic.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM of the suite: its standard output read line by line by a thread of its own, its
 * standard error written to a log file, its standard input open for commands; stopped on close.
 */
class BenchProcess implements AutoCloseable {
    private final String what;
    private final Path log;
    private final Process process;
    private final BlockingQueue<String> lines;
    private final Map<String, String> latest = new HashMap<>();

    /**
     * Starts {@code command}, its standard error going to a new temporary file whose name begins with
     * {@code logPrefix}; {@code what} names the process when it fails to report.
     */
    BenchProcess(String what, List<String> command, String logPrefix) throws IOException {
        this.what = what;
        this.log = Files.createTempFile(logPrefix, ".log");
        this.process = new ProcessBuilder(command).redirectError(log.toFile()).start();
        this.lines = outputLines(process);
    }

    /** The lines {@code process} writes to its standard output, as a reading thread takes them. */
    private static BlockingQueue<String> outputLines(Process process) {
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                    lines.add(line);
                }
            } catch (IOException e) {
                lines.add("error " + e);
            }
        });
        return lines;
    }

    /** Writes {@code line} to the process's standard input. */
    void send(String line) throws IOException {
        process.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
        process.getOutputStream().flush();
    }

    /** CPU time the JVM has used so far (the OS counts it in clock ticks: 10 ms steps). */
    long cpuNanos() {
        return process.info().totalCpuDuration().orElseThrow().toNanos();
    }

    /**
     * The next line starting with {@code prefix}, other lines before it skipped; fails naming the
     * process and its log when it exits or the time is up first.
     */
    String awaitLine(String prefix, int timeoutSeconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (true) {
            String line = lines.poll(100, TimeUnit.MILLISECONDS);
            if (line != null && line.startsWith(prefix)) {
                return line;
            }
            if (line == null && (!process.isAlive() || System.nanoTime() > deadline)) {
                throw new IllegalStateException(what + " did not report '" + prefix + "' within " + timeoutSeconds
                        + " s" + (process.isAlive() ? "" : "; it exited with " + process.exitValue()) + "; see " + log);
            }
        }
    }

    /** The latest line written so far that starts with {@code prefix} (every line before it is skipped), or null. */
    String latestLine(String prefix) {
        for (String line = lines.poll(); line != null; line = lines.poll()) {
            if (line.startsWith(prefix)) {
                latest.put(prefix, line);
            }
        }
        return latest.get(prefix);
    }

    /** Stops the process: SIGTERM, and SIGKILL if it has not exited a minute later. */
    @Override
    public void close() {
        // SIGTERM: the JVM runs its shutdown hooks, so a Flight Recording is written. Through the handle, not
        // Process.destroy(), which also closes the pipes: a JVM writing its AOT cache at exit (-XX:AOTCacheOutput)
        // reports on stdout, and lost the cache to the broken pipe.
        process.toHandle().destroy();
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}

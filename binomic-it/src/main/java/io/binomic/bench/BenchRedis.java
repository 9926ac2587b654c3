package io.binomic.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The benchmark's own {@code redis-server} on a free loopback port, persistence off, and the
 * {@code redis-cli} / {@code redis-benchmark} calls the measurements need. Out-of-band calls go
 * through {@code redis-cli} rather than a client in this JVM: they are few (a handful per
 * measurement), and they never share a connection or a thread with the code being measured.
 */
final class BenchRedis implements AutoCloseable {
    private static final String HOST = "127.0.0.1";

    private final int port;
    private final Process process;

    private BenchRedis(int port, Process process) {
        this.port = port;
        this.process = process;
    }

    static BenchRedis start() throws IOException, InterruptedException {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        Path dir = Files.createTempDirectory("binomic-bench-redis-");
        Process process;
        try {
            process = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", HOST,
                    "--save", "", "--appendonly", "no", "--dir", dir.toString())
                    .redirectErrorStream(true).redirectOutput(dir.resolve("redis.log").toFile()).start();
        } catch (IOException e) {
            throw new IllegalStateException("the benchmark needs redis-server and redis-benchmark on the PATH:"
                    + " apt-get install redis-server redis-tools (" + e.getMessage() + ")", e);
        }
        BenchRedis redis = new BenchRedis(port, process);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!redis.answersPing()) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                process.destroyForcibly();
                throw new IllegalStateException("redis-server did not start on port " + port + "; see " + dir.resolve("redis.log"));
            }
            Thread.sleep(50);
        }
        return redis;
    }

    String url() {
        return "redis://" + HOST + ":" + port;
    }

    String version() {
        return info("server").get("redis_version");
    }

    void flushAll() {
        cli("FLUSHALL");
    }

    /** Redis' own CPU time so far (user + system), in seconds. */
    double cpuSeconds() {
        Map<String, String> cpu = info("cpu");
        return Double.parseDouble(cpu.get("used_cpu_user")) + Double.parseDouble(cpu.get("used_cpu_sys"));
    }

    /** How many times Redis has run {@code command} (lower case) since it started, from INFO commandstats. */
    long calls(String command) {
        String stats = info("commandstats").get("cmdstat_" + command);
        if (stats == null) {
            return 0;
        }
        int from = stats.indexOf("calls=") + "calls=".length();
        return Long.parseLong(stats.substring(from, stats.indexOf(',', from)));
    }

    /**
     * Microseconds Redis has spent in each command since it started (INFO commandstats {@code usec}), by lower-case name.
     * Commands a script runs are counted on their own and again inside the script's {@code evalsha}.
     */
    Map<String, Long> usecByCommand() {
        Map<String, Long> usec = new java.util.TreeMap<>();
        info("commandstats").forEach((key, stats) -> {
            int from = stats.indexOf("usec=");
            if (key.startsWith("cmdstat_") && from >= 0) {
                from += "usec=".length();
                usec.put(key.substring("cmdstat_".length()).replace('|', '_'), Long.parseLong(stats.substring(from, stats.indexOf(',', from))));
            }
        });
        return usec;
    }

    long usedMemory() {
        return Long.parseLong(info("memory").get("used_memory"));
    }

    /** Bytes {@code key} holds with everything it references ({@code MEMORY USAGE key SAMPLES 0}). */
    long memoryUsage(String key) {
        return Long.parseLong(cli("MEMORY", "USAGE", key, "SAMPLES", "0").strip());
    }

    /** The keys matching {@code pattern} ({@code redis-cli --scan}). */
    List<String> scan(String pattern) {
        return cli("--scan", "--pattern", pattern).lines().filter(l -> !l.isBlank()).toList();
    }

    /** {@code MEMORY USAGE key SAMPLES 0}'s reply, empty for a key that does not exist. */
    String memoryUsageOrEmpty(String key) {
        return cli("MEMORY", "USAGE", key, "SAMPLES", "0").strip();
    }

    long streamLength(String key) {
        return Long.parseLong(cli("XLEN", key).strip());
    }

    /**
     * The ceiling: {@code redis-benchmark -q -P 16 -n <n> XADD s '*' f v} against this server.
     * Returns requests per second.
     */
    double xaddCeiling(int n) {
        String out = run(List.of("redis-benchmark", "-h", HOST, "-p", Integer.toString(port), "-q", "-P", "16",
                "-n", Integer.toString(n), "XADD", "s", "*", "f", "v"));
        // -q prints progress lines ended by '\r' and then "XADD s * f v: 123456.78 requests per second, ..."
        String last = out.substring(out.lastIndexOf('\r') + 1);
        int colon = last.lastIndexOf(": ");
        int end = last.indexOf(" requests per second");
        if (colon < 0 || end < colon) {
            throw new IllegalStateException("unexpected redis-benchmark output: " + out);
        }
        cli("DEL", "s");
        return Double.parseDouble(last.substring(colon + 2, end));
    }

    /** Runs {@code command} {@code n} times with redis-benchmark (one connection, unpipelined), for its cost alone. */
    void benchmark(int n, List<String> command) {
        List<String> args = new ArrayList<>(List.of("redis-benchmark", "-h", HOST, "-p", Integer.toString(port), "-q", "-c", "1",
                "-n", Integer.toString(n)));
        args.addAll(command);
        run(args);
    }

    private boolean answersPing() {
        try {
            return cli("PING").strip().equals("PONG");
        } catch (IllegalStateException e) {
            return false;
        }
    }

    /** Commands Redis has processed since it started (a script's own calls not counted): the client's round trips, unpipelined. */
    long totalCommands() {
        return Long.parseLong(info("stats").get("total_commands_processed"));
    }

    private Map<String, String> info(String section) {
        Map<String, String> values = new HashMap<>();
        for (String line : cli("INFO", section).split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0) {
                values.put(line.substring(0, colon), line.substring(colon + 1).strip());
            }
        }
        return values;
    }

    private String cli(String... command) {
        List<String> full = new ArrayList<>(List.of("redis-cli", "-h", HOST, "-p", Integer.toString(port)));
        full.addAll(List.of(command));
        return run(full);
    }

    private static String run(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.waitFor() != 0) {
                throw new IllegalStateException(command + " exited with " + p.exitValue() + ": " + out);
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command.getFirst() + ": apt-get install redis-tools", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + command, e);
        }
    }

    @Override
    public void close() {
        stop(process, 10);
    }

    /** Terminates {@code process}, killing it if it has not exited within {@code seconds}. */
    static void stop(Process process, int seconds) {
        process.destroy();
        try {
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}

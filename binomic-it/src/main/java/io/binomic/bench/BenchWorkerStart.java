package io.binomic.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Issue 14's worker start: from the master starting a worker JVM to that worker reporting RUNNING
 * (connected to Redis, consuming), as the master of a jlink image measures it ("worker 0 (pid ..)
 * running after N ms" in its log), with the image's trained AOT cache ({@code lib/binomic-worker.aot})
 * and without it ({@code -Dbinomic.worker.aotCache=none} for the master), alternating, one master per
 * sample.
 *
 * <pre>./mvnw -q -Pbench verify -Dbench.only=start [-Dbench.startRuns=7] [-Dbench.image=DIR]</pre>
 *
 * Without {@code bench.image} it first builds the image with {@code scripts/build-runtime.sh} from
 * target/runtime-jars (about a minute; the script trains the cache).
 */
final class BenchWorkerStart {
    private static final Pattern RUNNING = Pattern.compile("worker 0 \\(pid \\d+\\) running after (\\d+) ms");

    private BenchWorkerStart() { }

    static void run() throws Exception {
        int runs = Integer.getInteger("bench.startRuns", 7);
        String given = System.getProperty("bench.image", "");
        Path image = given.isBlank() ? buildImage() : Path.of(given).toAbsolutePath();
        if (!Files.isRegularFile(image.resolve("lib").resolve("binomic-worker.aot"))) {
            throw new IllegalStateException(image + " has no lib/binomic-worker.aot: build it with scripts/build-runtime.sh");
        }
        List<Long> with = new ArrayList<>();
        List<Long> without = new ArrayList<>();
        try (BenchRedis redis = BenchRedis.start()) {
            startToRunning(image, redis, true); // one of each first, unmeasured: page cache and the Redis connection path
            startToRunning(image, redis, false);
            for (int i = 0; i < runs; i++) {
                long a = startToRunning(image, redis, true);
                long b = startToRunning(image, redis, false);
                with.add(a);
                without.add(b);
                System.out.printf(Locale.ROOT, "{\"run\":%d,\"worker_start_ms_aot\":%d,\"worker_start_ms_no_aot\":%d}%n", i + 1, a, b);
            }
        }
        System.out.printf(Locale.ROOT, "%nworker JVM start to RUNNING (master spawn, jlink image %s), %d runs each:%n", image, runs);
        System.out.printf(Locale.ROOT, "  with the AOT cache     median %5d ms  (min %d, max %d)%n", median(with), min(with), max(with));
        System.out.printf(Locale.ROOT, "  without (aotCache=none) median %5d ms  (min %d, max %d)%n", median(without), min(without),
                max(without));
    }

    private static Path buildImage() throws IOException, InterruptedException {
        Path image = Path.of("target", "bench-image").toAbsolutePath();
        Path log = Path.of("target", "bench-image.log");
        System.out.println("building " + image + " (log: " + log + ")");
        Process build = new ProcessBuilder("bash", Path.of("scripts", "build-runtime.sh").toString(), "--jars",
                Path.of("target", "runtime-jars").toString(), image.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!build.waitFor(10, TimeUnit.MINUTES) || build.exitValue() != 0) {
            throw new IllegalStateException("build-runtime.sh failed: " + Files.readString(log));
        }
        return image;
    }

    /** One master with one worker: the worker's start-to-RUNNING as the master logs it. */
    private static long startToRunning(Path image, BenchRedis redis, boolean aot) throws IOException, InterruptedException {
        Path state = Files.createTempDirectory("binomic-bench-start");
        Path log = state.resolve("master.log");
        ProcessBuilder builder = new ProcessBuilder(image.resolve("bin").resolve("binomic").toString(), "master",
                "--broker", redis.url(), "--queues", "bench-start", "--workers", "1", "--state-dir", state.toString(),
                "--shutdown-grace", "1s").redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().remove("BINOMIC_CONFIG");
        builder.environment().remove("BINOMIC_MODULE_PATH");
        builder.environment().put("BINOMIC_JAVA_OPTS", aot ? "" : "-Dbinomic.worker.aotCache=none");
        Process master = builder.start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < deadline) {
                Matcher m = RUNNING.matcher(Files.readString(log));
                if (m.find()) {
                    return Long.parseLong(m.group(1));
                }
                if (!master.isAlive()) {
                    break;
                }
                Thread.sleep(50);
            }
            throw new IllegalStateException("no worker reached RUNNING: " + Files.readString(log));
        } finally {
            master.destroy(); // SIGTERM: the master drains its worker and exits
            if (!master.waitFor(60, TimeUnit.SECONDS)) {
                master.destroyForcibly();
            }
        }
    }

    private static long median(List<Long> values) {
        List<Long> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private static long min(List<Long> values) {
        return values.stream().mapToLong(Long::longValue).min().orElse(0);
    }

    private static long max(List<Long> values) {
        return values.stream().mapToLong(Long::longValue).max().orElse(0);
    }
}

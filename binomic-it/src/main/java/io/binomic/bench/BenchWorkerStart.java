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
 * How long a worker takes to start, which bounds how fast the master replaces a lost one: from
 * the master starting a worker JVM to that worker reporting RUNNING
 * (connected to Redis, consuming), as the master of a jlink image measures it ("worker 0 (pid ..)
 * running after N ms" in its log), with the image's trained AOT cache ({@code lib/binomic-worker.aot})
 * and without it ({@code -Dbinomic.worker.aotCache=none} for the master), alternating, one master per
 * sample: its first worker (started while the master's own JVM starts too), then the replacement of
 * that worker after a SIGKILL (started by a running master: what a deployment sees). Also the
 * worker's CPU time at RUNNING.
 *
 * <pre>./mvnw -q -Pbench verify -Dbench.only=start [-Dbench.startRuns=7] [-Dbench.image=DIR]</pre>
 *
 * Without {@code bench.image} it first builds the image with {@code scripts/build-runtime.sh} from
 * target/runtime-jars (about a minute; the script trains the cache).
 */
final class BenchWorkerStart {
    private static final Pattern RUNNING = Pattern.compile("worker 0 \\(pid (\\d+)\\) running after (\\d+) ms");
    private static final Pattern REPLACED = Pattern.compile(
            "worker 0 replaced: .*, pid (\\d+) running; detection to spawn (\\d+) ms, to running (\\d+) ms");

    private BenchWorkerStart() { }

    static void run() throws Exception {
        int runs = Integer.getInteger("bench.startRuns", 7);
        String given = System.getProperty("bench.image", "");
        Path image = given.isBlank() ? buildImage() : Path.of(given).toAbsolutePath();
        if (!Files.isRegularFile(image.resolve("lib").resolve("binomic-worker.aot"))) {
            throw new IllegalStateException(image + " has no lib/binomic-worker.aot: build it with scripts/build-runtime.sh");
        }
        List<long[]> with = new ArrayList<>();
        List<long[]> without = new ArrayList<>();
        try (BenchRedis redis = BenchRedis.start()) {
            sample(image, redis, true); // one of each first, unmeasured: page cache and the Redis connection path
            sample(image, redis, false);
            for (int i = 0; i < runs; i++) {
                long[] a = sample(image, redis, true);
                long[] b = sample(image, redis, false);
                with.add(a);
                without.add(b);
                System.out.printf(Locale.ROOT, "{\"run\":%d,\"first_start_ms_aot\":%d,\"first_start_ms_no_aot\":%d,"
                        + "\"first_cpu_ms_aot\":%d,\"first_cpu_ms_no_aot\":%d,\"replacement_start_ms_aot\":%d,"
                        + "\"replacement_start_ms_no_aot\":%d,\"replacement_cpu_ms_aot\":%d,\"replacement_cpu_ms_no_aot\":%d,"
                        + "\"load1\":%.2f}%n", i + 1, a[0], b[0], a[1], b[1], a[2], b[2], a[3], b[3],
                        java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
            }
        }
        System.out.printf(Locale.ROOT, "%nworker JVM start to RUNNING (master spawn, jlink image %s), medians of %d runs each%n", image, runs);
        System.out.printf(Locale.ROOT, "%-40s %10s %14s%n", "", "AOT cache", "none");
        String[] names = {"first worker, ms (master starting too)", "first worker, worker CPU ms",
                "replacement of a killed worker, ms", "replacement, worker CPU ms"};
        for (int k = 0; k < names.length; k++) {
            final int column = k;
            System.out.printf(Locale.ROOT, "%-40s %10d %14d%n", names[k], median(with.stream().map(v -> v[column]).toList()),
                    median(without.stream().map(v -> v[column]).toList()));
        }
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

    /**
     * One master with one worker: the first worker's start to RUNNING as the master logs it (the master's own JVM starts at
     * the same time, on the same cores) and the worker's CPU time then; then the worker is killed (SIGKILL) and the
     * replacement's spawn to RUNNING (the master's "detection to running" less its "detection to spawn") and CPU time. The
     * replacement is the case a running deployment sees. CPU time: clock ticks (10 ms steps), read up to ~50 ms after
     * RUNNING (the worker then idles in its poll); steadier than wall time on a shared machine.
     */
    private static long[] sample(Path image, BenchRedis redis, boolean aot) throws IOException, InterruptedException {
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
            Matcher first = await(RUNNING, log, master);
            long firstPid = Long.parseLong(first.group(1));
            long firstCpu = cpuMillis(firstPid);
            ProcessHandle.of(firstPid).ifPresent(ProcessHandle::destroyForcibly);
            Matcher replaced = await(REPLACED, log, master);
            long replacementCpu = cpuMillis(Long.parseLong(replaced.group(1)));
            return new long[] {Long.parseLong(first.group(2)), firstCpu,
                    Long.parseLong(replaced.group(3)) - Long.parseLong(replaced.group(2)), replacementCpu};
        } finally {
            master.destroy(); // SIGTERM: the master drains its worker and exits
            if (!master.waitFor(60, TimeUnit.SECONDS)) {
                master.destroyForcibly();
            }
        }
    }

    private static Matcher await(Pattern pattern, Path log, Process master) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < deadline) {
            Matcher m = pattern.matcher(Files.readString(log));
            if (m.find()) {
                return m;
            }
            if (!master.isAlive()) {
                break;
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("no '" + pattern + "' in the master's log: " + Files.readString(log));
    }

    private static long cpuMillis(long pid) {
        return ProcessHandle.of(pid).flatMap(p -> p.info().totalCpuDuration()).map(d -> d.toMillis()).orElse(-1L);
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

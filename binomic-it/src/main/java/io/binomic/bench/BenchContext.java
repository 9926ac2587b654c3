package io.binomic.bench;

import io.binomic.api.BinomicConfig;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the measurements of one suite share: its redis-server, the sizes the system properties set,
 * the Flight Recorder directory ({@code bench.jfr}, null without), fresh queue names, and the
 * submitting side's client and waits.
 */
final class BenchContext {
    private static final long EMPTY_POLL_MILLIS = 2;

    final BenchRedis redis;
    final int messages = Integer.getInteger("bench.messages", 200_000);
    final int drainConcurrency = Integer.getInteger("bench.drainConcurrency", 1000);
    final int sleepers = Integer.getInteger("bench.sleepers", 100_000);
    final Path jfr = System.getProperty("bench.jfr", "").isBlank() ? null : Path.of(System.getProperty("bench.jfr"));
    private int queueNumber;

    BenchContext(BenchRedis redis) {
        this.redis = redis;
    }

    /** Waits until the queue has nothing ready and nothing pending: every message acked. */
    static void awaitEmpty(Binomic client, String queue, int timeoutSeconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (true) {
            QueueStats stats = client.queueStats(queue);
            if (stats.ready() == 0 && stats.pending() == 0) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("queue " + queue + " not drained after " + timeoutSeconds + " s: " + stats);
            }
            Thread.sleep(EMPTY_POLL_MILLIS);
        }
    }

    /** CPU time of this JVM: on a shared machine a steadier measure of client cost than wall time. */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** A queue name not used before in this suite run. */
    String nextQueue() {
        return "bench" + ++queueNumber;
    }

    /** A client that submits {@code task}; it declares it and never runs it (the workers are other JVMs). */
    Binomic client(Task<Long, Void> task) {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url()).build();
        return Binomic.builder().config(config).task(task).build().start();
    }

    /** The bench task as the submitting side has it: the definition, without the worker's handler. */
    static Task<Long, Void> submitOnly(String queue) {
        return BenchWorker.task(queue);
    }

    /** A space-separated list of JVM options from system property {@code name}. */
    static List<String> jvmOptions(String name, String fallback) {
        return Arrays.stream(System.getProperty(name, fallback).split(" ")).filter(o -> !o.isBlank()).toList();
    }
}

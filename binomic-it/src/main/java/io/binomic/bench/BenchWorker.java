package io.binomic.bench;

import io.binomic.api.BinomicConfig;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.api.TaskHandler;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Collections;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The worker process of the benchmark: one JVM running one Binomic worker on the bench queue, as
 * a deployment would. It reports to {@link Bench} through lines on standard output:
 * {@code ready}; in {@code drain} mode {@code first-start <epoch µs>}; in {@code latency} mode
 * {@code latency <p50> <p99> <p99.9> <max>} (µs); in {@code footprint} mode
 * {@code footprint <peak heap> <live heap> <RSS> <peak RSS>} (bytes).
 *
 * <p>Arguments: redis URL, queue, mode, concurrency, expected messages, warm-up messages
 * (latency mode: the first arrivals that are not counted), and {@code warm} or {@code cold}.
 * A warm worker first drains {@value #WARMUP_MESSAGES} messages of a queue of its own through
 * the same code, so that the JIT compilers have done most of their work before it is measured:
 * on two cores a fresh JVM otherwise spends seconds of CPU compiling while it drains.
 */
public final class BenchWorker {
    /** How long each footprint task sleeps. */
    static final Duration SLEEP = Duration.ofSeconds(5);
    private static final int WARMUP_MESSAGES = 100_000;

    private BenchWorker() { }

    /**
     * The benchmark's one task, as the submitting side and the worker share it (no handler code).
     * Its argument is the submit time in epoch microseconds (0 when unused).
     */
    static Task<Long, Void> task(String queue) {
        return Task.builder("bench", Long.class).queue(queue).build();
    }

    /** Epoch microseconds: comparable between the submitting JVM and this one on the same machine. */
    static long nowMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String queue = args[1];
        String mode = args[2];
        int concurrency = Integer.parseInt(args[3]);
        int expected = Integer.parseInt(args[4]);
        int warmup = Integer.parseInt(args[5]);
        if (args[6].equals("warm")) {
            warmUp(url, queue + "-warmup", concurrency);
        }

        CountDownLatch allRunning = new CountDownLatch(1);
        if (mode.equals("result")) {
            runResultWorker(url, queue, concurrency);
            return;
        }
        TaskHandler<Long, Void> handler = switch (mode) {
            case "drain" -> drain();
            case "latency" -> latency(expected, warmup);
            case "footprint" -> footprint(expected, allRunning);
            default -> throw new IllegalArgumentException("unknown mode " + mode);
        };
        BinomicConfig config = BinomicConfig.builder().brokerUrl(url)
                .worker(WorkerConfig.builder().queues(queue).concurrency(concurrency).build()).build();
        try (Binomic binomic = Binomic.builder().config(config).handle(task(queue), handler).build().start()) {
            binomic.startWorker();
            System.out.println("ready");
            if (mode.equals("footprint")) {
                allRunning.await();
                reportFootprint();
            }
            // Bench ends this process when it has what it measures; until then, keep working.
            new CountDownLatch(1).await();
        }
    }

    /** The tracked task of the result-latency measurement: the worker returns its argument. */
    public static Task<Long, Long> resultTask(String queue) {
        return Task.builder("bench-result", Long.class, Long.class).queue(queue).build();
    }

    private static void runResultWorker(String url, String queue, int concurrency) throws InterruptedException {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(url)
                .worker(WorkerConfig.builder().queues(queue).concurrency(concurrency).build()).build();
        try (Binomic binomic = Binomic.builder().config(config).handle(resultTask(queue), n -> n).build().start()) {
            binomic.startWorker();
            System.out.println("ready");
            new CountDownLatch(1).await();
        }
    }

    private static void warmUp(String url, String queue, int concurrency) throws InterruptedException {
        Task<Long, Void> task = task(queue);
        BinomicConfig config = BinomicConfig.builder().brokerUrl(url)
                .worker(WorkerConfig.builder().queues(queue).concurrency(concurrency).build()).build();
        try (Binomic binomic = Binomic.builder().config(config).handle(task, submitted -> null).build().start()) {
            binomic.submitAll(task, Collections.nCopies(WARMUP_MESSAGES, 0L));
            binomic.startWorker();
            for (QueueStats s = binomic.queueStats(queue); s.ready() + s.pending() > 0; s = binomic.queueStats(queue)) {
                Thread.sleep(10);
            }
        }
    }

    private static TaskHandler<Long, Void> drain() {
        AtomicBoolean first = new AtomicBoolean(true);
        return submitted -> {
            if (first.get() && first.compareAndSet(true, false)) {
                System.out.println("first-start " + nowMicros());
            }
            return null;
        };
    }

    private static TaskHandler<Long, Void> latency(int expected, int warmup) {
        long[] micros = new long[expected];
        AtomicInteger arrived = new AtomicInteger();
        return submitted -> {
            long latency = nowMicros() - submitted;
            int i = arrived.getAndIncrement();
            if (i < expected) {
                micros[i] = latency;
            }
            if (i == expected - 1) {
                // Arrivals are counted before the store of a concurrent handler may land: give
                // those stores a moment (the submitter paces at 1 ms, so there are few in flight).
                Thread.sleep(50);
                long[] measured = Arrays.copyOfRange(micros, warmup, expected);
                Arrays.sort(measured);
                System.out.printf("latency %d %d %d %d%n", percentile(measured, 0.50), percentile(measured, 0.99),
                        percentile(measured, 0.999), measured[measured.length - 1]);
            }
            return null;
        };
    }

    private static long percentile(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }

    private static TaskHandler<Long, Void> footprint(int expected, CountDownLatch allRunning) {
        AtomicInteger started = new AtomicInteger();
        return submitted -> {
            if (started.incrementAndGet() == expected) {
                allRunning.countDown();
            }
            Thread.sleep(SLEEP);
            return null;
        };
    }

    /**
     * Peak heap is the sum of each heap pool's peak (an upper bound: pools peak at different
     * times); live heap is what a full GC leaves while every task still sleeps.
     */
    private static void reportFootprint() throws IOException {
        long peakHeap = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                peakHeap += pool.getPeakUsage().getUsed();
            }
        }
        System.gc();
        long liveHeap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        String status = Files.readString(Path.of("/proc/self/status"));
        System.out.printf("footprint %d %d %d %d%n", peakHeap, liveHeap, procKilobytes(status, "VmRSS") * 1024,
                procKilobytes(status, "VmHWM") * 1024);
    }

    private static long procKilobytes(String status, String field) {
        return status.lines().filter(l -> l.startsWith(field + ":")).findFirst()
                .map(l -> Long.parseLong(l.replaceAll("[^0-9]", ""))).orElse(0L);
    }
}

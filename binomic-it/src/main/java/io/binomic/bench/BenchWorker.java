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
import java.util.concurrent.atomic.AtomicLong;

/**
 * The worker process of the benchmark: one JVM running one Binomic worker on the bench queue, as
 * a deployment would. It reports to {@link Bench} through lines on standard output:
 * {@code ready}; in {@code drain} mode {@code first-start <epoch µs>}; in {@code latency} mode
 * {@code latency <p50> <p99> <p99.9> <max> <GC pauses> <their total> <the longest>} (µs; the pauses
 * of the measured window, at the MXBeans' millisecond resolution); in {@code footprint} mode the line
 * {@link #reportFootprint} describes.
 *
 * <p>Arguments: redis URL, queue, mode, concurrency, expected messages, warm-up messages
 * (latency mode: the first arrivals that are not counted), and {@code warm} or {@code cold}.
 * A warm worker first drains {@value #WARMUP_MESSAGES} messages of a queue of its own through
 * the same code, so that the JIT compilers have done most of their work before it is measured:
 * on two cores a fresh JVM otherwise spends seconds of CPU compiling while it drains.
 */
public final class BenchWorker {
    /**
     * How long each footprint task sleeps: 5 s, or {@code -Dbench.sleepSeconds} (longer than it takes to
     * start them all, so that they all sleep at once when measured).
     */
    static final Duration SLEEP = Duration.ofSeconds(Long.getLong("bench.sleepSeconds", 5));
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
        HeapPeak heapPeak = mode.equals("footprint") ? new HeapPeak() : null;
        try (Binomic binomic = Binomic.builder().config(config).handle(task(queue), handler).build().start()) {
            long liveBefore = 0;
            if (heapPeak != null) {
                System.gc();
                liveBefore = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
            }
            binomic.startWorker();
            System.out.println("ready");
            if (heapPeak != null) {
                allRunning.await();
                reportFootprint(heapPeak, liveBefore);
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

    /** The argument of the one job whose start a drain reports on its own ({@code marked-start <epoch µs> <starts before it>}). */
    static final long MARKED = Long.MIN_VALUE;

    /**
     * A drain's handler. It also prints {@code counts <starts> <late give-backs>} every 200 ms: the
     * jobs this JVM started, and the starts it gave back because it woke, or reached the handler, too
     * late for them (the worker's debug lines, counted here), so that the bench can say which JVM lost starts.
     */
    private static TaskHandler<Long, Void> drain() {
        AtomicBoolean first = new AtomicBoolean(true);
        AtomicLong starts = new AtomicLong();
        AtomicLong late = countLateStarts();
        Thread.ofPlatform().daemon().name("bench-counts").start(() -> {
            try {
                while (true) {
                    Thread.sleep(200);
                    System.out.println("counts " + starts.get() + " " + late.get());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        return submitted -> {
            long started = starts.getAndIncrement();
            if (first.get() && first.compareAndSet(true, false)) {
                System.out.println("first-start " + nowMicros());
            }
            if (submitted == MARKED) {
                System.out.println("marked-start " + nowMicros() + " " + started);
            }
            return null;
        };
    }

    /** Counts the worker's "too late" lines, of a late wake or a late hand-off to the handler (debug, not printed). */
    private static AtomicLong countLateStarts() {
        AtomicLong late = new AtomicLong();
        java.util.logging.Logger dispatcher = java.util.logging.Logger.getLogger("io.binomic.core.internal.worker.Dispatcher");
        dispatcher.setLevel(java.util.logging.Level.FINE);
        dispatcher.setUseParentHandlers(false);
        dispatcher.addHandler(new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord record) {
                if (record.getMessage() != null && record.getMessage().contains("too late")) {
                    late.incrementAndGet();
                } else if (record.getLevel().intValue() > java.util.logging.Level.FINE.intValue()) {
                    System.err.println(record.getLevel() + " " + record.getMessage());
                }
            }

            @Override
            public void flush() { }

            @Override
            public void close() { }
        });
        KEEP.add(dispatcher); // JUL holds loggers weakly: a collected one would lose its level and handler
        return late;
    }

    private static final java.util.List<Object> KEEP = new java.util.concurrent.CopyOnWriteArrayList<>();

    private static TaskHandler<Long, Void> latency(int expected, int warmup) {
        long[] micros = new long[expected];
        AtomicInteger arrived = new AtomicInteger();
        GcPauses pauses = new GcPauses();
        return submitted -> {
            long latency = nowMicros() - submitted;
            int i = arrived.getAndIncrement();
            if (i < expected) {
                micros[i] = latency;
            }
            if (i == warmup) {
                pauses.start(); // the measured window: GC pauses from the first counted arrival on
            }
            if (i == expected - 1) {
                // Arrivals are counted before the store of a concurrent handler may land: give
                // those stores a moment (the submitter paces at 1 ms, so there are few in flight).
                Thread.sleep(50);
                long[] measured = Arrays.copyOfRange(micros, warmup, expected);
                Arrays.sort(measured);
                System.out.printf("latency %d %d %d %d %d %d %d%n", percentile(measured, 0.50), percentile(measured, 0.99),
                        percentile(measured, 0.999), measured[measured.length - 1], pauses.count(), pauses.totalMicros(),
                        pauses.maxMicros());
            }
            return null;
        };
    }

    /**
     * The worker JVM's stop-the-world GC pauses over a window, from the collectors' notifications: G1's
     * young and full collections are pauses (its "Concurrent GC" bean is not); ZGC reports its pauses
     * on beans of their own ("ZGC Minor Pauses", "ZGC Major Pauses"), its cycles ("... Cycles") are concurrent.
     */
    static final class GcPauses {
        private final java.util.concurrent.atomic.AtomicLong count = new java.util.concurrent.atomic.AtomicLong();
        private final java.util.concurrent.atomic.AtomicLong totalMicros = new java.util.concurrent.atomic.AtomicLong();
        private final java.util.concurrent.atomic.AtomicLong maxMicros = new java.util.concurrent.atomic.AtomicLong();
        private volatile boolean counting;

        GcPauses() {
            for (java.lang.management.GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
                String name = gc.getName();
                if (name.contains("Concurrent") || name.contains("Cycles")) {
                    continue;
                }
                ((javax.management.NotificationEmitter) gc).addNotificationListener((notification, handback) -> {
                    if (!counting) {
                        return;
                    }
                    var info = com.sun.management.GarbageCollectionNotificationInfo.from(
                            (javax.management.openmbean.CompositeData) notification.getUserData());
                    long micros = info.getGcInfo().getDuration() * 1000; // the MXBean reports whole milliseconds
                    count.incrementAndGet();
                    totalMicros.addAndGet(micros);
                    maxMicros.accumulateAndGet(micros, Math::max);
                }, n -> n.getType().equals(com.sun.management.GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION), null);
            }
        }

        void start() {
            counting = true;
        }

        long count() {
            return count.get();
        }

        long totalMicros() {
            return totalMicros.get();
        }

        long maxMicros() {
            return maxMicros.get();
        }
    }

    private static long percentile(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }

    /** Footprint mode: how many have started and ended, and when the first and the last started. */
    private static final AtomicInteger FOOTPRINT_STARTED = new AtomicInteger();
    private static final AtomicInteger FOOTPRINT_ENDED = new AtomicInteger();
    private static volatile long firstStartNanos;
    private static volatile long lastStartNanos;

    private static TaskHandler<Long, Void> footprint(int expected, CountDownLatch allRunning) {
        return submitted -> {
            int n = FOOTPRINT_STARTED.incrementAndGet();
            if (n == 1) {
                firstStartNanos = System.nanoTime();
            }
            if (n == expected) {
                lastStartNanos = System.nanoTime();
                allRunning.countDown();
            }
            try {
                Thread.sleep(SLEEP);
            } finally {
                FOOTPRINT_ENDED.incrementAndGet();
            }
            return null;
        };
    }

    /**
     * The heap's true peak: the largest occupancy any collection found when it began (the sum of the
     * heap pools' usage before that GC), the moment the saw tooth turns; and the stop-the-world time.
     * The pools' own peaks, summed, overstate it (each pool peaks at a different time).
     */
    static final class HeapPeak {
        private final java.util.Set<String> heapPools = new java.util.HashSet<>();
        private final java.util.concurrent.atomic.AtomicLong peakBeforeGc = new java.util.concurrent.atomic.AtomicLong();
        private final java.util.concurrent.atomic.AtomicLong collections = new java.util.concurrent.atomic.AtomicLong();
        private final java.util.concurrent.atomic.AtomicLong pauseMillis = new java.util.concurrent.atomic.AtomicLong();

        HeapPeak() {
            for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
                if (pool.getType() == MemoryType.HEAP) {
                    heapPools.add(pool.getName());
                }
            }
            for (java.lang.management.GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
                boolean pause = !gc.getName().contains("Concurrent") && !gc.getName().contains("Cycles");
                ((javax.management.NotificationEmitter) gc).addNotificationListener((notification, handback) -> {
                    var info = com.sun.management.GarbageCollectionNotificationInfo.from(
                            (javax.management.openmbean.CompositeData) notification.getUserData());
                    long before = 0;
                    for (var e : info.getGcInfo().getMemoryUsageBeforeGc().entrySet()) {
                        if (heapPools.contains(e.getKey())) {
                            before += e.getValue().getUsed();
                        }
                    }
                    peakBeforeGc.accumulateAndGet(before, Math::max);
                    if (pause) {
                        collections.incrementAndGet();
                        pauseMillis.addAndGet(info.getGcInfo().getDuration());
                    }
                }, n -> n.getType().equals(com.sun.management.GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION), null);
            }
        }

        long peak() {
            return Math.max(peakBeforeGc.get(), ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
    }

    /**
     * Reports, once every task has started: {@code footprint <sum of the pools' peaks> <live heap>
     * <RSS> <peak RSS> <true peak heap> <live heap before any task> <tasks sleeping when measured>
     * <first to last start, µs> <GC pauses> <GC pause time, ms>}. Live heap is what a full GC leaves
     * while the tasks sleep; with {@code -Dbench.histogram=FILE} the class histogram of that moment
     * (jcmd GC.class_histogram) is written to FILE first.
     */
    private static void reportFootprint(HeapPeak heapPeak, long liveBefore) throws Exception {
        long sleeping = FOOTPRINT_STARTED.get() - FOOTPRINT_ENDED.get();
        long peakHeap = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                peakHeap += pool.getPeakUsage().getUsed();
            }
        }
        long truePeak = heapPeak.peak();
        long collections = heapPeak.collections.get();
        long pauseMillis = heapPeak.pauseMillis.get();
        String histogram = System.getProperty("bench.histogram", "");
        if (!histogram.isBlank()) {
            Object text = ManagementFactory.getPlatformMBeanServer().invoke(
                    new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                    new Object[] {new String[0]}, new String[] {String[].class.getName()});
            Files.writeString(Path.of(histogram), "sleeping " + (FOOTPRINT_STARTED.get() - FOOTPRINT_ENDED.get()) + "\n" + text);
        }
        System.gc();
        long liveHeap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        String status = Files.readString(Path.of("/proc/self/status"));
        System.out.printf("footprint %d %d %d %d %d %d %d %d %d %d%n", peakHeap, liveHeap, procKilobytes(status, "VmRSS") * 1024,
                procKilobytes(status, "VmHWM") * 1024, truePeak, liveBefore, sleeping,
                (lastStartNanos - firstStartNanos) / 1000, collections, pauseMillis);
    }

    private static long procKilobytes(String status, String field) {
        return status.lines().filter(l -> l.startsWith(field + ":")).findFirst()
                .map(l -> Long.parseLong(l.replaceAll("[^0-9]", ""))).orElse(0L);
    }
}

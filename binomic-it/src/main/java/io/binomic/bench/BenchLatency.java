package io.binomic.bench;

import static io.binomic.bench.BenchContext.submitOnly;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * What a caller waits: submit to handler start at a paced rate, measured by a warmed worker JVM,
 * against the bare stack's floor at the same rate; and submit to result of a tracked task.
 */
final class BenchLatency {
    static final int LATENCY_RATE = 1000;
    static final int LATENCY_SECONDS = 10;
    private static final int LATENCY_WARMUP = LATENCY_RATE;
    private static final int LATENCY_CONCURRENCY = 100;

    private final BenchContext bench;

    BenchLatency(BenchContext bench) {
        this.bench = bench;
    }

    void latency(int run, Map<String, Double> r) throws Exception {
        latency(run, r, "latency_", LATENCY_RATE, 1, List.of());
    }

    /**
     * The latency targets alone ({@code -Dbench.only=latency}): submit to handler start at each
     * rate of {@code bench.latencyRates} (default 1000 and 10000 submits/s), each with the worker on G1
     * and on {@code bench.gcOptions} (default {@code -XX:+UseZGC}), the order alternating between runs.
     * {@code bench.latencyProducers} (default: one thread per 2,500/s) threads share one client, as an
     * application's request threads would; each submits one message at a time.
     */
    void latencyRates(int run, Map<String, Double> r) throws Exception {
        List<String> other = Arrays.stream(System.getProperty("bench.gcOptions", "-XX:+UseZGC").split(" "))
                .filter(o -> !o.isBlank()).toList();
        List<Boolean> order = run % 2 == 1 ? List.of(false, true) : List.of(true, false);
        for (String rateText : System.getProperty("bench.latencyRates", "1000,10000").split(",")) {
            int rate = Integer.parseInt(rateText.strip());
            int producers = Integer.getInteger("bench.latencyProducers", 0);
            producers = producers > 0 ? producers : Math.max(1, (rate + 2499) / 2500);
            for (boolean useOther : order) {
                latency(run, r, "lat_" + rate + (useOther ? "_other_" : "_g1_"), rate, producers, useOther ? other : List.of());
            }
            baselineLatency(run, r, "lat_" + rate + "_baseline_", rate, producers, "latency");
            baselineLatency(run, r, "lat_" + rate + "_baseline_vthread_", rate, producers, "latency-vthread");
        }
    }

    /**
     * The stack's floor at the same rate ({@link BenchBaseline#latency}): bare Redisson, one {@code XADD}
     * per submit from the same number of threads, read by one {@code XREADGROUP BLOCK} loop in a warmed
     * JVM (G1) that takes the time where it reads, with no hand-off to a handler thread; with
     * {@code latency-vthread}, where a virtual thread started per entry (the design's hand-off) begins.
     */
    private void baselineLatency(int run, Map<String, Double> r, String prefix, int rate, int producers, String mode) throws Exception {
        bench.redis.flushAll();
        String stream = "baseline:" + bench.nextQueue();
        int warmup = rate;
        int total = warmup + rate * LATENCY_SECONDS;
        org.redisson.api.RedissonClient producer = org.redisson.Redisson.create(BenchBaseline.redissonConfig(bench.redis.url()));
        try (WorkerProcess worker = WorkerProcess.startBaseline(bench, stream, total, mode, warmup, run)) {
            Map<byte[], byte[]> template = BenchBaseline.entryFields("baseline");
            long end = pace(rate, producers, total, () -> BenchBaseline.xaddOne(producer, stream, template), null, null);
            String[] micros = worker.awaitLine("latency", 60).split(" ");
            r.put(prefix + "achieved_per_s", (double) rate * LATENCY_SECONDS / ((end - paceStart) / 1e9 - 1));
            r.put(prefix + "p50_ms", Long.parseLong(micros[1]) / 1e3);
            r.put(prefix + "p99_ms", Long.parseLong(micros[2]) / 1e3);
            r.put(prefix + "p999_ms", Long.parseLong(micros[3]) / 1e3);
            r.put(prefix + "max_ms", Long.parseLong(micros[4]) / 1e3);
        } finally {
            producer.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }

    private long paceStart;

    /**
     * Calls {@code submit} {@code total} times at {@code rate}/s from {@code producers} threads (each its
     * share of the schedule, one call at a time); records per call how late it began against the
     * schedule and how long it took, when given arrays. Returns when the last call returned (nanoTime).
     */
    private long pace(int rate, int producers, int total, Runnable submit, long[] lateNanos, long[] submitNanos)
            throws InterruptedException {
        long interval = TimeUnit.SECONDS.toNanos(1) / rate;
        long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(10);
        paceStart = start;
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int first = p;
            threads.add(Thread.ofPlatform().name("bench-producer-" + p).start(() -> {
                for (int i = first; i < total; i += producers) {
                    long due = start + i * interval;
                    for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
                        LockSupport.parkNanos(wait);
                    }
                    long before = System.nanoTime();
                    submit.run();
                    if (lateNanos != null) {
                        lateNanos[i] = before - due;
                        submitNanos[i] = System.nanoTime() - before;
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        return System.nanoTime();
    }

    /**
     * Submits at {@code rate}/s for {@value #LATENCY_SECONDS} s (after 1 s of warm-up) from
     * {@code producers} threads, to a warmed worker JVM, which measures submit to handler start.
     * Besides the worker's percentiles: the rate the producers achieved, how late against their
     * schedule they submitted, how long one {@code submit} took, and the worker's GC pauses.
     */
    void latency(int run, Map<String, Double> r, String prefix, int rate, int producers, List<String> jvmOptions)
            throws Exception {
        bench.redis.flushAll();
        String queue = bench.nextQueue();
        int warmup = rate;
        int total = warmup + rate * LATENCY_SECONDS;
        long[] submitNanos = new long[total];
        long[] lateNanos = new long[total];
        Task<Long, Void> task = submitOnly(queue);
        try (Binomic client = bench.client(task);
             WorkerProcess worker = WorkerProcess.start(bench, queue, "latency", LATENCY_CONCURRENCY, total, warmup, true, run, jvmOptions)) {
            long end = pace(rate, producers, total, () -> client.submit(task, BenchWorker.nowMicros()), lateNanos, submitNanos);
            long measuredFrom = paceStart + warmup * (TimeUnit.SECONDS.toNanos(1) / rate);
            String[] micros = worker.awaitLine("latency", 60).split(" ");
            r.put(prefix + "rate", (double) rate);
            r.put(prefix + "producers", (double) producers);
            // Achieved: the measured submits over the time from their first due time to the last one's return.
            r.put(prefix + "achieved_per_s", (total - warmup) / ((end - measuredFrom) / 1e9));
            r.put(prefix + "p50_ms", Long.parseLong(micros[1]) / 1e3);
            r.put(prefix + "p99_ms", Long.parseLong(micros[2]) / 1e3);
            r.put(prefix + "p999_ms", Long.parseLong(micros[3]) / 1e3);
            r.put(prefix + "max_ms", Long.parseLong(micros[4]) / 1e3);
            if (micros.length > 5) {
                r.put(prefix + "gc_pauses", Double.parseDouble(micros[5]));
                r.put(prefix + "gc_pause_total_ms", Long.parseLong(micros[6]) / 1e3);
                r.put(prefix + "gc_pause_max_ms", Long.parseLong(micros[7]) / 1e3);
            }
            if (!prefix.equals("latency_")) {
                long[] late = Arrays.copyOfRange(lateNanos, warmup, total);
                long[] took = Arrays.copyOfRange(submitNanos, warmup, total);
                Arrays.sort(late);
                Arrays.sort(took);
                r.put(prefix + "submit_p50_ms", took[took.length / 2] / 1e6);
                r.put(prefix + "submit_p99_ms", took[(int) (took.length * 0.99)] / 1e6);
                r.put(prefix + "submit_late_p99_ms", late[(int) (late.length * 0.99)] / 1e6);
            }
        }
    }

    /**
     * Submit to result at {@value #LATENCY_RATE} submits/s: a tracked task whose worker (another
     * JVM) returns its argument, awaited through {@code JobHandle.result()} (a pub/sub event, then
     * one read of the record), measured in this process from before {@code submit} to the future's
     * completion.
     */
    void resultLatency(int run, Map<String, Double> r) throws Exception {
        bench.redis.flushAll();
        String queue = bench.nextQueue();
        int total = LATENCY_WARMUP + LATENCY_RATE * LATENCY_SECONDS;
        Task<Long, Long> task = BenchWorker.resultTask(queue);
        long[] nanos = new long[total];
        CountDownLatch done = new CountDownLatch(total);
        try (Binomic client = Binomic.builder().config(BinomicConfig.builder().brokerUrl(bench.redis.url()).build()).build().start();
             WorkerProcess _ = WorkerProcess.start(bench, queue, "result", LATENCY_CONCURRENCY, total, LATENCY_WARMUP, true, run)) {
            long interval = TimeUnit.SECONDS.toNanos(1) / LATENCY_RATE;
            long start = System.nanoTime();
            for (int i = 0; i < total; i++) {
                long due = start + i * interval;
                for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
                    LockSupport.parkNanos(wait);
                }
                int n = i;
                long submitted = System.nanoTime();
                client.submit(task, (long) i).result().whenComplete((value, error) -> {
                    nanos[n] = error == null && value == n ? System.nanoTime() - submitted : Long.MAX_VALUE;
                    done.countDown();
                });
            }
            if (!done.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("only " + (total - done.getCount()) + " of " + total + " results arrived");
            }
        }
        long[] measured = Arrays.copyOfRange(nanos, LATENCY_WARMUP, total);
        Arrays.sort(measured);
        if (measured[measured.length - 1] == Long.MAX_VALUE) {
            throw new IllegalStateException("a result was wrong or failed");
        }
        r.put("result_latency_p50_ms", measured[measured.length / 2] / 1e6);
        r.put("result_latency_p99_ms", measured[(int) (measured.length * 0.99)] / 1e6);
    }
}

package io.binomic.bench;

import io.binomic.api.BinomicConfig;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.DoublePredicate;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;

/**
 * The benchmark suite ({@code ./mvnw -q -Pbench verify}): starts its own redis-server, then runs
 * every measurement {@code bench.runs} times (default 3), printing one JSON line per run and a
 * table of medians against the targets. Each run:
 * <ol>
 *   <li>bulk enqueue of {@code bench.messages} no-op messages through {@link Binomic#submitAll};</li>
 *   <li>drain of those by one worker process (a separate JVM, {@link BenchWorker}), first handler
 *       start to last ack (observed as an empty queue: nothing ready, nothing pending); once by a
 *       fresh JVM, then again (after another enqueue) by a warmed one;</li>
 *   <li>latency at 1000 submits/s for 10 s (after 1 s of warm-up) from submit to handler start,
 *       with a warmed worker JVM;</li>
 *   <li>footprint: {@code bench.sleepers} tasks sleeping 5 s at once in one worker process;</li>
 *   <li>Redis CPU per task and memory per queued message, from INFO, around 1 and 2;</li>
 *   <li>the ceiling: {@code redis-benchmark -q -P 16 XADD} against the same server.</li>
 * </ol>
 * {@code -Dbench.jfr=<dir>} records every JVM of the run with Flight Recorder into that directory.
 */
public final class Bench {
    private static final int LATENCY_RATE = 1000;
    private static final int LATENCY_SECONDS = 10;
    private static final int LATENCY_WARMUP = LATENCY_RATE;
    private static final int LATENCY_CONCURRENCY = 100;
    private static final long EMPTY_POLL_MILLIS = 2;

    private final BenchRedis redis;
    private final int messages = Integer.getInteger("bench.messages", 200_000);
    private final int drainConcurrency = Integer.getInteger("bench.drainConcurrency", 1000);
    private final int sleepers = Integer.getInteger("bench.sleepers", 100_000);
    private final Path jfr = System.getProperty("bench.jfr", "").isBlank() ? null : Path.of(System.getProperty("bench.jfr"));
    private int queueNumber;

    private Bench(BenchRedis redis) {
        this.redis = redis;
    }

    public static void main(String[] args) throws Exception {
        java.util.logging.Logger.getLogger("").setLevel(java.util.logging.Level.WARNING);
        int runs = Integer.getInteger("bench.runs", 3);
        if (args.length == 1 && args[0].equals("priorities")) { // only the priorities measurement (java ... Bench priorities)
            try (BenchRedis redis = BenchRedis.start()) {
                Bench bench = new Bench(redis);
                for (int run = 1; run <= runs; run++) {
                    Map<String, Double> result = new LinkedHashMap<>();
                    bench.priorities(run, result);
                    System.out.println(json(run, result));
                }
            }
            return;
        }
        if ("soak".equals(System.getProperty("bench.only"))) { // a worker's resident memory over minutes at a steady rate, and the drain after
            BenchSoak.run();
            return;
        }
        if ("start".equals(System.getProperty("bench.only"))) { // how long a worker JVM takes to report RUNNING: jlink image, AOT cache or not
            BenchWorkerStart.run();
            return;
        }
        try (BenchRedis redis = BenchRedis.start()) {
            Bench bench = new Bench(redis);
            Recording recording = bench.jfr == null ? null : startRecording();
            System.out.println(bench.machine());
            bench.warmUp();
            List<Map<String, Double>> results = new ArrayList<>();
            for (int run = 1; run <= runs; run++) {
                Map<String, Double> result = bench.run(run);
                results.add(result);
                System.out.println(json(run, result));
            }
            if (recording != null) {
                Files.createDirectories(bench.jfr);
                recording.dump(bench.jfr.resolve("bench-client.jfr"));
            }
            System.out.println();
            System.out.print(bench.table(results));
        }
    }

    private static Recording startRecording() throws IOException, java.text.ParseException {
        Recording recording = new Recording(Configuration.getConfiguration("profile"));
        recording.start();
        return recording;
    }

    private String machine() throws IOException {
        String cpu = Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                .findFirst().map(l -> l.substring(l.indexOf(':') + 1).strip()).orElse("?");
        return String.format(Locale.ROOT, "{\"machine\":{\"nproc\":%d,\"cpu\":\"%s\",\"jdk\":\"%s\",\"redis\":\"%s\",\"load1\":%.2f}}",
                Runtime.getRuntime().availableProcessors(), cpu, System.getProperty("java.vm.version"), redis.version(),
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }

    /**
     * Compiles the client's enqueue paths (bulk, and one message at a time as the latency
     * measurement submits) before the first measured run.
     */
    private void warmUp() {
        redis.flushAll();
        org.redisson.api.RedissonClient producer = org.redisson.Redisson.create(BenchBaseline.redissonConfig(redis.url()));
        try {
            BenchBaseline.createGroup(producer, "baseline:warmup");
            for (int i = 0; i < 3; i++) {
                BenchBaseline.xadd(producer, "baseline:warmup", "baseline", messages / 10);
            }
        } finally {
            producer.shutdown(0, 2, TimeUnit.SECONDS);
        }
        redis.flushAll();
        Task<Long, Void> task = submitOnly(nextQueue());
        try (Binomic client = client(task)) {
            for (int i = 0; i < 3; i++) {
                client.submitAll(task, Collections.nCopies(messages / 10, 0L));
            }
            for (int i = 0; i < LATENCY_RATE * LATENCY_SECONDS; i++) {
                client.submit(task, BenchWorker.nowMicros());
            }
        }
        redis.flushAll();
    }

    private Map<String, Double> run(int run) throws Exception {
        Map<String, Double> r = new LinkedHashMap<>();
        r.put("load1", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        if ("flow".equals(System.getProperty("bench.only"))) {
            flowControl(r);
            return r;
        }
        if ("limits".equals(System.getProperty("bench.only"))) {
            limits(run, r);
            return r;
        }
        if ("prio".equals(System.getProperty("bench.only"))) { // the ten-level drain against one level, and a top-priority job behind a backlog
            priorities(run, r);
            priorityJump(run, r);
            return r;
        }
        if ("outbox".equals(System.getProperty("bench.only"))) { // the JDBC outbox: submit, relay, commit to start
            BenchOutbox.measure(redis, nextQueue(), r);
            return r;
        }
        if ("batches".equals(System.getProperty("bench.only"))) { // batches and workflows against plain and tracked jobs
            BenchBatches.measure(redis, this::nextQueue, r);
            return r;
        }
        if ("activity".equals(System.getProperty("bench.only"))) { // the Redis CPU the dashboard's activity writes cost per task
            BenchActivity.measure(redis, nextQueue(), r);
            return r;
        }
        if ("gc".equals(System.getProperty("bench.only"))) { // whether the workers' GC (G1 against -Dbench.gcOptions) changes drain rate and footprint
            gc(run, r);
            return r;
        }
        if ("latency".equals(System.getProperty("bench.only"))) { // submit-to-start latency at 1,000 and 10,000/s, G1 and ZGC: what a caller waits
            latencyRates(run, r);
            return r;
        }
        if ("footprint".equals(System.getProperty("bench.only"))) { // the smallest -Xmx that holds many sleeping tasks: a worker's memory per task
            footprintHeaps(run, r);
            return r;
        }
        if ("baseline".equals(System.getProperty("bench.only"))) { // the bare-Redisson baseline alone: the ceiling Binomic's rates are judged against
            baseline(run, r);
            return r;
        }
        if ("compare".equals(System.getProperty("bench.only"))) { // one worker lever off and on against the same baseline, to see what it buys
            compare(run, r);
            baseline(run, r);
            r.put("ratio_cmp_a_to_baseline", r.get("cmp_a_tasks_per_s") / r.get("baseline_drain_tasks_per_s"));
            r.put("ratio_cmp_b_to_baseline", r.get("cmp_b_tasks_per_s") / r.get("baseline_drain_tasks_per_s"));
            return r;
        }
        if ("drain".equals(System.getProperty("bench.only"))) { // the fresh and warmed drains and the baseline, without the slower measurements
            enqueueAndDrain(run, r);
            r.put("drain_fresh_to_warm", r.get("drain_tasks_per_s") / r.get("drain_warm_tasks_per_s"));
            baseline(run, r);
            ratios(r);
            return r;
        }
        enqueueAndDrain(run, r);
        r.put("drain_fresh_to_warm", r.get("drain_tasks_per_s") / r.get("drain_warm_tasks_per_s"));
        baseline(run, r);
        ratios(r);
        priorities(run, r);
        limits(run, r);
        latency(run, r);
        resultLatency(run, r);
        footprint(run, r);
        flowControl(r);
        redis.flushAll();
        r.put("ceiling_xadd_per_s", redis.xaddCeiling(messages));
        return r;
    }

    private void enqueueAndDrain(int run, Map<String, Double> r) throws Exception {
        redis.flushAll();
        String queue = nextQueue();
        List<Long> arguments = Collections.nCopies(messages, 0L);
        Task<Long, Void> task = submitOnly(queue);
        try (Binomic client = client(task)) {
            String stream = "binomic:{" + queue + "}:stream";
            long streamBytes0 = redis.memoryUsage(stream);
            long memory0 = redis.usedMemory();
            double cpu0 = redis.cpuSeconds();
            long clientCpu0 = processCpuNanos();
            long start = System.nanoTime();
            client.submitAll(task, arguments);
            long enqueueNanos = System.nanoTime() - start;
            long clientCpu1 = processCpuNanos();
            double cpu1 = redis.cpuSeconds();
            long memory1 = redis.usedMemory();
            r.put("enqueue_msgs_per_s", messages / (enqueueNanos / 1e9));
            r.put("enqueue_redis_cpu_us_per_msg", (cpu1 - cpu0) * 1e6 / messages);
            r.put("enqueue_client_cpu_us_per_msg", (clientCpu1 - clientCpu0) / 1e3 / messages);
            r.put("redis_bytes_per_queued_msg", (double) (memory1 - memory0) / messages);

            long fetches0 = redis.calls("xreadgroup");
            long acks0 = redis.calls("xack");
            drain(client, queue, false, "drain_", List.of(), run, r);
            double cpu2 = redis.cpuSeconds();
            // Each fetch is one XREADGROUP; each ack batch one pipeline of one XACK and one XDEL.
            r.put("drain_msgs_per_fetch", (double) messages / (redis.calls("xreadgroup") - fetches0));
            r.put("drain_msgs_per_ack_batch", (double) messages / (redis.calls("xack") - acks0));
            r.put("drain_redis_cpu_us_per_task", (cpu2 - cpu1) * 1e6 / messages);
            r.put("redis_cpu_us_per_task", r.get("enqueue_redis_cpu_us_per_msg") + r.get("drain_redis_cpu_us_per_task"));
            r.put("left_entries_after_drain", (double) redis.streamLength(stream));
            // The stream's own growth is what completed tasks leave behind; used_memory also moves
            // with client buffers and the script cache, which do not grow with the number of tasks.
            long streamGrowth = redis.memoryUsage(stream) - streamBytes0;
            r.put("left_stream_bytes_after_drain", (double) streamGrowth);
            r.put("left_stream_bytes_per_task", (double) streamGrowth / messages);
            r.put("left_used_memory_after_drain", (double) (redis.usedMemory() - memory0));

            client.submitAll(task, arguments);
            drain(client, queue, true, "drain_warm_", List.of(), run, r);
        }
    }

    /**
     * A worker lever before and after in the same run: two warmed drains of one queue, {@code cmp_a_}
     * with the worker JVM's default options and {@code cmp_b_} with {@code -Dbench.compareOptions}
     * added (e.g. {@code -XX:+UseParallelGC}); the order alternates between runs, so
     * that a load drifting over the run favours neither.
     */
    private void compare(int run, Map<String, Double> r) throws Exception {
        twoWarmedDrains(run, r, jvmOptions("bench.compareOptions", ""), "cmp_a_", "cmp_b_");
        r.put("ratio_cmp_b_to_a_tasks_per_s", r.get("cmp_b_tasks_per_s") / r.get("cmp_a_tasks_per_s"));
        r.put("ratio_cmp_b_to_a_worker_cpu", r.get("cmp_b_worker_cpu_us_per_task") / r.get("cmp_a_worker_cpu_us_per_task"));
    }

    /**
     * The bare-Redisson baseline ({@link BenchBaseline}), four times: {@code XACK}+{@code XDEL} per
     * batch, {@code XACK} alone, the least a fenced settlement does ({@code fenced}), and
     * {@code XACK}+{@code XDEL} by a JVM that has just started ({@code xdel-fresh}). Each time: a fresh
     * server state ({@code FLUSHALL}), the pipelined {@code XADD} of {@code bench.messages} entries
     * from this JVM (rate and Redis CPU), then a baseline JVM, warmed but for the last, drains them
     * (tasks/s from its first read to its last ack's reply, Redis CPU and the JVM's CPU over the
     * drain). The XADD rate and its Redis CPU are kept from the first.
     */
    private void baseline(int run, Map<String, Double> r) throws Exception {
        Map<String, String> prefixByMode = new LinkedHashMap<>();
        prefixByMode.put("xdel", "baseline_");
        prefixByMode.put("ack", "baseline_ackonly_");
        prefixByMode.put("fenced", "baseline_fenced_");
        prefixByMode.put("xdel-fresh", "baseline_fresh_");
        prefixByMode.put("fenced-vthread", "baseline_vthread_");
        for (Map.Entry<String, String> variant : prefixByMode.entrySet()) {
            String mode = variant.getKey();
            boolean xdel = mode.equals("xdel");
            redis.flushAll();
            String stream = "baseline:" + nextQueue();
            String prefix = variant.getValue();
            org.redisson.api.RedissonClient producer = org.redisson.Redisson.create(BenchBaseline.redissonConfig(redis.url()));
            try {
                BenchBaseline.createGroup(producer, stream);
                double cpu0 = redis.cpuSeconds();
                long start = System.nanoTime();
                BenchBaseline.xadd(producer, stream, "baseline", messages);
                long nanos = System.nanoTime() - start;
                double cpu1 = redis.cpuSeconds();
                if (xdel) {
                    r.put("baseline_xadd_per_s", messages / (nanos / 1e9));
                    r.put("baseline_xadd_redis_cpu_us_per_msg", (cpu1 - cpu0) * 1e6 / messages);
                }
            } finally {
                producer.shutdown(0, 2, TimeUnit.SECONDS);
            }
            try (WorkerProcess worker = WorkerProcess.startBaseline(this, stream, messages, mode, 0, run)) {
                double cpu2 = redis.cpuSeconds();
                Map<String, Long> usec0 = redis.usecByCommand();
                long workerCpu0 = worker.cpuNanos();
                worker.go();
                long first = Long.parseLong(worker.awaitLine("first-start", 60).split(" ")[1]);
                long done = Long.parseLong(worker.awaitLine("done", 120).split(" ")[1]);
                double cpu3 = redis.cpuSeconds();
                r.put(prefix + "drain_tasks_per_s", messages / ((done - first) / 1e6));
                r.put(prefix + "drain_redis_cpu_us_per_task", (cpu3 - cpu2) * 1e6 / messages);
                r.put(prefix + "drain_worker_cpu_us_per_task", (worker.cpuNanos() - workerCpu0) / 1e3 / messages);
                commandTimes(prefix + "drain_", usec0, r);
            }
            r.put(prefix + "redis_cpu_us_per_task", r.get("baseline_xadd_redis_cpu_us_per_msg") + r.get(prefix + "drain_redis_cpu_us_per_task"));
        }
        // what the stack allows a framework that fences its acks, and a JVM that has just started
        r.put("ratio_baseline_fenced_to_xdel", r.get("baseline_fenced_drain_tasks_per_s") / r.get("baseline_drain_tasks_per_s"));
        r.put("ratio_baseline_fresh_to_warm", r.get("baseline_fresh_drain_tasks_per_s") / r.get("baseline_drain_tasks_per_s"));
        // what the design's one virtual thread per task costs the bare loop by itself
        r.put("ratio_baseline_vthread_to_fenced", r.get("baseline_vthread_drain_tasks_per_s") / r.get("baseline_fenced_drain_tasks_per_s"));
        r.put("ratio_baseline_vthread_to_xdel", r.get("baseline_vthread_drain_tasks_per_s") / r.get("baseline_drain_tasks_per_s"));
    }

    /**
     * Two warmed drains of one queue, the second worker JVM with {@code other} options added; the
     * order alternates between runs, so that a load drifting over the run favours neither. Returns
     * the order (false: the default options first).
     */
    private List<Boolean> twoWarmedDrains(int run, Map<String, Double> r, List<String> other, String defaultPrefix,
                                          String otherPrefix) throws Exception {
        redis.flushAll();
        String queue = nextQueue();
        Task<Long, Void> task = submitOnly(queue);
        List<Boolean> order = run % 2 == 1 ? List.of(false, true) : List.of(true, false);
        try (Binomic client = client(task)) {
            for (boolean useOther : order) {
                client.submitAll(task, Collections.nCopies(messages, 0L));
                drain(client, queue, true, useOther ? otherPrefix : defaultPrefix, useOther ? other : List.of(), run, r);
            }
        }
        return order;
    }

    /** A space-separated list of JVM options from system property {@code name}. */
    private static List<String> jvmOptions(String name, String fallback) {
        return Arrays.stream(System.getProperty(name, fallback).split(" ")).filter(o -> !o.isBlank()).toList();
    }

    /**
     * The worker JVM's garbage collector, to see whether another one pays: the default (G1) against {@code -Dbench.gcOptions}
     * (default {@code -XX:+UseZGC}, generational in JDK 25), each a warmed drain of {@code bench.messages}
     * no-op tasks and the footprint of {@code bench.sleepers} sleeping tasks; the order alternates
     * between runs, so that a load drifting over the run does not favour one.
     */
    private void gc(int run, Map<String, Double> r) throws Exception {
        List<String> other = jvmOptions("bench.gcOptions", "-XX:+UseZGC");
        List<Boolean> order = twoWarmedDrains(run, r, other, "gc_g1_drain_", "gc_other_drain_");
        for (boolean useOther : order) {
            footprint(run, r, useOther ? "gc_other_footprint_" : "gc_g1_footprint_", useOther ? other : List.of());
        }
        r.put("gc_other_to_g1_drain", r.get("gc_other_drain_tasks_per_s") / r.get("gc_g1_drain_tasks_per_s"));
    }

    /** Redis' time per task in each command since {@code usec0} (INFO commandstats), as {@code <prefix>usec_<command>}; 0.05 µs and up. */
    private void commandTimes(String prefix, Map<String, Long> usec0, Map<String, Double> r) {
        redis.usecByCommand().forEach((command, usec) -> {
            double perTask = (double) (usec - usec0.getOrDefault(command, 0L)) / messages;
            if (perTask >= 0.05) {
                r.put(prefix + "usec_" + command, perTask);
            }
        });
    }

    /** Binomic against the baseline of the same run: the targets are ratios to it, so a slower machine does not move them. */
    private static void ratios(Map<String, Double> r) {
        r.put("ratio_enqueue_to_baseline_xadd", r.get("enqueue_msgs_per_s") / r.get("baseline_xadd_per_s"));
        r.put("ratio_drain_warm_to_baseline", r.get("drain_warm_tasks_per_s") / r.get("baseline_drain_tasks_per_s"));
        r.put("ratio_drain_warm_to_baseline_ackonly", r.get("drain_warm_tasks_per_s") / r.get("baseline_ackonly_drain_tasks_per_s"));
        r.put("ratio_drain_fresh_to_baseline", r.get("drain_tasks_per_s") / r.get("baseline_drain_tasks_per_s"));
        r.put("ratio_drain_warm_to_baseline_fenced", r.get("drain_warm_tasks_per_s") / r.get("baseline_fenced_drain_tasks_per_s"));
        r.put("ratio_drain_warm_to_baseline_vthread", r.get("drain_warm_tasks_per_s") / r.get("baseline_vthread_drain_tasks_per_s"));
        r.put("ratio_redis_cpu_to_baseline", r.get("redis_cpu_us_per_task") / r.get("baseline_redis_cpu_us_per_task"));
        r.put("ratio_redis_cpu_warm_to_baseline", (r.get("enqueue_redis_cpu_us_per_msg") + r.get("drain_warm_redis_cpu_us_per_task"))
                / r.get("baseline_redis_cpu_us_per_task"));
    }

    /**
     * One worker process drains the queue; records tasks/s from its first handler start to the
     * last ack, and its CPU per task. A cold worker is a fresh JVM; a warm one has drained a
     * queue of its own first (see {@link BenchWorker}), as a long-running worker has.
     */
    private void drain(Binomic client, String queue, boolean warm, String prefix, List<String> jvmOptions, int run,
                       Map<String, Double> r) throws Exception {
        try (WorkerProcess worker = WorkerProcess.start(this, queue, "drain", drainConcurrency, messages, 0, warm, run, jvmOptions)) {
            // From "ready" (the warm-up's queue drained and closed): misses what the worker drains before this reads INFO.
            double redisCpu0 = redis.cpuSeconds();
            Map<String, Long> usec0 = redis.usecByCommand();
            long firstStart = Long.parseLong(worker.awaitLine("first-start", 60).split(" ")[1]);
            long workerCpu0 = worker.cpuNanos();
            awaitEmpty(client, queue, 120);
            long lastAck = BenchWorker.nowMicros();
            double redisCpu1 = redis.cpuSeconds();
            r.put(prefix + "tasks_per_s", messages / ((lastAck - firstStart) / 1e6));
            r.put(prefix + "worker_cpu_us_per_task", (worker.cpuNanos() - workerCpu0) / 1e3 / messages);
            if (warm) {
                r.put(prefix + "redis_cpu_us_per_task", (redisCpu1 - redisCpu0) * 1e6 / messages);
                commandTimes(prefix, usec0, r);
            }
        }
        r.put("drain_concurrency", (double) drainConcurrency);
    }

    /**
     * Priorities: {@code bench.messages / 2} messages drained by a fresh worker JVM (as the first
     * drain of 2), once all of the default priority (what a queue that uses no priority does, on the
     * unchanged path) and once spread evenly over the ten priorities; measured back to back, so the
     * two are comparable on a loaded machine. Records tasks/s, Redis CPU per task (enqueue, drain) and,
     * from INFO commandstats (which counts the commands scripts run too), fetches per 1000 tasks: the
     * XREADGROUPs without priorities, the fetch scripts (one SMEMBERS each) with them; and settle
     * scripts per 1000 tasks (one XACK each). The client polls the queue's stats every 20 ms.
     */
    private void priorities(int run, Map<String, Double> r) throws Exception {
        int n = messages / 2;
        for (boolean mixed : new boolean[] {false, true}) {
            redis.flushAll();
            String queue = nextQueue();
            Task<Long, Void> task = submitOnly(queue);
            String prefix = mixed ? "prio_mixed_" : "prio_none_";
            try (Binomic client = client(task)) {
                double cpu0 = redis.cpuSeconds();
                if (mixed) {
                    for (int p = io.binomic.api.Priority.MIN; p <= io.binomic.api.Priority.MAX; p++) {
                        client.submitAll(task, Collections.nCopies(n / 10, 0L), io.binomic.api.SubmitOptions.builder().priority(p).build());
                    }
                } else {
                    client.submitAll(task, Collections.nCopies(n, 0L));
                }
                double cpu1 = redis.cpuSeconds();
                long reads0 = redis.calls("xreadgroup");
                long smembers0 = redis.calls("smembers");
                long acks0 = redis.calls("xack");
                Map<String, Long> usec0 = redis.usecByCommand();
                try (WorkerProcess worker = WorkerProcess.start(this, queue, "drain", drainConcurrency, n, 0, false, run)) {
                    long firstStart = Long.parseLong(worker.awaitLine("first-start", 60).split(" ")[1]);
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                    for (QueueStats stats = client.queueStats(queue); stats.ready() > 0 || stats.pending() > 0;
                         stats = client.queueStats(queue)) {
                        if (System.nanoTime() > deadline) {
                            throw new IllegalStateException("queue " + queue + " not drained after 120 s: " + stats);
                        }
                        Thread.sleep(20);
                    }
                    r.put(prefix + "tasks_per_s", n / ((BenchWorker.nowMicros() - firstStart) / 1e6));
                }
                double cpu2 = redis.cpuSeconds();
                redis.usecByCommand().forEach((command, usec) -> {
                    double perTask = (double) (usec - usec0.getOrDefault(command, 0L)) / n;
                    if (perTask >= 0.05) {
                        r.put(prefix + "usec_" + command, perTask);
                    }
                });
                r.put(prefix + "enqueue_redis_cpu_us_per_msg", (cpu1 - cpu0) * 1e6 / n);
                r.put(prefix + "drain_redis_cpu_us_per_task", (cpu2 - cpu1) * 1e6 / n);
                r.put(prefix + "fetches_per_1000_tasks", (mixed ? redis.calls("smembers") - smembers0 : redis.calls("xreadgroup") - reads0)
                        * 1000.0 / n);
                r.put(prefix + "settle_scripts_per_1000_tasks", (redis.calls("xack") - acks0) * 1000.0 / n);
                if (!mixed) {
                    r.put("prio_none_smembers", (double) (redis.calls("smembers") - smembers0));
                }
            }
        }
        r.put("prio_mixed_to_none_drain", r.get("prio_mixed_tasks_per_s") / r.get("prio_none_tasks_per_s"));
        r.put("prio_mixed_to_none_drain_redis_cpu", r.get("prio_mixed_drain_redis_cpu_us_per_task") / r.get("prio_none_drain_redis_cpu_us_per_task"));
    }

    /**
     * A job of the highest priority submitted behind a backlog of {@code bench.prioBacklog} (100,000)
     * jobs of the lowest, once a fresh worker JVM (concurrency {@code bench.drainConcurrency}) is
     * draining them: the jobs the worker started between the submit and its start, and the fetch
     * scripts Redis ran meanwhile (one {@code SMEMBERS} each, plus the worker's paused-state read
     * every 500 ms), and the time from submit to its start.
     */
    private void priorityJump(int run, Map<String, Double> r) throws Exception {
        int backlog = Integer.getInteger("bench.prioBacklog", 100_000);
        redis.flushAll();
        String queue = nextQueue();
        Task<Long, Void> task = submitOnly(queue);
        try (Binomic client = client(task)) {
            client.submitAll(task, Collections.nCopies(backlog, 0L),
                    io.binomic.api.SubmitOptions.builder().priority(io.binomic.api.Priority.MIN).build());
            try (WorkerProcess worker = WorkerProcess.start(this, queue, "drain", drainConcurrency, backlog + 1, 0, false, run)) {
                worker.awaitLine("first-start", 60);
                Thread.sleep(500); // well into the backlog
                long smembers0 = redis.calls("smembers");
                QueueStats before = client.queueStats(queue);
                long submitted = BenchWorker.nowMicros();
                client.submit(task, BenchWorker.MARKED, io.binomic.api.SubmitOptions.builder().priority(io.binomic.api.Priority.MAX).build());
                String[] marked = worker.awaitLine("marked-start", 60).split(" ");
                long fetches = redis.calls("smembers") - smembers0;
                long startedBefore = backlog - before.ready(); // fetched (started or about to) when the job was submitted
                r.put("prio_jump_ms", (Long.parseLong(marked[1]) - submitted) / 1e3);
                r.put("prio_jump_fetch_scripts", (double) fetches);
                r.put("prio_jump_started_between", (double) Math.max(0, Long.parseLong(marked[2]) - startedBefore));
                r.put("prio_jump_backlog_left", (double) client.queueStats(queue).ready());
            }
        }
    }

    /**
     * What rate and concurrency limits cost, set on the queue ({@code Queues.setLimits}), so the
     * worker JVM is the same as in every other drain: {@code bench.messages / 4} messages drained by
     * a fresh worker JVM with no limit, then with a concurrency limit equal to the worker's
     * concurrency (it never binds: what is measured is the admission and release themselves), back to
     * back; records tasks/s, Redis CPU per task and admission scripts per 1000 tasks
     * ({@code -Dbench.limitDrains=false} leaves them out). Then what a rate limit delivers when it
     * binds: {@link #rateLimit} at each rate of {@code bench.limitRates} with each number of worker
     * JVMs of {@code bench.limitWorkers}. Then the per-key rate limits over 10,000 keys and the
     * concurrency limits that bind: {@link BenchLimitsBinding}.
     */
    private void limits(int run, Map<String, Double> r) throws Exception {
        int n = messages / 4;
        if (Boolean.parseBoolean(System.getProperty("bench.limitDrains", "true"))) {
            for (String variant : new String[] {"none", "concurrency"}) {
                redis.flushAll();
                String queue = nextQueue();
                Task<Long, Void> task = submitOnly(queue);
                try (Binomic client = client(task)) {
                    if (variant.equals("concurrency")) {
                        client.queues().setLimits(queue, io.binomic.api.QueueLimits.builder().concurrencyLimit(drainConcurrency).build());
                    }
                    client.submitAll(task, Collections.nCopies(n, 0L));
                    double cpu1 = redis.cpuSeconds();
                    long evals0 = redis.calls("evalsha") + redis.calls("eval");
                    Map<String, Long> usec0 = redis.usecByCommand();
                    try (WorkerProcess worker = WorkerProcess.start(this, queue, "drain", drainConcurrency, n, 0, false, run)) {
                        long firstStart = Long.parseLong(worker.awaitLine("first-start", 60).split(" ")[1]);
                        awaitEmpty(client, queue, 120);
                        r.put("limit_" + variant + "_tasks_per_s", n / ((BenchWorker.nowMicros() - firstStart) / 1e6));
                    }
                    r.put("limit_" + variant + "_drain_redis_cpu_us_per_task", (redis.cpuSeconds() - cpu1) * 1e6 / n);
                    r.put("limit_" + variant + "_scripts_per_1000_tasks", (redis.calls("evalsha") + redis.calls("eval") - evals0) * 1000.0 / n);
                    // where Redis' time went, per task: each command's own (a script's calls counted again inside its evalsha)
                    redis.usecByCommand().forEach((command, usec) -> {
                        double perTask = (double) (usec - usec0.getOrDefault(command, 0L)) / n;
                        if (perTask >= 0.05) {
                            r.put("limit_" + variant + "_usec_" + command, perTask);
                        }
                    });
                }
            }
            r.put("limit_concurrency_to_none_drain", r.get("limit_concurrency_tasks_per_s") / r.get("limit_none_tasks_per_s"));
            r.put("limit_concurrency_to_none_redis_cpu", r.get("limit_concurrency_drain_redis_cpu_us_per_task")
                    / r.get("limit_none_drain_redis_cpu_us_per_task"));
        }
        for (String rate : System.getProperty("bench.limitRates", "100,1000,10000").split(",")) {
            if (rate.isBlank()) {
                continue; // -Dbench.limitRates= : the drains alone
            }
            for (String workers : System.getProperty("bench.limitWorkers", "1,4").split(",")) {
                rateLimit(run, Integer.parseInt(rate.strip()), Integer.parseInt(workers.strip()), r);
            }
        }
        new BenchLimitsBinding(redis, this::nextQueue).measure(r);
    }

    /**
     * What a rate limit of {@code rate}/s set on the queue delivers while it binds: a backlog of
     * {@code rate × (bench.limitSeconds + 4)} no-op messages (default 20 s), drained by {@code workers}
     * fresh worker JVMs (concurrency {@code bench.drainConcurrency} each) started before the submit,
     * the queue paused until the whole backlog is in. The client reads the queue's counts every 100 ms;
     * the steady rate is the jobs done from 2 s after the first one to {@code bench.limitSeconds} later
     * (or to the last sample with jobs still queued, as {@code ..._window_s} says), per second,
     * as {@code limit_rate_<rate>_w<workers>_starts_per_s} and its ratio to the limit; a limit the
     * API refuses is recorded as {@code ..._refused}. Per worker JVM over the same window: the fewest
     * and the most starts per second, and the reserved starts given back for a late wake-up.
     *
     * <p>From {@code bench.limitCapacityFrom} (default 5,000/s) on, the same run is repeated with no
     * limit ({@code ..._unlimited_starts_per_s}: what these JVMs drain on this machine now, its window
     * ending early if the backlog runs out) and the limited rate's share of it
     * ({@code ..._limited_to_unlimited}). An unlimited drain itself below the rate says the row
     * measured the machine, not the limiter.
     */
    private void rateLimit(int run, int rate, int workers, Map<String, Double> r) throws Exception {
        rateLimit(run, rate, workers, true, r);
        if (rate >= Integer.getInteger("bench.limitCapacityFrom", 5000)) {
            rateLimit(run, rate, workers, false, r);
            String prefix = "limit_rate_" + rate + "_w" + workers + "_";
            Double limited = r.get(prefix + "starts_per_s");
            Double unlimited = r.get(prefix + "unlimited_starts_per_s");
            if (limited != null && unlimited != null) {
                r.put(prefix + "limited_to_unlimited", limited / unlimited);
            }
        }
    }

    private void rateLimit(int run, int rate, int workers, boolean limited, Map<String, Double> r) throws Exception {
        int seconds = Integer.getInteger("bench.limitSeconds", 20);
        String prefix = "limit_rate_" + rate + "_w" + workers + (limited ? "_" : "_unlimited_");
        redis.flushAll();
        String queue = nextQueue();
        Task<Long, Void> task = submitOnly(queue);
        int count = rate * (seconds + 4);
        try (Binomic client = client(task)) {
            try {
                if (limited) {
                    client.queues().setLimits(queue, io.binomic.api.QueueLimits.builder()
                            .rateLimit(io.binomic.api.RateLimit.perSecond(rate)).build());
                }
            } catch (IllegalArgumentException e) {
                r.put(prefix + "refused", 1.0);
                return;
            }
            List<WorkerProcess> processes = new ArrayList<>();
            try {
                // paused until the whole backlog is in: a submit slowed by a loaded machine must not eat the backlog
                // before the window, and each JVM (started one after another) is running when the first job starts
                client.queues().pause(queue);
                for (int i = 0; i < workers; i++) {
                    processes.add(WorkerProcess.start(this, queue, "drain", drainConcurrency, count, 0, false, run));
                }
                r.put(prefix + "load1", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
                client.submitAll(task, Collections.nCopies(count, 0L));
                client.queues().resume(queue);
                long first = 0;
                long from = 0;
                long doneFrom = 0;
                long[][] countsFrom = null;
                long last = 0;
                long doneLast = 0;
                long[][] countsLast = null;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds + 60L);
                while (System.nanoTime() < deadline) {
                    QueueStats stats = client.queueStats(queue);
                    long now = System.nanoTime();
                    long done = count - stats.ready() - stats.pending() - stats.delayed();
                    // the backlog may run out first (with no limit, or when the limit delivers more than it): then the window ends at the
                    // last sample that still had work queued
                    boolean ranOut = stats.ready() + stats.delayed() == 0;
                    if (first == 0 && done > 0) {
                        first = now;
                    } else if (first != 0 && from == 0 && now - first >= TimeUnit.SECONDS.toNanos(2)) {
                        if (ranOut) {
                            r.put(prefix + "ran_out", 1.0); // drained within 2 s: far above the limit
                            return;
                        }
                        from = now;
                        doneFrom = done;
                        countsFrom = counts(processes);
                    } else if (from != 0 && (ranOut || now - from >= TimeUnit.SECONDS.toNanos(seconds))) {
                        if (!ranOut || last == 0) {
                            last = now;
                            doneLast = done;
                            countsLast = counts(processes);
                        }
                        double window = (last - from) / 1e9;
                        double perSecond = (doneLast - doneFrom) / window;
                        r.put(prefix + "starts_per_s", perSecond);
                        r.put(prefix + "ratio_to_limit", perSecond / rate);
                        r.put(prefix + "backlog_left", (double) (count - doneLast));
                        r.put(prefix + "window_s", window);
                        perJvm(prefix, countsFrom, countsLast, window, r);
                        return;
                    }
                    if (from != 0) {
                        last = now;
                        doneLast = done;
                        countsLast = counts(processes);
                    }
                    Thread.sleep(100);
                }
                throw new IllegalStateException("no steady " + seconds + " s " + (limited ? "under a rate limit of " + rate + "/s" : "of drain")
                        + " on " + queue);
            } finally {
                processes.forEach(WorkerProcess::close);
            }
        }
    }

    /** Each worker JVM's latest {@code counts} line (every 200 ms): jobs it started, reserved starts it gave back. */
    private static long[][] counts(List<WorkerProcess> processes) {
        long[][] out = new long[processes.size()][];
        for (int i = 0; i < out.length; i++) {
            String line = processes.get(i).latestLine("counts ");
            String[] parts = line == null ? new String[] {"counts", "0", "0"} : line.split(" ");
            out[i] = new long[] {Long.parseLong(parts[1]), Long.parseLong(parts[2])};
        }
        return out;
    }

    /**
     * Per worker JVM over the window: the fewest and the most starts per second, and the reserved
     * starts given back (woke too late) per second, all JVMs together.
     */
    private static void perJvm(String prefix, long[][] from, long[][] to, double window, Map<String, Double> r) {
        double min = Double.MAX_VALUE;
        double max = 0;
        long late = 0;
        for (int i = 0; i < from.length; i++) {
            double starts = (to[i][0] - from[i][0]) / window;
            min = Math.min(min, starts);
            max = Math.max(max, starts);
            late += to[i][1] - from[i][1];
        }
        r.put(prefix + "jvm_min_starts_per_s", min);
        r.put(prefix + "jvm_max_starts_per_s", max);
        r.put(prefix + "late_giveback_per_s", late / window);
    }

    /** What unique jobs and pause cost: see {@link BenchFlowControl}. */
    private void flowControl(Map<String, Double> r) throws Exception {
        redis.flushAll();
        BenchFlowControl.measure(redis, nextQueue(), nextQueue(), r);
    }

    private void latency(int run, Map<String, Double> r) throws Exception {
        latency(run, r, "latency_", LATENCY_RATE, 1, List.of());
    }

    /**
     * The latency targets alone ({@code -Dbench.only=latency}): submit to handler start at each
     * rate of {@code bench.latencyRates} (default 1000 and 10000 submits/s), each with the worker on G1
     * and on {@code bench.gcOptions} (default {@code -XX:+UseZGC}), the order alternating between runs.
     * {@code bench.latencyProducers} (default: one thread per 2,500/s) threads share one client, as an
     * application's request threads would; each submits one message at a time.
     */
    private void latencyRates(int run, Map<String, Double> r) throws Exception {
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
        redis.flushAll();
        String stream = "baseline:" + nextQueue();
        int warmup = rate;
        int total = warmup + rate * LATENCY_SECONDS;
        org.redisson.api.RedissonClient producer = org.redisson.Redisson.create(BenchBaseline.redissonConfig(redis.url()));
        try (WorkerProcess worker = WorkerProcess.startBaseline(this, stream, total, mode, warmup, run)) {
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
    private void latency(int run, Map<String, Double> r, String prefix, int rate, int producers, List<String> jvmOptions)
            throws Exception {
        redis.flushAll();
        String queue = nextQueue();
        int warmup = rate;
        int total = warmup + rate * LATENCY_SECONDS;
        long[] submitNanos = new long[total];
        long[] lateNanos = new long[total];
        Task<Long, Void> task = submitOnly(queue);
        try (Binomic client = client(task);
             WorkerProcess worker = WorkerProcess.start(this, queue, "latency", LATENCY_CONCURRENCY, total, warmup, true, run, jvmOptions)) {
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
    private void resultLatency(int run, Map<String, Double> r) throws Exception {
        redis.flushAll();
        String queue = nextQueue();
        int total = LATENCY_WARMUP + LATENCY_RATE * LATENCY_SECONDS;
        Task<Long, Long> task = BenchWorker.resultTask(queue);
        long[] nanos = new long[total];
        CountDownLatch done = new CountDownLatch(total);
        try (Binomic client = Binomic.builder().config(BinomicConfig.builder().brokerUrl(redis.url()).build()).build().start();
             WorkerProcess _ = WorkerProcess.start(this, queue, "result", LATENCY_CONCURRENCY, total, LATENCY_WARMUP, true, run)) {
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

    private void footprint(int run, Map<String, Double> r) throws Exception {
        footprint(run, r, "footprint_", List.of());
    }

    private void footprint(int run, Map<String, Double> r, String prefix, List<String> jvmOptions) throws Exception {
        redis.flushAll();
        String queue = nextQueue();
        Task<Long, Void> task = submitOnly(queue);
        try (Binomic client = client(task)) {
            client.submitAll(task, Collections.nCopies(sleepers, 0L));
            try (WorkerProcess worker = WorkerProcess.start(this, queue, "footprint", sleepers, sleepers, 0, false, run, jvmOptions)) {
                long started = System.nanoTime();
                long cpu0 = worker.cpuNanos();
                String[] bytes = worker.awaitLine("footprint", 120 + Integer.getInteger("bench.sleepSeconds", 5)).split(" ");
                r.put("footprint_tasks", (double) sleepers);
                r.put(prefix + "peak_heap_mib", Long.parseLong(bytes[1]) / 1048576.0);
                r.put(prefix + "live_heap_mib", Long.parseLong(bytes[2]) / 1048576.0);
                r.put(prefix + "rss_mib", Long.parseLong(bytes[3]) / 1048576.0);
                r.put(prefix + "peak_rss_mib", Long.parseLong(bytes[4]) / 1048576.0);
                if (bytes.length > 5) {
                    r.put(prefix + "peak_heap_at_gc_mib", Long.parseLong(bytes[5]) / 1048576.0);
                    r.put(prefix + "live_heap_before_mib", Long.parseLong(bytes[6]) / 1048576.0);
                    r.put(prefix + "sleeping_when_measured", Double.parseDouble(bytes[7]));
                    r.put(prefix + "start_spread_s", Long.parseLong(bytes[8]) / 1e6);
                    r.put(prefix + "gc_pauses", Double.parseDouble(bytes[9]));
                    r.put(prefix + "gc_pause_s", Long.parseLong(bytes[10]) / 1e3);
                    // What each sleeping task keeps alive: the live heap over the worker's own before any task.
                    r.put(prefix + "live_bytes_per_sleeping_task",
                            (Long.parseLong(bytes[2]) - Long.parseLong(bytes[6])) / Math.max(1.0, Double.parseDouble(bytes[7])));
                }
                awaitEmpty(client, queue, 120 + Integer.getInteger("bench.sleepSeconds", 5));
                double seconds = (System.nanoTime() - started) / 1e9;
                r.put(prefix + "tasks_per_s", sleepers / seconds);
                r.put(prefix + "worker_cpu_s", (worker.cpuNanos() - cpu0) / 1e9);
            }
        }
    }

    /**
     * The footprint target alone ({@code -Dbench.only=footprint}): {@code bench.sleepers} tasks
     * sleeping 5 s in one worker, once per maximum heap of {@code bench.footprintHeaps} (default
     * 1g, 512m, 384m, 256m; the order reversed every other run), each with {@code bench.footprintGcOptions}
     * (default none: G1). A worker that runs out of heap exits ({@code -XX:+ExitOnOutOfMemoryError}) and
     * counts as {@code <prefix>failed}. {@code -Dbench.sleepSeconds} makes the tasks sleep longer than 5 s. With {@code -Dbench.histogram=DIR} each worker writes its class
     * histogram at the plateau to {@code DIR/histogram-<heap>-<run>.txt}.
     */
    private void footprintHeaps(int run, Map<String, Double> r) throws Exception {
        List<String> heaps = new ArrayList<>(Arrays.stream(System.getProperty("bench.footprintHeaps", "1g,512m,384m,256m").split(","))
                .map(String::strip).toList());
        if (run % 2 == 0) {
            Collections.reverse(heaps);
        }
        List<String> gcOptions = Arrays.stream(System.getProperty("bench.footprintGcOptions", "").split(" ")).filter(o -> !o.isBlank()).toList();
        String histograms = System.getProperty("bench.histogram", "");
        for (String heap : heaps) {
            String prefix = "fp_" + heap + "_";
            List<String> options = new ArrayList<>(List.of("-Xmx" + heap, "-XX:+ExitOnOutOfMemoryError",
                    "-Dbench.sleepSeconds=" + Integer.getInteger("bench.sleepSeconds", 5)));
            options.addAll(gcOptions);
            if (!histograms.isBlank()) {
                Files.createDirectories(Path.of(histograms));
                options.add("-Dbench.histogram=" + Path.of(histograms).toAbsolutePath().resolve("histogram-" + heap + "-" + run + ".txt"));
            }
            try {
                footprint(run, r, prefix, options);
                r.put(prefix + "failed", 0.0);
            } catch (IllegalStateException e) {
                System.err.println(prefix + "failed: " + e.getMessage());
                r.put(prefix + "failed", 1.0);
            }
        }
    }

    /** Waits until the queue has nothing ready and nothing pending: every message acked. */
    private static void awaitEmpty(Binomic client, String queue, int timeoutSeconds) throws InterruptedException {
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
    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private String nextQueue() {
        return "bench" + ++queueNumber;
    }

    /** A client that submits {@code task}; it declares it and never runs it (the workers are other JVMs). */
    private Binomic client(Task<Long, Void> task) {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url()).build();
        return Binomic.builder().config(config).task(task).build().start();
    }

    /** The bench task as the submitting side has it: the definition, without the worker's handler. */
    private static Task<Long, Void> submitOnly(String queue) {
        return BenchWorker.task(queue);
    }

    // ---- output ----------------------------------------------------------------------------

    private static String json(int run, Map<String, Double> result) {
        StringBuilder json = new StringBuilder("{\"run\":").append(run);
        result.forEach((key, value) -> json.append(",\"").append(key).append("\":")
                .append(String.format(Locale.ROOT, value == Math.rint(value) ? "%.0f" : "%.3f", value)));
        return json.append('}').toString();
    }

    private record Row(String key, String label, String target, DoublePredicate meets, boolean ofCeiling) { }

    private String table(List<Map<String, Double>> results) {
        List<Row> rows = List.of(
                new Row("enqueue_msgs_per_s", "1. bulk enqueue, msgs/s", ">= 80000", v -> v >= 80_000, true),
                new Row("drain_tasks_per_s", "2. drain, tasks/s, fresh worker JVM (concurrency " + drainConcurrency + ")", ">= 40000", v -> v >= 40_000, true),
                new Row("drain_warm_tasks_per_s", "2. drain, tasks/s, warmed worker JVM", ">= 40000", v -> v >= 40_000, true),
                new Row("baseline_xadd_per_s", "B. baseline: pipelined XADD, msgs/s", "", v -> true, false),
                new Row("ratio_enqueue_to_baseline_xadd", "B. bulk enqueue / baseline XADD", ">= 0.9", v -> v >= 0.9, false),
                new Row("baseline_drain_tasks_per_s", "B. baseline drain, XACK+XDEL, tasks/s (warmed JVM)", "", v -> true, false),
                new Row("baseline_ackonly_drain_tasks_per_s", "B. baseline drain, XACK alone, tasks/s (warmed JVM)", "", v -> true, false),
                new Row("ratio_drain_warm_to_baseline", "B. drain warmed / baseline XACK+XDEL", ">= 0.9", v -> v >= 0.9, false),
                new Row("ratio_drain_warm_to_baseline_fenced", "B. drain warmed / baseline fenced", "", v -> true, false),
                new Row("ratio_drain_warm_to_baseline_vthread", "B. drain warmed / baseline fenced+vthread", "", v -> true, false),
                new Row("baseline_fenced_drain_tasks_per_s", "B. baseline drain, least fenced ack (XPENDING runs + XACK), tasks/s", "", v -> true, false),
                new Row("ratio_baseline_fenced_to_xdel", "B. baseline fenced / baseline XACK+XDEL", "", v -> true, false),
                new Row("baseline_vthread_drain_tasks_per_s", "B. baseline drain, fenced, a virtual thread per task, tasks/s", "", v -> true, false),
                new Row("ratio_baseline_vthread_to_xdel", "B. baseline fenced+vthread / baseline XACK+XDEL", "", v -> true, false),
                new Row("baseline_vthread_drain_worker_cpu_us_per_task", "B. baseline JVM CPU per task, fenced+vthread, us", "", v -> true, false),
                new Row("baseline_fresh_drain_tasks_per_s", "B. baseline drain, XACK+XDEL, fresh JVM, tasks/s", "", v -> true, false),
                new Row("ratio_baseline_fresh_to_warm", "B. baseline fresh / baseline warmed", "", v -> true, false),
                new Row("baseline_fenced_drain_worker_cpu_us_per_task", "B. baseline JVM CPU per task, fenced, us", "", v -> true, false),
                new Row("baseline_fresh_drain_worker_cpu_us_per_task", "B. baseline JVM CPU per task, fresh JVM, us", "", v -> true, false),
                new Row("baseline_fenced_drain_redis_cpu_us_per_task", "B. baseline Redis CPU drain fenced, us/task", "", v -> true, false),
                new Row("ratio_drain_warm_to_baseline_ackonly", "B. drain warmed / baseline XACK alone", "", v -> true, false),
                new Row("ratio_drain_fresh_to_baseline", "B. drain fresh / baseline XACK+XDEL", "", v -> true, false),
                new Row("drain_fresh_to_warm", "B. drain fresh / drain warmed", ">= 0.85", v -> v >= 0.85, false),
                new Row("baseline_xadd_redis_cpu_us_per_msg", "B. baseline Redis CPU XADD, us/msg", "", v -> true, false),
                new Row("baseline_drain_redis_cpu_us_per_task", "B. baseline Redis CPU drain XACK+XDEL, us/task", "", v -> true, false),
                new Row("baseline_ackonly_drain_redis_cpu_us_per_task", "B. baseline Redis CPU drain XACK alone, us/task", "", v -> true, false),
                new Row("baseline_redis_cpu_us_per_task", "B. baseline Redis CPU XADD+drain (XACK+XDEL), us/task", "", v -> true, false),
                new Row("baseline_ackonly_redis_cpu_us_per_task", "B. baseline Redis CPU XADD+drain (XACK alone), us/task", "", v -> true, false),
                new Row("drain_warm_redis_cpu_us_per_task", "B. Binomic Redis CPU drain, warmed, us/task", "", v -> true, false),
                new Row("ratio_redis_cpu_to_baseline", "B. Binomic Redis CPU enq+drain (fresh) / baseline", "", v -> true, false),
                new Row("ratio_redis_cpu_warm_to_baseline", "B. Binomic Redis CPU enq+drain (warmed) / baseline", "", v -> true, false),
                new Row("baseline_drain_worker_cpu_us_per_task", "B. baseline JVM CPU per task, XACK+XDEL, us", "", v -> true, false),
                new Row("baseline_ackonly_drain_worker_cpu_us_per_task", "B. baseline JVM CPU per task, XACK alone, us", "", v -> true, false),
                new Row("gc_g1_drain_tasks_per_s", "G. drain warmed, G1, tasks/s", "", v -> true, false),
                new Row("gc_other_drain_tasks_per_s", "G. drain warmed, bench.gcOptions, tasks/s", "", v -> true, false),
                new Row("gc_other_to_g1_drain", "G. drain warmed, bench.gcOptions / G1", "", v -> true, false),
                new Row("gc_g1_drain_worker_cpu_us_per_task", "G. worker CPU per task, G1, us", "", v -> true, false),
                new Row("gc_other_drain_worker_cpu_us_per_task", "G. worker CPU per task, bench.gcOptions, us", "", v -> true, false),
                new Row("gc_g1_footprint_peak_heap_mib", "G. sleeping tasks, peak heap, G1, MiB", "", v -> true, false),
                new Row("gc_other_footprint_peak_heap_mib", "G. sleeping tasks, peak heap, bench.gcOptions, MiB", "", v -> true, false),
                new Row("gc_g1_footprint_live_heap_mib", "G. sleeping tasks, live heap, G1, MiB", "", v -> true, false),
                new Row("gc_other_footprint_live_heap_mib", "G. sleeping tasks, live heap, bench.gcOptions, MiB", "", v -> true, false),
                new Row("gc_g1_footprint_peak_rss_mib", "G. sleeping tasks, peak RSS, G1, MiB", "", v -> true, false),
                new Row("gc_other_footprint_peak_rss_mib", "G. sleeping tasks, peak RSS, bench.gcOptions, MiB", "", v -> true, false),
                new Row("enqueue_client_cpu_us_per_msg", "1. client CPU per enqueued msg, us", "", v -> true, false),
                new Row("drain_worker_cpu_us_per_task", "2. worker CPU per drained task, fresh JVM, us", "", v -> true, false),
                new Row("drain_warm_worker_cpu_us_per_task", "2. worker CPU per drained task, warmed JVM, us", "", v -> true, false),
                new Row("drain_msgs_per_fetch", "2. messages per fetch round trip (fresh JVM)", "", v -> true, false),
                new Row("drain_msgs_per_ack_batch", "2. messages per ack round trip (fresh JVM)", "", v -> true, false),
                new Row("prio_none_tasks_per_s", "P. drain, default priority only, tasks/s", "", v -> true, false),
                new Row("prio_mixed_tasks_per_s", "P. drain, ten priority levels, tasks/s", "", v -> true, false),
                new Row("prio_none_enqueue_redis_cpu_us_per_msg", "P. Redis CPU enqueue, default only, us/msg", "", v -> true, false),
                new Row("prio_mixed_enqueue_redis_cpu_us_per_msg", "P. Redis CPU enqueue, ten levels, us/msg", "", v -> true, false),
                new Row("prio_none_drain_redis_cpu_us_per_task", "P. Redis CPU drain, default only, us/task", "", v -> true, false),
                new Row("prio_mixed_drain_redis_cpu_us_per_task", "P. Redis CPU drain, ten levels, us/task", "", v -> true, false),
                new Row("prio_none_fetches_per_1000_tasks", "P. fetches (XREADGROUP) per 1000 tasks, default only", "", v -> true, false),
                new Row("prio_mixed_fetches_per_1000_tasks", "P. fetches (script) per 1000 tasks, ten levels", "", v -> true, false),
                new Row("prio_none_settle_scripts_per_1000_tasks", "P. settle scripts per 1000 tasks, default only", "", v -> true, false),
                new Row("prio_mixed_settle_scripts_per_1000_tasks", "P. settle scripts per 1000 tasks, ten levels", "", v -> true, false),
                new Row("prio_none_smembers", "P. SMEMBERS during the default-only drain", "", v -> true, false),
                new Row("prio_mixed_to_none_drain", "P. drain, ten levels / one (same run)", "", v -> true, false),
                new Row("prio_mixed_to_none_drain_redis_cpu", "P. Redis CPU per task, ten levels / one (same run)", "", v -> true, false),
                new Row("prio_jump_ms", "P. top priority behind 100,000 lower: submit to start, ms", "", v -> true, false),
                new Row("prio_jump_fetch_scripts", "P. top priority behind 100,000 lower: fetch scripts meanwhile", "", v -> true, false),
                new Row("prio_jump_started_between", "P. top priority behind 100,000 lower: jobs started meanwhile", "", v -> true, false),
                new Row("prio_jump_backlog_left", "P. top priority behind 100,000 lower: backlog left", "", v -> true, false),
                new Row("limit_none_tasks_per_s", "L. drain, no limit, tasks/s", "", v -> true, false),
                new Row("limit_concurrency_tasks_per_s", "L. drain, queue concurrency limit (not binding), tasks/s", "", v -> true, false),
                new Row("limit_none_drain_redis_cpu_us_per_task", "L. Redis CPU drain, no limit, us/task", "", v -> true, false),
                new Row("limit_concurrency_drain_redis_cpu_us_per_task", "L. Redis CPU drain, concurrency limit, us/task", "", v -> true, false),
                new Row("limit_none_scripts_per_1000_tasks", "L. scripts per 1000 tasks, no limit", "", v -> true, false),
                new Row("limit_concurrency_scripts_per_1000_tasks", "L. scripts per 1000 tasks, concurrency limit", "", v -> true, false),
                new Row("limit_concurrency_to_none_drain", "L. drain, concurrency limit / none (same run)", "", v -> true, false),
                new Row("limit_concurrency_to_none_redis_cpu", "L. Redis CPU per task, concurrency limit / none (same run)", "", v -> true, false),
                new Row("latency_p50_ms", "3. latency p50, ms", "<= 1", v -> v <= 1, false),
                new Row("latency_p99_ms", "3. latency p99, ms", "<= 5", v -> v <= 5, false),
                new Row("latency_p999_ms", "3. latency p99.9, ms", "", v -> true, false),
                new Row("latency_max_ms", "3. latency max, ms", "", v -> true, false),
                new Row("result_latency_p50_ms", "3. submit to result (tracked task), p50, ms", "<= 2", v -> v <= 2, false),
                new Row("result_latency_p99_ms", "3. submit to result (tracked task), p99, ms", "", v -> true, false),
                new Row("footprint_peak_heap_mib", "4. " + sleepers + " sleeping: peak heap, MiB", "<= 1024", v -> v <= 1024, false),
                new Row("footprint_live_heap_mib", "4. " + sleepers + " sleeping: live heap, MiB", "", v -> true, false),
                new Row("footprint_peak_rss_mib", "4. " + sleepers + " sleeping: peak RSS, MiB", "", v -> true, false),
                new Row("redis_bytes_per_queued_msg", "4. Redis used_memory per queued msg, B", "<= 100", v -> v <= 100, false),
                new Row("left_entries_after_drain", "4. entries left after drain", "0", v -> v == 0, false),
                // What stays is the group and the worker's consumer: a constant, however many tasks ran.
                new Row("left_stream_bytes_after_drain", "4. stream bytes left after drain, whole queue", "< 1024", v -> v < 1024, false),
                new Row("left_stream_bytes_per_task", "4. stream bytes left per completed task", "", v -> true, false),
                new Row("left_used_memory_after_drain", "4. used_memory left after drain, B", "", v -> true, false),
                new Row("enqueue_redis_cpu_us_per_msg", "5. Redis CPU enqueue, us/msg", "", v -> true, false),
                new Row("drain_redis_cpu_us_per_task", "5. Redis CPU drain, us/task", "", v -> true, false),
                new Row("redis_cpu_us_per_task", "5. Redis CPU enqueue+drain, us/task", "<= 15", v -> v <= 15, false),
                new Row("ceiling_xadd_per_s", "6. ceiling: redis-benchmark -P 16 XADD, ops/s", "", v -> true, false),
                new Row("submit_plain_redis_cpu_us", "7. one submit, plain: Redis CPU, us", "", v -> true, false),
                new Row("submit_plain_commands", "7. one submit, plain: round trips", "", v -> true, false),
                new Row("submit_unique_new_redis_cpu_us", "7. one submit, unique, new key: Redis CPU, us", "", v -> true, false),
                new Row("submit_unique_new_commands", "7. one submit, unique, new key: round trips", "", v -> true, false),
                new Row("submit_unique_duplicate_redis_cpu_us", "7. one submit, unique, duplicate: Redis CPU, us", "", v -> true, false),
                new Row("submit_plain_per_s", "7. one at a time, plain, submits/s", "", v -> true, false),
                new Row("submit_unique_new_per_s", "7. one at a time, unique, submits/s", "", v -> true, false),
                new Row("submit_all_plain_redis_cpu_us", "7. submitAll, plain: Redis CPU per msg, us", "", v -> true, false),
                new Row("submit_all_unique_redis_cpu_us", "7. submitAll, unique: Redis CPU per msg, us", "", v -> true, false),
                new Row("submit_all_plain_per_s", "7. submitAll, plain, msgs/s", "", v -> true, false),
                new Row("submit_all_unique_per_s", "7. submitAll, unique, msgs/s", "", v -> true, false),
                new Row("pause_state_reads_per_worker_s", "7. paused-state reads per idle worker per s", "", v -> true, false),
                new Row("activity_writes_per_1000_tasks", "D. dashboard activity writes per 1000 tasks (drain)", "", v -> true, false),
                new Row("activity_redis_cpu_us_per_write", "D. Redis CPU per activity write, us", "", v -> true, false),
                new Row("activity_redis_cpu_us_per_task", "D. Redis CPU of activity writes per task, us", "", v -> true, false));
        double ceiling = median(results, "ceiling_xadd_per_s");
        StringBuilder out = new StringBuilder(String.format(Locale.ROOT, "%-56s %12s %9s %10s %s%n",
                "medians of " + results.size() + " runs", "median", "target", "of ceiling", "met"));
        boolean partial = !System.getProperty("bench.only", "").isBlank();
        for (Row row : rows) {
            double median = median(results, row.key());
            if (partial && Double.isNaN(median)) {
                continue; // not measured by this -Dbench.only
            }
            out.append(String.format(Locale.ROOT, "%-56s %12s %9s %10s %s%n", row.label(), format(median), row.target(),
                    row.ofCeiling() ? String.format(Locale.ROOT, "%.0f%%", 100 * median / ceiling) : "",
                    row.target().isEmpty() ? "" : row.meets().test(median) ? "yes" : "NO"));
        }
        // Measures named per parameter (-Dbench.only=latency, footprint): every key of the first run, in its order.
        for (String key : results.getFirst().keySet()) {
            if (key.startsWith("lat_") || key.startsWith("fp_") || key.startsWith("outbox_") || key.startsWith("plain_submit_")
                    || key.startsWith("limit_rate_") || key.startsWith("bb_")) {
                out.append(String.format(Locale.ROOT, "%-56s %12s%n", key, format(median(results, key))));
            }
        }
        return out.toString();
    }

    private static String format(double value) {
        return Math.abs(value) >= 1000 ? String.format(Locale.ROOT, "%.0f", value) : String.format(Locale.ROOT, "%.3f", value);
    }

    private static double median(List<Map<String, Double>> results, String key) {
        double[] values = results.stream().filter(r -> r.containsKey(key)).mapToDouble(r -> r.get(key)).sorted().toArray();
        if (values.length == 0) {
            return Double.NaN; // not measured in this run (-Dbench.only)
        }
        int mid = values.length / 2;
        return values.length % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
    }

    // ---- the worker JVM --------------------------------------------------------------------

    /** A {@link BenchWorker} JVM with its standard output read line by line (its log goes to a file). */
    private static final class WorkerProcess implements AutoCloseable {
        private final Process process;
        private final Path log;
        private final BlockingQueue<String> lines;

        private WorkerProcess(Process process, Path log) {
            this.process = process;
            this.log = log;
            this.lines = outputLines(process);
        }

        /**
         * A {@link BenchBaseline} JVM of {@code mode}, started as the worker JVMs are; a drain waits
         * for {@link #go()} once ready (warmed, unless the mode ends in {@code -fresh}).
         */
        static WorkerProcess startBaseline(Bench bench, String stream, int expected, String mode, int warmup, int run)
                throws IOException, InterruptedException {
            List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-preview", "-Xmx1g"));
            if (bench.jfr != null) {
                Files.createDirectories(bench.jfr);
                command.add("-XX:StartFlightRecording=settings=profile,dumponexit=true,filename="
                        + bench.jfr.resolve("baseline-" + mode + "-" + run + ".jfr"));
            }
            command.addAll(List.of("-cp", System.getProperty("java.class.path"), BenchBaseline.class.getName(),
                    bench.redis.url(), stream, Integer.toString(expected), mode, Integer.toString(warmup)));
            Path log = Files.createTempFile("binomic-bench-baseline-", ".log");
            WorkerProcess worker = new WorkerProcess(new ProcessBuilder(command).redirectError(log.toFile()).start(), log);
            worker.awaitLine("ready", 120);
            return worker;
        }

        void go() throws IOException {
            process.getOutputStream().write("go\n".getBytes(StandardCharsets.UTF_8));
            process.getOutputStream().flush();
        }

        static WorkerProcess start(Bench bench, String queue, String mode, int concurrency, int expected, int warmup, boolean warm,
                                   int run) throws IOException, InterruptedException {
            return start(bench, queue, mode, concurrency, expected, warmup, warm, run, List.of());
        }

        static WorkerProcess start(Bench bench, String queue, String mode, int concurrency, int expected, int warmup, boolean warm,
                                   int run, List<String> jvmOptions) throws IOException, InterruptedException {
            List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-preview", "-Xmx1g"));
            command.addAll(jvmOptions);
            if (bench.jfr != null) {
                Files.createDirectories(bench.jfr);
                command.add("-XX:StartFlightRecording=settings=profile,dumponexit=true,filename="
                        + bench.jfr.resolve("worker-" + mode + (warm ? "-warm-" : "-") + run + ".jfr"));
            }
            // e.g. -XX:AOTCacheOutput=FILE to train an AOT cache on a worker, -XX:AOTCache=FILE to use it, to measure what the cache saves at start
            boolean aot = false;
            for (String option : System.getProperty("bench.workerJvmOptions", "").split(" ")) {
                if (!option.isBlank()) {
                    command.add(option);
                    aot |= option.startsWith("-XX:AOT");
                }
            }
            command.addAll(List.of("-cp", aot ? jarsOnly(System.getProperty("java.class.path")) : System.getProperty("java.class.path"),
                    BenchWorker.class.getName(),
                    bench.redis.url(), queue, mode, Integer.toString(concurrency), Integer.toString(expected), Integer.toString(warmup),
                    warm ? "warm" : "cold"));
            Path log = Files.createTempFile("binomic-bench-worker-" + mode + "-", ".log");
            WorkerProcess worker = new WorkerProcess(new ProcessBuilder(command).redirectError(log.toFile()).start(), log);
            worker.awaitLine("ready", 120);
            return worker;
        }

        /**
         * The class path with each {@code target/classes} directory replaced by its module's jar: the JVM refuses to write
         * (or use) an AOT cache for a class path with a non-empty directory ("Cannot have non-empty directory in paths").
         */
        private static String jarsOnly(String classPath) throws IOException {
            List<String> entries = new ArrayList<>();
            for (String entry : classPath.split(java.io.File.pathSeparator)) {
                Path path = Path.of(entry);
                if (Files.isDirectory(path) && path.endsWith(Path.of("target", "classes"))) {
                    try (var jars = Files.list(path.getParent())) {
                        entry = jars.filter(j -> j.toString().endsWith(".jar") && !j.toString().endsWith("-tests.jar")
                                && !j.toString().endsWith("-sources.jar")).findFirst()
                                .orElseThrow(() -> new IllegalStateException("no jar next to " + path)).toString();
                    }
                }
                entries.add(entry);
            }
            return String.join(java.io.File.pathSeparator, entries);
        }

        /** CPU time the worker JVM has used so far (the OS counts it in clock ticks: 10 ms steps). */
        long cpuNanos() {
            return process.info().totalCpuDuration().orElseThrow().toNanos();
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

        private final Map<String, String> latest = new java.util.HashMap<>();

        /** The next line starting with {@code prefix} (other lines before it are skipped). */
        String awaitLine(String prefix, int timeoutSeconds) throws InterruptedException {
            return Bench.awaitLine("the worker process", process, lines, log, prefix, timeoutSeconds);
        }

        @Override
        public void close() { stop(process); }
    }

    /** The lines {@code process} writes to its standard output, as a reading thread takes them. */
    static BlockingQueue<String> outputLines(Process process) {
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

    /**
     * The next of {@code lines} (from {@link #outputLines}) starting with {@code prefix}, other lines
     * before it skipped; fails naming {@code what} and its {@code log} when {@code process} exits or
     * the time is up first.
     */
    static String awaitLine(String what, Process process, BlockingQueue<String> lines, Path log, String prefix, int timeoutSeconds)
            throws InterruptedException {
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

    /** Stops {@code process}: SIGTERM, and SIGKILL if it has not exited a minute later. */
    static void stop(Process process) {
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

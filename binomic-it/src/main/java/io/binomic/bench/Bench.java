package io.binomic.bench;

import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
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
 *
 * <p>This class chooses what a run measures ({@code bench.only}) and prints the results; the
 * measurements are in classes of their own: {@link BenchDrains} (1, 2, 5 and the baseline),
 * {@link BenchLatency} (3), {@link BenchFootprint} (4), {@link BenchFlowLimits} (priorities, limits,
 * unique jobs and pause), each sharing one {@link BenchContext} and starting its worker JVMs as
 * {@link WorkerProcess}es.
 */
public final class Bench {
    private final BenchContext context;
    private final BenchRedis redis;
    private final int messages;
    private final BenchDrains drains;
    private final BenchFlowLimits flowLimits;
    private final BenchLatency latency;
    private final BenchFootprint footprint;

    private Bench(BenchRedis redis) {
        this.context = new BenchContext(redis);
        this.redis = redis;
        this.messages = context.messages;
        this.drains = new BenchDrains(context);
        this.flowLimits = new BenchFlowLimits(context);
        this.latency = new BenchLatency(context);
        this.footprint = new BenchFootprint(context);
    }

    public static void main(String[] args) throws Exception {
        java.util.logging.Logger.getLogger("").setLevel(java.util.logging.Level.WARNING);
        int runs = Integer.getInteger("bench.runs", 3);
        if (args.length == 1 && args[0].equals("priorities")) { // only the priorities measurement (java ... Bench priorities)
            try (BenchRedis redis = BenchRedis.start()) {
                Bench bench = new Bench(redis);
                for (int run = 1; run <= runs; run++) {
                    Map<String, Double> result = new LinkedHashMap<>();
                    bench.flowLimits.priorities(run, result);
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
            Recording recording = bench.context.jfr == null ? null : startRecording();
            System.out.println(bench.machine());
            bench.warmUp();
            List<Map<String, Double>> results = new ArrayList<>();
            for (int run = 1; run <= runs; run++) {
                Map<String, Double> result = bench.run(run);
                results.add(result);
                System.out.println(json(run, result));
            }
            if (recording != null) {
                Files.createDirectories(bench.context.jfr);
                recording.dump(bench.context.jfr.resolve("bench-client.jfr"));
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
        Task<Long, Void> task = BenchContext.submitOnly(context.nextQueue());
        try (Binomic client = context.client(task)) {
            for (int i = 0; i < 3; i++) {
                client.submitAll(task, Collections.nCopies(messages / 10, 0L));
            }
            for (int i = 0; i < BenchLatency.LATENCY_RATE * BenchLatency.LATENCY_SECONDS; i++) {
                client.submit(task, BenchWorker.nowMicros());
            }
        }
        redis.flushAll();
    }

    private Map<String, Double> run(int run) throws Exception {
        Map<String, Double> r = new LinkedHashMap<>();
        r.put("load1", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        if ("flow".equals(System.getProperty("bench.only"))) {
            flowLimits.flowControl(r);
            return r;
        }
        if ("limits".equals(System.getProperty("bench.only"))) {
            flowLimits.limits(run, r);
            return r;
        }
        if ("prio".equals(System.getProperty("bench.only"))) { // the ten-level drain against one level, and a top-priority job behind a backlog
            flowLimits.priorities(run, r);
            flowLimits.priorityJump(run, r);
            return r;
        }
        if ("outbox".equals(System.getProperty("bench.only"))) { // the JDBC outbox: submit, relay, commit to start
            BenchOutbox.measure(redis, context.nextQueue(), r);
            return r;
        }
        if ("batches".equals(System.getProperty("bench.only"))) { // batches and workflows against plain and tracked jobs
            BenchBatches.measure(redis, context::nextQueue, r);
            return r;
        }
        if ("activity".equals(System.getProperty("bench.only"))) { // the Redis CPU the dashboard's activity writes cost per task
            BenchActivity.measure(redis, context.nextQueue(), r);
            return r;
        }
        if ("gc".equals(System.getProperty("bench.only"))) { // whether the workers' GC (G1 against -Dbench.gcOptions) changes drain rate and footprint
            gc(run, r);
            return r;
        }
        if ("latency".equals(System.getProperty("bench.only"))) { // submit-to-start latency at 1,000 and 10,000/s, G1 and ZGC: what a caller waits
            latency.latencyRates(run, r);
            return r;
        }
        if ("footprint".equals(System.getProperty("bench.only"))) { // the smallest -Xmx that holds many sleeping tasks: a worker's memory per task
            footprint.footprintHeaps(run, r);
            return r;
        }
        if ("baseline".equals(System.getProperty("bench.only"))) { // the bare-Redisson baseline alone: the ceiling Binomic's rates are judged against
            drains.baseline(run, r);
            return r;
        }
        if ("compare".equals(System.getProperty("bench.only"))) { // one worker lever off and on against the same baseline, to see what it buys
            drains.compare(run, r);
            drains.baseline(run, r);
            r.put("ratio_cmp_a_to_baseline", r.get("cmp_a_tasks_per_s") / r.get("baseline_drain_tasks_per_s"));
            r.put("ratio_cmp_b_to_baseline", r.get("cmp_b_tasks_per_s") / r.get("baseline_drain_tasks_per_s"));
            return r;
        }
        if ("drain".equals(System.getProperty("bench.only"))) { // the fresh and warmed drains and the baseline, without the slower measurements
            drains.enqueueAndDrain(run, r);
            r.put("drain_fresh_to_warm", r.get("drain_tasks_per_s") / r.get("drain_warm_tasks_per_s"));
            drains.baseline(run, r);
            BenchDrains.ratios(r);
            return r;
        }
        drains.enqueueAndDrain(run, r);
        r.put("drain_fresh_to_warm", r.get("drain_tasks_per_s") / r.get("drain_warm_tasks_per_s"));
        drains.baseline(run, r);
        BenchDrains.ratios(r);
        flowLimits.priorities(run, r);
        flowLimits.limits(run, r);
        latency.latency(run, r);
        latency.resultLatency(run, r);
        footprint.footprint(run, r);
        flowLimits.flowControl(r);
        redis.flushAll();
        r.put("ceiling_xadd_per_s", redis.xaddCeiling(messages));
        return r;
    }

    /**
     * The worker JVM's garbage collector, to see whether another one pays: the default (G1) against {@code -Dbench.gcOptions}
     * (default {@code -XX:+UseZGC}, generational in JDK 25), each a warmed drain of {@code bench.messages}
     * no-op tasks and the footprint of {@code bench.sleepers} sleeping tasks; the order alternates
     * between runs, so that a load drifting over the run does not favour one.
     */
    private void gc(int run, Map<String, Double> r) throws Exception {
        List<String> other = BenchContext.jvmOptions("bench.gcOptions", "-XX:+UseZGC");
        List<Boolean> order = drains.twoWarmedDrains(run, r, other, "gc_g1_drain_", "gc_other_drain_");
        for (boolean useOther : order) {
            footprint.footprint(run, r, useOther ? "gc_other_footprint_" : "gc_g1_footprint_", useOther ? other : List.of());
        }
        r.put("gc_other_to_g1_drain", r.get("gc_other_drain_tasks_per_s") / r.get("gc_g1_drain_tasks_per_s"));
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
                new Row("drain_tasks_per_s", "2. drain, tasks/s, fresh worker JVM (concurrency " + context.drainConcurrency + ")", ">= 40000", v -> v >= 40_000, true),
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
                new Row("prio_none_worker_cpu_us_per_task", "P. worker CPU per task from its first start, default only, us", "", v -> true, false),
                new Row("prio_mixed_worker_cpu_us_per_task", "P. worker CPU per task from its first start, ten levels, us", "", v -> true, false),
                new Row("prio_mixed_to_none_worker_cpu", "P. worker CPU per task, ten levels / one (same run)", "", v -> true, false),
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
                new Row("footprint_peak_heap_mib", "4. " + context.sleepers + " sleeping: peak heap, MiB", "<= 1024", v -> v <= 1024, false),
                new Row("footprint_live_heap_mib", "4. " + context.sleepers + " sleeping: live heap, MiB", "", v -> true, false),
                new Row("footprint_peak_rss_mib", "4. " + context.sleepers + " sleeping: peak RSS, MiB", "", v -> true, false),
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
                new Row("submit_unique_to_plain_redis_cpu", "7. one submit, unique / plain, Redis CPU (in turns)", "<= 1.5", v -> v <= 1.5, false),
                new Row("submit_unique_to_plain_exec", "7. one submit, unique / plain, executing it", "", v -> true, false),
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
}

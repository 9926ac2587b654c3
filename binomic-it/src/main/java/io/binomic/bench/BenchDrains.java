package io.binomic.bench;

import static io.binomic.bench.BenchContext.awaitEmpty;
import static io.binomic.bench.BenchContext.jvmOptions;
import static io.binomic.bench.BenchContext.processCpuNanos;
import static io.binomic.bench.BenchContext.submitOnly;

import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Throughput against the bare stack: the bulk enqueue and the drains of {@code bench.messages} no-op
 * messages by one worker JVM (fresh, then warmed), with Redis' CPU, memory and commands around them;
 * the bare-Redisson baseline of the same run, and the ratios of the two; and two warmed drains with
 * different worker JVM options, to see what a lever buys.
 */
final class BenchDrains {
    private final BenchContext bench;

    BenchDrains(BenchContext bench) {
        this.bench = bench;
    }

    void enqueueAndDrain(int run, Map<String, Double> r) throws Exception {
        bench.redis.flushAll();
        String queue = bench.nextQueue();
        List<Long> arguments = Collections.nCopies(bench.messages, 0L);
        Task<Long, Void> task = submitOnly(queue);
        try (Binomic client = bench.client(task)) {
            String stream = "binomic:{" + queue + "}:stream";
            long streamBytes0 = bench.redis.memoryUsage(stream);
            long memory0 = bench.redis.usedMemory();
            double cpu0 = bench.redis.cpuSeconds();
            long clientCpu0 = processCpuNanos();
            long start = System.nanoTime();
            client.submitAll(task, arguments);
            long enqueueNanos = System.nanoTime() - start;
            long clientCpu1 = processCpuNanos();
            double cpu1 = bench.redis.cpuSeconds();
            long memory1 = bench.redis.usedMemory();
            r.put("enqueue_msgs_per_s", bench.messages / (enqueueNanos / 1e9));
            r.put("enqueue_redis_cpu_us_per_msg", (cpu1 - cpu0) * 1e6 / bench.messages);
            r.put("enqueue_client_cpu_us_per_msg", (clientCpu1 - clientCpu0) / 1e3 / bench.messages);
            r.put("redis_bytes_per_queued_msg", (double) (memory1 - memory0) / bench.messages);

            long fetches0 = bench.redis.calls("xreadgroup");
            long acks0 = bench.redis.calls("xack");
            drain(client, queue, false, "drain_", List.of(), run, r);
            double cpu2 = bench.redis.cpuSeconds();
            // Each fetch is one XREADGROUP; each ack batch one pipeline of one XACK and one XDEL.
            r.put("drain_msgs_per_fetch", (double) bench.messages / (bench.redis.calls("xreadgroup") - fetches0));
            r.put("drain_msgs_per_ack_batch", (double) bench.messages / (bench.redis.calls("xack") - acks0));
            r.put("drain_redis_cpu_us_per_task", (cpu2 - cpu1) * 1e6 / bench.messages);
            r.put("redis_cpu_us_per_task", r.get("enqueue_redis_cpu_us_per_msg") + r.get("drain_redis_cpu_us_per_task"));
            r.put("left_entries_after_drain", (double) bench.redis.streamLength(stream));
            // The stream's own growth is what completed tasks leave behind; used_memory also moves
            // with client buffers and the script cache, which do not grow with the number of tasks.
            long streamGrowth = bench.redis.memoryUsage(stream) - streamBytes0;
            r.put("left_stream_bytes_after_drain", (double) streamGrowth);
            r.put("left_stream_bytes_per_task", (double) streamGrowth / bench.messages);
            r.put("left_used_memory_after_drain", (double) (bench.redis.usedMemory() - memory0));

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
    void compare(int run, Map<String, Double> r) throws Exception {
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
    void baseline(int run, Map<String, Double> r) throws Exception {
        Map<String, String> prefixByMode = new LinkedHashMap<>();
        prefixByMode.put("xdel", "baseline_");
        prefixByMode.put("ack", "baseline_ackonly_");
        prefixByMode.put("fenced", "baseline_fenced_");
        prefixByMode.put("xdel-fresh", "baseline_fresh_");
        prefixByMode.put("fenced-vthread", "baseline_vthread_");
        for (Map.Entry<String, String> variant : prefixByMode.entrySet()) {
            String mode = variant.getKey();
            boolean xdel = mode.equals("xdel");
            bench.redis.flushAll();
            String stream = "baseline:" + bench.nextQueue();
            String prefix = variant.getValue();
            org.redisson.api.RedissonClient producer = org.redisson.Redisson.create(BenchBaseline.redissonConfig(bench.redis.url()));
            try {
                BenchBaseline.createGroup(producer, stream);
                double cpu0 = bench.redis.cpuSeconds();
                long start = System.nanoTime();
                BenchBaseline.xadd(producer, stream, "baseline", bench.messages);
                long nanos = System.nanoTime() - start;
                double cpu1 = bench.redis.cpuSeconds();
                if (xdel) {
                    r.put("baseline_xadd_per_s", bench.messages / (nanos / 1e9));
                    r.put("baseline_xadd_redis_cpu_us_per_msg", (cpu1 - cpu0) * 1e6 / bench.messages);
                }
            } finally {
                producer.shutdown(0, 2, TimeUnit.SECONDS);
            }
            try (WorkerProcess worker = WorkerProcess.startBaseline(bench, stream, bench.messages, mode, 0, run)) {
                double cpu2 = bench.redis.cpuSeconds();
                Map<String, Long> usec0 = bench.redis.usecByCommand();
                long workerCpu0 = worker.cpuNanos();
                worker.go();
                long first = Long.parseLong(worker.awaitLine("first-start", 60).split(" ")[1]);
                long done = Long.parseLong(worker.awaitLine("done", 120).split(" ")[1]);
                double cpu3 = bench.redis.cpuSeconds();
                r.put(prefix + "drain_tasks_per_s", bench.messages / ((done - first) / 1e6));
                r.put(prefix + "drain_redis_cpu_us_per_task", (cpu3 - cpu2) * 1e6 / bench.messages);
                r.put(prefix + "drain_worker_cpu_us_per_task", (worker.cpuNanos() - workerCpu0) / 1e3 / bench.messages);
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
    List<Boolean> twoWarmedDrains(int run, Map<String, Double> r, List<String> other, String defaultPrefix,
                                          String otherPrefix) throws Exception {
        bench.redis.flushAll();
        String queue = bench.nextQueue();
        Task<Long, Void> task = submitOnly(queue);
        List<Boolean> order = run % 2 == 1 ? List.of(false, true) : List.of(true, false);
        try (Binomic client = bench.client(task)) {
            for (boolean useOther : order) {
                client.submitAll(task, Collections.nCopies(bench.messages, 0L));
                drain(client, queue, true, useOther ? otherPrefix : defaultPrefix, useOther ? other : List.of(), run, r);
            }
        }
        return order;
    }

    /** Redis' time per task in each command since {@code usec0} (INFO commandstats), as {@code <prefix>usec_<command>}; 0.05 µs and up. */
    private void commandTimes(String prefix, Map<String, Long> usec0, Map<String, Double> r) {
        bench.redis.usecByCommand().forEach((command, usec) -> {
            double perTask = (double) (usec - usec0.getOrDefault(command, 0L)) / bench.messages;
            if (perTask >= 0.05) {
                r.put(prefix + "usec_" + command, perTask);
            }
        });
    }

    /** Binomic against the baseline of the same run: the targets are ratios to it, so a slower machine does not move them. */
    static void ratios(Map<String, Double> r) {
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
        try (WorkerProcess worker = WorkerProcess.start(bench, queue, "drain", bench.drainConcurrency, bench.messages, 0, warm, run, jvmOptions)) {
            // From "ready" (the warm-up's queue drained and closed): misses what the worker drains before this reads INFO.
            double redisCpu0 = bench.redis.cpuSeconds();
            Map<String, Long> usec0 = bench.redis.usecByCommand();
            long firstStart = Long.parseLong(worker.awaitLine("first-start", 60).split(" ")[1]);
            long workerCpu0 = worker.cpuNanos();
            awaitEmpty(client, queue, 120);
            long lastAck = BenchWorker.nowMicros();
            double redisCpu1 = bench.redis.cpuSeconds();
            r.put(prefix + "tasks_per_s", bench.messages / ((lastAck - firstStart) / 1e6));
            r.put(prefix + "worker_cpu_us_per_task", (worker.cpuNanos() - workerCpu0) / 1e3 / bench.messages);
            if (warm) {
                r.put(prefix + "redis_cpu_us_per_task", (redisCpu1 - redisCpu0) * 1e6 / bench.messages);
                commandTimes(prefix, usec0, r);
            }
        }
        r.put("drain_concurrency", (double) bench.drainConcurrency);
    }
}

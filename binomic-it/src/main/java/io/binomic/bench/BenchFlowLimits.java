package io.binomic.bench;

import static io.binomic.bench.BenchContext.awaitEmpty;
import static io.binomic.bench.BenchContext.submitOnly;

import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What flow control costs and delivers: priorities (the ten-level drain against one level, and a
 * top-priority job behind a backlog), the queue's rate and concurrency limits (the drain with a limit
 * that never binds, a rate limit that binds, and {@link BenchLimitsBinding}), and unique jobs and
 * pause ({@link BenchFlowControl}).
 */
final class BenchFlowLimits {
    private final BenchContext bench;

    BenchFlowLimits(BenchContext bench) {
        this.bench = bench;
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
    void priorities(int run, Map<String, Double> r) throws Exception {
        int n = bench.messages / 2;
        for (boolean mixed : new boolean[] {false, true}) {
            bench.redis.flushAll();
            String queue = bench.nextQueue();
            Task<Long, Void> task = submitOnly(queue);
            String prefix = mixed ? "prio_mixed_" : "prio_none_";
            try (Binomic client = bench.client(task)) {
                double cpu0 = bench.redis.cpuSeconds();
                if (mixed) {
                    for (int p = io.binomic.api.Priority.MIN; p <= io.binomic.api.Priority.MAX; p++) {
                        client.submitAll(task, Collections.nCopies(n / 10, 0L), io.binomic.api.SubmitOptions.builder().priority(p).build());
                    }
                } else {
                    client.submitAll(task, Collections.nCopies(n, 0L));
                }
                double cpu1 = bench.redis.cpuSeconds();
                long reads0 = bench.redis.calls("xreadgroup");
                long smembers0 = bench.redis.calls("smembers");
                long acks0 = bench.redis.calls("xack");
                Map<String, Long> usec0 = bench.redis.usecByCommand();
                try (WorkerProcess worker = WorkerProcess.start(bench, queue, "drain", bench.drainConcurrency, n, 0, false, run)) {
                    long firstStart = Long.parseLong(worker.awaitLine("first-start", 60).split(" ")[1]);
                    long workerCpu0 = worker.cpuNanos();
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                    for (QueueStats stats = client.queueStats(queue); stats.ready() > 0 || stats.pending() > 0;
                         stats = client.queueStats(queue)) {
                        if (System.nanoTime() > deadline) {
                            throw new IllegalStateException("queue " + queue + " not drained after 120 s: " + stats);
                        }
                        Thread.sleep(20);
                    }
                    r.put(prefix + "tasks_per_s", n / ((BenchWorker.nowMicros() - firstStart) / 1e6));
                    r.put(prefix + "worker_cpu_us_per_task", (worker.cpuNanos() - workerCpu0) / 1e3 / n);
                }
                double cpu2 = bench.redis.cpuSeconds();
                bench.redis.usecByCommand().forEach((command, usec) -> {
                    double perTask = (double) (usec - usec0.getOrDefault(command, 0L)) / n;
                    if (perTask >= 0.05) {
                        r.put(prefix + "usec_" + command, perTask);
                    }
                });
                r.put(prefix + "enqueue_redis_cpu_us_per_msg", (cpu1 - cpu0) * 1e6 / n);
                r.put(prefix + "drain_redis_cpu_us_per_task", (cpu2 - cpu1) * 1e6 / n);
                r.put(prefix + "fetches_per_1000_tasks", (mixed ? bench.redis.calls("smembers") - smembers0 : bench.redis.calls("xreadgroup") - reads0)
                        * 1000.0 / n);
                r.put(prefix + "settle_scripts_per_1000_tasks", (bench.redis.calls("xack") - acks0) * 1000.0 / n);
                if (!mixed) {
                    r.put("prio_none_smembers", (double) (bench.redis.calls("smembers") - smembers0));
                }
            }
        }
        r.put("prio_mixed_to_none_drain", r.get("prio_mixed_tasks_per_s") / r.get("prio_none_tasks_per_s"));
        r.put("prio_mixed_to_none_worker_cpu", r.get("prio_mixed_worker_cpu_us_per_task") / r.get("prio_none_worker_cpu_us_per_task"));
        r.put("prio_mixed_to_none_drain_redis_cpu", r.get("prio_mixed_drain_redis_cpu_us_per_task") / r.get("prio_none_drain_redis_cpu_us_per_task"));
    }

    /**
     * A job of the highest priority submitted behind a backlog of {@code bench.prioBacklog} (100,000)
     * jobs of the lowest, once a fresh worker JVM (concurrency {@code bench.drainConcurrency}) is
     * draining them: the jobs the worker started between the submit and its start, and the fetch
     * scripts Redis ran meanwhile (one {@code SMEMBERS} each, plus the worker's paused-state read
     * every 500 ms), and the time from submit to its start.
     */
    void priorityJump(int run, Map<String, Double> r) throws Exception {
        int backlog = Integer.getInteger("bench.prioBacklog", 100_000);
        bench.redis.flushAll();
        String queue = bench.nextQueue();
        Task<Long, Void> task = submitOnly(queue);
        try (Binomic client = bench.client(task)) {
            client.submitAll(task, Collections.nCopies(backlog, 0L),
                    io.binomic.api.SubmitOptions.builder().priority(io.binomic.api.Priority.MIN).build());
            try (WorkerProcess worker = WorkerProcess.start(bench, queue, "drain", bench.drainConcurrency, backlog + 1, 0, false, run)) {
                worker.awaitLine("first-start", 60);
                Thread.sleep(500); // well into the backlog
                long smembers0 = bench.redis.calls("smembers");
                QueueStats before = client.queueStats(queue);
                long submitted = BenchWorker.nowMicros();
                client.submit(task, BenchWorker.MARKED, io.binomic.api.SubmitOptions.builder().priority(io.binomic.api.Priority.MAX).build());
                String[] marked = worker.awaitLine("marked-start", 60).split(" ");
                long fetches = bench.redis.calls("smembers") - smembers0;
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
    void limits(int run, Map<String, Double> r) throws Exception {
        int n = bench.messages / 4;
        if (Boolean.parseBoolean(System.getProperty("bench.limitDrains", "true"))) {
            for (String variant : new String[] {"none", "concurrency"}) {
                bench.redis.flushAll();
                String queue = bench.nextQueue();
                Task<Long, Void> task = submitOnly(queue);
                try (Binomic client = bench.client(task)) {
                    if (variant.equals("concurrency")) {
                        client.queues().setLimits(queue, io.binomic.api.QueueLimits.builder().concurrencyLimit(bench.drainConcurrency).build());
                    }
                    client.submitAll(task, Collections.nCopies(n, 0L));
                    double cpu1 = bench.redis.cpuSeconds();
                    long evals0 = bench.redis.calls("evalsha") + bench.redis.calls("eval");
                    Map<String, Long> usec0 = bench.redis.usecByCommand();
                    try (WorkerProcess worker = WorkerProcess.start(bench, queue, "drain", bench.drainConcurrency, n, 0, false, run)) {
                        long firstStart = Long.parseLong(worker.awaitLine("first-start", 60).split(" ")[1]);
                        awaitEmpty(client, queue, 120);
                        r.put("limit_" + variant + "_tasks_per_s", n / ((BenchWorker.nowMicros() - firstStart) / 1e6));
                    }
                    r.put("limit_" + variant + "_drain_redis_cpu_us_per_task", (bench.redis.cpuSeconds() - cpu1) * 1e6 / n);
                    r.put("limit_" + variant + "_scripts_per_1000_tasks", (bench.redis.calls("evalsha") + bench.redis.calls("eval") - evals0) * 1000.0 / n);
                    // where Redis' time went, per task: each command's own (a script's calls counted again inside its evalsha)
                    bench.redis.usecByCommand().forEach((command, usec) -> {
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
        new BenchLimitsBinding(bench.redis, bench::nextQueue).measure(r);
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
        bench.redis.flushAll();
        String queue = bench.nextQueue();
        Task<Long, Void> task = submitOnly(queue);
        int count = rate * (seconds + 4);
        try (Binomic client = bench.client(task)) {
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
                    processes.add(WorkerProcess.start(bench, queue, "drain", bench.drainConcurrency, count, 0, false, run));
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
     * starts given back (woke, or reached the handler, too late) per second, all JVMs together.
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
    void flowControl(Map<String, Double> r) throws Exception {
        bench.redis.flushAll();
        BenchFlowControl.measure(bench.redis, bench.nextQueue(), bench.nextQueue(), r);
    }
}

package io.binomic.bench;

import io.binomic.api.BinomicConfig;
import io.binomic.api.QueueLimits;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Limits that bind, measured from the handlers' own timestamps (each worker JVM,
 * {@link BenchLimitsWorker}, writes one line per job):
 * <ul>
 *   <li>{@link #keyed}: a rate limit per key over {@code bench.limitKeys} keys (10,000 tenants), every
 *       key's limit binding; what is delivered against the sum of what the limits allow, the most starts
 *       of any key in any window of one period against permits + burst, and how many of the limits'
 *       keys are left after they should have expired, with the Redis memory they took;</li>
 *   <li>{@link #hold}: a queue concurrency limit of N over tasks of a fixed duration, on 1 and 4 worker
 *       JVMs; the most running at once (from the enter and exit times of all JVMs) against N, and the
 *       throughput against N / duration.</li>
 * </ul>
 */
final class BenchLimitsBinding {
    private static final long SECOND = 1_000_000;

    private final BenchRedis redis;
    private final Supplier<String> queues;
    private final int seconds = Integer.getInteger("bench.limitSeconds", 20);

    BenchLimitsBinding(BenchRedis redis, Supplier<String> queues) {
        this.redis = redis;
        this.queues = queues;
    }

    /** Every measurement its properties ask for: {@code bench.limitKeys=0} and {@code bench.limitHold=} leave them out. */
    void measure(Map<String, Double> r) throws Exception {
        int keys = Integer.getInteger("bench.limitKeys", 10_000);
        if (keys > 0) {
            for (String workers : System.getProperty("bench.limitKeyWorkers", "1").split(",")) {
                keyed(keys, Integer.getInteger("bench.limitKeyPermits", 1), Long.getLong("bench.limitKeyPeriodMs", 10_000),
                        Integer.parseInt(workers.strip()), r);
                print("limit_keyed_", r);
            }
        }
        long holdMillis = Long.getLong("bench.limitHoldMillis", 50);
        for (String n : System.getProperty("bench.limitHold", "10,50").split(",")) {
            if (n.isBlank()) {
                continue;
            }
            for (String workers : System.getProperty("bench.limitHoldWorkers", "1,4").split(",")) {
                hold(Integer.parseInt(n.strip()), holdMillis, Integer.parseInt(workers.strip()), r);
                print("limit_hold_" + n.strip() + "_w" + workers.strip() + "_", r);
            }
        }
    }

    /** Each measurement's figures as soon as it ends: a run that fails later (a worker JVM that cannot start on a loaded machine) keeps them. */
    private static void print(String prefix, Map<String, Double> r) {
        StringBuilder line = new StringBuilder("{\"partial\":true");
        r.forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                line.append(",\"").append(k).append("\":").append(String.format(java.util.Locale.ROOT, "%.3f", v));
            }
        });
        System.out.println(line.append('}'));
    }

    /**
     * {@code keys} tenants, each limited to {@code permits} starts per {@code periodMillis} (burst 1), each with
     * {@code bench.limitKeyJobs} jobs (0, the default: its burst, then turns for twice
     * {@code bench.limitSeconds} + 4 s), submitted round-robin (every key in the backlog) while the queue is paused.
     *
     * <p>Every key's first start and burst come at once, and a loaded machine spreads those
     * {@code keys × (1 + burst)} starts over seconds (the spill); each key's later turns keep the phase its first start
     * got. So the steady state is read only once the spill is over: the window ({@code _steady_}) starts when the
     * last key had its first start and burst at the handlers and lasts {@code bench.limitSeconds}; every key then
     * still holds a backlog of its own (counted: {@code _keys_with_backlog_through_window}), and its starts in the
     * window against the sum of the limits are what the limits deliver. Also: the keys' own rate (each key's starts
     * after its burst over the time from its burst to its last start, against its limit; median and 5th
     * percentile), the whole drain less each key's first start and burst, the starts per second of the drain, the
     * most starts of any key in any window of one period against permits + burst (a start the loaded machine runs
     * late, by up to the late-start allowance of half an interval, can put one more in a window at the handlers;
     * more than that would be a breach: {@code _keys_over_permits_plus_burst_plus_one}), and the limits' keys in
     * Redis midway and once drained, with their memory, and how long after the last start the last of them expired.
     */
    private void keyed(int keys, int permits, long periodMillis, int workers, Map<String, Double> r) throws Exception {
        String prefix = "limit_keyed_" + keys + "_w" + workers + "_";
        redis.flushAll();
        String queue = queues.get();
        Task<Long, Void> task = BenchLimitsWorker.keyedTask(queue, permits, periodMillis);
        int burst = 1; // RateLimit's default
        int perKey = Integer.getInteger("bench.limitKeyJobs", 0); // 0: enough for a window after a spill of up to limitSeconds
        if (perKey <= 0) {
            perKey = burst + (int) (permits * Math.ceil((2 * seconds + 4) * 1000.0 / periodMillis));
        }
        List<Long> jobs = new ArrayList<>(keys * perKey);
        for (int j = 0; j < perKey; j++) {
            for (long k = 0; k < keys; k++) {
                jobs.add(k);
            }
        }
        double allowed = (double) keys * permits * 1000 / periodMillis;
        r.put(prefix + "allowed_per_s", allowed);
        r.put(prefix + "jobs_per_key", (double) perKey);
        List<Worker> started = new ArrayList<>();
        try (Binomic client = client(task)) {
            client.queues().pause(queue);
            for (int i = 0; i < workers; i++) {
                started.add(Worker.start(redis, queue, "keyed", Integer.getInteger("bench.drainConcurrency", 1000), permits, periodMillis, 0));
            }
            r.put(prefix + "load1", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
            client.submitAll(task, jobs);
            long[] calls = commandCalls();
            double redisCpu = redis.cpuSeconds();
            client.queues().resume(queue);
            // midway, every key's limit is in use: its state in Redis is what a tenant costs
            Thread.sleep(seconds * 1000L);
            rateKeys(queue, prefix + "mid_", r);
            r.put(prefix + "mid_redis_used_memory_mib", redis.usedMemory() / (double) (1 << 20));
            awaitDone(client, queue, jobs.size(), perKey * periodMillis / 1000 / permits + 120);
            r.put(prefix + "load1_end", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
            long[] after = commandCalls();
            for (int c = 0; c < COUNTED.length; c++) {
                r.put(prefix + COUNTED[c] + "_per_job", (double) (after[c] - calls[c]) / jobs.size());
            }
            r.put(prefix + "redis_cpu_us_per_job", (redis.cpuSeconds() - redisCpu) * 1e6 / jobs.size());
        } finally {
            started.forEach(Worker::close);
        }
        long lost = 0; // entries a read handed out whose reply the worker never got (a loaded machine), run only once found
        for (Worker w : started) {
            lost += w.errorLines("was handed to it by a read whose reply was lost");
        }
        r.put(prefix + "lost_read_entries", (double) lost);
        // tenant -> its start times
        Map<Long, List<Long>> byKey = new HashMap<>();
        long first = Long.MAX_VALUE;
        long last = 0;
        long all = 0;
        for (Worker w : started) {
            for (String line : w.lines("s ")) {
                String[] p = line.split(" ");
                long t = Long.parseLong(p[2]);
                byKey.computeIfAbsent(Long.parseLong(p[1]), k -> new ArrayList<>()).add(t);
                first = Math.min(first, t);
                last = Math.max(last, t);
                all++;
            }
        }
        List<long[]> sorted = new ArrayList<>(byKey.size());
        long spillEnd = first; // when the last key had its first start and burst
        for (List<Long> starts : byKey.values()) {
            long[] t = starts.stream().mapToLong(Long::longValue).sorted().toArray();
            sorted.add(t);
            spillEnd = Math.max(spillEnd, t[Math.min(t.length, 1 + burst) - 1]);
        }
        long from = spillEnd;
        long to = from + seconds * SECOND;
        long inWindow = 0;
        int mostInPeriod = 0;
        int keysOver = 0;
        int keysOverByTwo = 0;
        int withBacklog = 0; // keys that started a job after the window: they had one waiting all through it
        long periodMicros = periodMillis * 1000;
        List<Double> ownRates = new ArrayList<>(); // each key's starts after its burst over its own span, against its limit
        List<Long> late = new ArrayList<>(); // each turn after the burst: how long after its key's first start + n intervals
        long intervalMicros = periodMicros / permits;
        for (long[] t : sorted) {
            for (int n = 1 + burst; n < t.length; n++) {
                late.add(t[n] - (t[0] + (n - burst) * intervalMicros));
            }
            int most = 0;
            for (int i = 0, j = 0; i < t.length; i++) {
                while (t[i] - t[j] >= periodMicros) {
                    j++;
                }
                most = Math.max(most, i - j + 1);
            }
            mostInPeriod = Math.max(mostInPeriod, most);
            keysOver += most > permits + burst ? 1 : 0;
            keysOverByTwo += most > permits + burst + 1 ? 1 : 0;
            inWindow += Arrays.stream(t).filter(s -> s >= from && s < to).count();
            withBacklog += t[t.length - 1] >= to ? 1 : 0;
            if (t.length > 1 + burst) {
                // from its first start, which its burst shares: the turns after them are due one interval apart from there
                long span = t[t.length - 1] - t[0];
                if (span > 0) {
                    ownRates.add((t.length - 1 - burst) * (double) intervalMicros / span);
                }
            }
        }
        double window = Math.max(0, Math.min(seconds, (last - from) / 1e6));
        r.put(prefix + "jobs", (double) all);
        r.put(prefix + "spill_s", (spillEnd - first) / 1e6);
        r.put(prefix + "steady_window_s", window);
        r.put(prefix + "keys_with_backlog_through_window", (double) withBacklog);
        r.put(prefix + "steady_starts_per_s", window > 0 ? inWindow / window : 0);
        r.put(prefix + "steady_ratio_to_allowed", window > 0 ? inWindow / window / allowed : 0);
        java.util.Collections.sort(ownRates);
        java.util.Collections.sort(late);
        if (!late.isEmpty()) {
            r.put(prefix + "turn_late_median_s", late.get(late.size() / 2) / 1e6);
            r.put(prefix + "turn_late_p90_s", late.get(late.size() * 9 / 10) / 1e6);
            r.put(prefix + "turn_late_max_s", late.getLast() / 1e6);
        }
        if (!ownRates.isEmpty()) {
            r.put(prefix + "key_own_rate_median", ownRates.get(ownRates.size() / 2));
            r.put(prefix + "key_own_rate_p5", ownRates.get(ownRates.size() / 20));
        }
        // the whole drain, less each key's first start and burst (which come at once): it counts the spill's seconds
        r.put(prefix + "drain_starts_per_s", (all - (double) keys * (1 + burst)) / ((last - first) / 1e6));
        r.put(prefix + "drain_ratio_to_allowed", r.get(prefix + "drain_starts_per_s") / allowed);
        r.put(prefix + "most_in_one_period", (double) mostInPeriod);
        r.put(prefix + "permits_plus_burst", (double) permits + burst);
        r.put(prefix + "keys_over_permits_plus_burst", (double) keysOver);
        r.put(prefix + "keys_over_permits_plus_burst_plus_one", (double) keysOverByTwo);
        perSecond(prefix, sorted, first, from, to);
        rateKeys(queue, prefix + "drained_", r);
        // a key's hash expires a quarter second after three intervals past its last start (two past the next start it
        // would allow): poll until none is left, or a period and 5 s beyond that
        String pattern = "binomic:{" + queue + "}:rate:*";
        long interval = periodMillis / permits;
        long deadline = last / 1000 + 4 * interval + 5_000;
        int left = redis.scan(pattern).size();
        while (left > 0 && BenchWorker.nowMicros() / 1000 < deadline) {
            Thread.sleep(250);
            left = redis.scan(pattern).size();
        }
        r.put(prefix + "rate_keys_after_expiry", (double) left);
        r.put(prefix + "rate_keys_gone_after_last_start_s", left == 0 ? (BenchWorker.nowMicros() - last) / 1e6 : -1.0); // -1: not all gone
    }

    /** Prints the starts in each second of the drain, and where the steady window lies. */
    private static void perSecond(String prefix, List<long[]> starts, long first, long from, long to) {
        int[] n = new int[1];
        for (long[] t : starts) {
            for (long s : t) {
                int b = (int) ((s - first) / SECOND);
                if (b >= n.length) {
                    n = Arrays.copyOf(n, b + 1);
                }
                n[b]++;
            }
        }
        System.out.println(String.format(java.util.Locale.ROOT, "timeline %s starts per s from the first: %s; steady window %.1f-%.1f s",
                prefix, Arrays.toString(n), (from - first) / 1e6, (to - first) / 1e6));
    }

    /** How many rate-limit keys the queue has, and their memory: the mean of up to 100 of them, times their number. */
    private void rateKeys(String queue, String prefix, Map<String, Double> r) {
        List<String> rateKeys = redis.scan("binomic:{" + queue + "}:rate:*");
        r.put(prefix + "rate_keys", (double) rateKeys.size());
        long bytes = 0;
        int sampled = 0;
        for (int i = 0; i < Math.min(100, rateKeys.size()); i++) {
            String reply = redis.memoryUsageOrEmpty(rateKeys.get(i * rateKeys.size() / Math.min(100, rateKeys.size())));
            if (!reply.isEmpty()) { // empty: it expired since the scan
                bytes += Long.parseLong(reply);
                sampled++;
            }
        }
        if (sampled > 0) {
            r.put(prefix + "rate_key_bytes", (double) bytes / sampled);
            r.put(prefix + "rate_keys_mib", (double) bytes / sampled * rateKeys.size() / (1 << 20));
        }
    }

    /**
     * A queue concurrency limit of {@code limit}, tasks of {@code holdMillis}, {@code workers} worker
     * JVMs of concurrency {@code 2 × limit} each (so the limit, not the workers, binds), a backlog of
     * {@code bench.limitSeconds} + 4 s at {@code limit / holdMillis}. Records the most running at once
     * (from every handler's enter and exit), the throughput from 2 s after the first start over
     * {@code bench.limitSeconds} and its ratio to {@code limit / holdMillis}.
     */
    private void hold(int limit, long holdMillis, int workers, Map<String, Double> r) throws Exception {
        String prefix = "limit_hold_" + limit + "_w" + workers + "_";
        redis.flushAll();
        String queue = queues.get();
        Task<Long, Void> task = BenchLimitsWorker.holdTask(queue);
        double ideal = limit * 1000.0 / holdMillis;
        int count = (int) (ideal * (seconds + 4));
        List<Worker> started = new ArrayList<>();
        long[] calls;
        // bench.limitHoldQueues=3: each worker JVM also reads two queues with no limit and no jobs, as a worker that
        // serves several queues does; bench.limitHoldConcurrency: each JVM's concurrency (default 2 × the limit)
        int read = Integer.getInteger("bench.limitHoldQueues", 1);
        int concurrency = Integer.getInteger("bench.limitHoldConcurrency", 0) > 0 ? Integer.getInteger("bench.limitHoldConcurrency") : 2 * limit;
        if (read > 1) {
            prefix = "limit_hold_" + limit + "_w" + workers + "_q" + read + "_";
        }
        try (Binomic client = client(task)) {
            client.queues().setLimits(queue, QueueLimits.builder().concurrencyLimit(limit).build());
            client.queues().pause(queue);
            for (int i = 0; i < workers; i++) {
                started.add(Worker.start(redis, queue, "hold", concurrency, 1, 1000, holdMillis, read - 1));
            }
            r.put(prefix + "load1", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
            client.submitAll(task, java.util.Collections.nCopies(count, 0L));
            calls = commandCalls();
            client.queues().resume(queue);
            awaitDone(client, queue, count, seconds * 4L + 120);
            r.put(prefix + "load1_end", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
            long[] after = commandCalls();
            for (int c = 0; c < COUNTED.length; c++) {
                r.put(prefix + COUNTED[c] + "_per_job", (double) (after[c] - calls[c]) / count);
            }
        } finally {
            started.forEach(Worker::close);
        }
        List<long[]> events = new ArrayList<>(); // {time, +1 enter / -1 exit}
        long first = Long.MAX_VALUE;
        long allStarted = 0; // when the last JVM to start a job started its first
        List<long[]> startsByJvm = new ArrayList<>();
        for (Worker w : started) {
            List<String> lines = w.lines("h ");
            long[] starts = new long[lines.size()];
            long own = Long.MAX_VALUE;
            for (int j = 0; j < starts.length; j++) {
                String[] p = lines.get(j).split(" ");
                long enter = Long.parseLong(p[1]);
                starts[j] = enter;
                events.add(new long[] {enter, 1});
                events.add(new long[] {Long.parseLong(p[2]), -1});
                own = Math.min(own, enter);
            }
            first = Math.min(first, own);
            allStarted = Math.max(allStarted, own == Long.MAX_VALUE ? 0 : own);
            startsByJvm.add(starts);
        }
        // at one instant, exits before enters: a slot released and taken in the same microsecond is not two running
        events.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        int running = 0;
        int most = 0;
        long from = first + 2 * SECOND;
        long to = from + seconds * SECOND;
        long ended = 0;
        long sumRunning = 0; // running × µs over the window: the mean occupancy
        long previous = from;
        for (long[] e : events) {
            if (e[0] > from && previous < to) {
                long a = Math.max(previous, from);
                long b = Math.min(e[0], to);
                if (b > a) {
                    sumRunning += running * (b - a);
                }
            }
            previous = Math.max(previous, e[0]);
            running += (int) e[1];
            most = Math.max(most, running);
            if (e[1] < 0 && e[0] >= from && e[0] < to) {
                ended++;
            }
        }
        // over the whole drain too, and its longest spell without a start: a window can fall on a stall
        long lastExit = events.getLast()[0];
        long gap = 0;
        long previousEnter = first;
        for (long[] e : events) {
            if (e[1] > 0) {
                gap = Math.max(gap, e[0] - previousEnter);
                previousEnter = e[0];
            }
        }
        steady(prefix, events, allStarted, first, limit, ideal, r);
        timeline(prefix, startsByJvm, events, first, limit);
        r.put(prefix + "drain_tasks_per_s", events.size() / 2.0 / ((lastExit - first) / 1e6));
        r.put(prefix + "drain_ratio_to_ideal", events.size() / 2.0 / ((lastExit - first) / 1e6) / ideal);
        r.put(prefix + "longest_without_start_s", gap / 1e6);
        r.put(prefix + "jobs", events.size() / 2.0);
        r.put(prefix + "most_running", (double) most);
        r.put(prefix + "mean_running", (double) sumRunning / (to - from));
        r.put(prefix + "tasks_per_s", ended / (double) seconds);
        r.put(prefix + "ratio_to_ideal", ended / (double) seconds / ideal);
    }

    /** Redis commands counted per job of a binding-limit run: parks ({@code xrange}), moves back ({@code zpopmin}), scripts. */
    private static final String[] COUNTED = {"xrange", "zpopmin", "zadd", "xreadgroup", "evalsha"};

    private long[] commandCalls() {
        long[] c = new long[COUNTED.length];
        for (int j = 0; j < c.length; j++) {
            c[j] = redis.calls(COUNTED[j]);
        }
        return c;
    }

    /**
     * The throughput once every worker JVM has started a job (a long-lived worker's, without the start-up of fresh
     * JVMs), up to the last start (without the drain's tail): starts in that span per second, against the ideal; and
     * how long the start-up took, from the first start to the last JVM's first.
     */
    private static void steady(String prefix, List<long[]> events, long allStarted, long first, int limit, double ideal,
                               Map<String, Double> r) {
        long lastStart = 0;
        long starts = 0;
        for (long[] e : events) {
            if (e[1] > 0) {
                lastStart = Math.max(lastStart, e[0]);
            }
        }
        for (long[] e : events) {
            if (e[1] > 0 && e[0] >= allStarted && e[0] < lastStart) {
                starts++;
            }
        }
        r.put(prefix + "all_jvms_started_after_s", (allStarted - first) / 1e6);
        r.put(prefix + "steady_tasks_per_s", starts / ((lastStart - allStarted) / 1e6));
        r.put(prefix + "steady_ratio_to_ideal", starts / ((lastStart - allStarted) / 1e6) / ideal);
    }

    /**
     * Prints where the slots went idle: starts per JVM in each 100 ms of the first 6 s and then each second, and the
     * free slot-seconds (limit − running, summed over time) in each second of the drain.
     */
    private static void timeline(String prefix, List<long[]> startsByJvm, List<long[]> events, long first, int limit) {
        long lastExit = events.getLast()[0];
        int buckets = (int) ((lastExit - first) / 100_000) + 1;
        StringBuilder out = new StringBuilder("timeline " + prefix + " (starts per 100 ms, then per s, by JVM):");
        for (int j = 0; j < startsByJvm.size(); j++) {
            int[] n = new int[buckets];
            for (long t : startsByJvm.get(j)) {
                n[(int) ((t - first) / 100_000)]++;
            }
            out.append("\n  jvm").append(j).append(" 0-6s:");
            for (int b = 0; b < Math.min(60, buckets); b++) {
                out.append(' ').append(n[b]);
            }
            out.append(" | per s:");
            for (int b = 60; b < buckets; b += 10) {
                int sum = 0;
                for (int k = b; k < Math.min(buckets, b + 10); k++) {
                    sum += n[k];
                }
                out.append(' ').append(sum);
            }
        }
        double[] idle = new double[buckets / 10 + 1]; // free slot-seconds in each second
        int running = 0;
        long previous = first;
        for (long[] e : events) {
            for (long t = previous; t < e[0]; ) {
                long end = Math.min(e[0], first + ((t - first) / SECOND + 1) * SECOND);
                idle[(int) ((t - first) / SECOND)] += Math.max(0, limit - running) * (end - t) / 1e6;
                t = end;
            }
            previous = e[0];
            running += (int) e[1];
        }
        out.append("\n  free slot-s per s:");
        for (double v : idle) {
            out.append(String.format(java.util.Locale.ROOT, " %.1f", v));
        }
        System.out.println(out);
    }

    private Binomic client(Task<Long, Void> task) {
        return Binomic.builder().config(BinomicConfig.builder().brokerUrl(redis.url()).build()).task(task).build().start();
    }

    private static void awaitDone(Binomic client, String queue, int count, long timeoutSeconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (true) {
            QueueStats s = client.queueStats(queue);
            if (s.ready() + s.pending() + s.delayed() == 0) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(count + " jobs on " + queue + " not done after " + timeoutSeconds + " s: " + s);
            }
            Thread.sleep(100);
        }
    }

    /** A {@link BenchLimitsWorker} JVM, its standard output in a file read once it is closed. */
    private record Worker(Process process, Path out, Path err) implements AutoCloseable {
        static Worker start(BenchRedis redis, String queue, String mode, int concurrency, int permits, long periodMillis,
                            long holdMillis) throws IOException, InterruptedException {
            return start(redis, queue, mode, concurrency, permits, periodMillis, holdMillis, 0);
        }

        /** With {@code otherQueues} more queues read beside {@code queue}, empty and unlimited. */
        static Worker start(BenchRedis redis, String queue, String mode, int concurrency, int permits, long periodMillis,
                            long holdMillis, int otherQueues) throws IOException, InterruptedException {
            Path out = Files.createTempFile("binomic-bench-limits-" + mode + "-", ".out");
            Path err = Files.createTempFile("binomic-bench-limits-" + mode + "-", ".log");
            List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-preview", "-Xmx1g", "-cp", System.getProperty("java.class.path"), BenchLimitsWorker.class.getName(),
                    redis.url(), queue, mode, Integer.toString(concurrency), Integer.toString(permits), Long.toString(periodMillis),
                    Long.toString(holdMillis), Integer.toString(otherQueues)));
            Process process = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            Worker worker = new Worker(process, out, err);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(600); // a loaded 2-core machine takes minutes
            while (!Files.readString(out).contains("ready")) {
                if (!process.isAlive() || System.nanoTime() > deadline) {
                    worker.close();
                    throw new IllegalStateException("the limits worker did not start; see " + err + ": " + Files.readString(err));
                }
                Thread.sleep(50);
            }
            return worker;
        }

        long errorLines(String containing) throws IOException {
            try (var lines = Files.lines(err)) {
                return lines.filter(l -> l.contains(containing)).count();
            }
        }

        List<String> lines(String prefix) throws IOException {
            try (var lines = Files.lines(out)) {
                return lines.filter(l -> l.startsWith(prefix)).toList();
            }
        }

        @Override
        public void close() {
            // the handlers' lines are flushed every 100 ms: let the last ones out before the JVM ends
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process.destroy();
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}

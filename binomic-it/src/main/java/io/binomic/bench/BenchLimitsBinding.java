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
     * {@code keys} tenants, each limited to {@code permits} starts per {@code periodMillis}, each with
     * enough jobs for {@code bench.limitSeconds} + 4 s at its limit, submitted round-robin (every key in
     * the backlog) while the queue is paused. Records: the starts per second from 2 s after the first
     * start over {@code bench.limitSeconds} ({@code _starts_per_s}) and over the whole drain less each
     * key's first burst ({@code _drain_starts_per_s}), both against the sum of the limits; the most starts
     * of any key in any window of one period and the keys that had more than permits + burst; the
     * limits' keys in Redis midway and once drained, with their memory, and how long after the last start
     * the last of them expired.
     */
    private void keyed(int keys, int permits, long periodMillis, int workers, Map<String, Double> r) throws Exception {
        String prefix = "limit_keyed_" + keys + "_w" + workers + "_";
        redis.flushAll();
        String queue = queues.get();
        Task<Long, Void> task = BenchLimitsWorker.keyedTask(queue, permits, periodMillis);
        int perKey = (int) (permits * Math.ceil((seconds + 4) * 1000.0 / periodMillis)) + 1;
        List<Long> jobs = new ArrayList<>(keys * perKey);
        for (int j = 0; j < perKey; j++) {
            for (long k = 0; k < keys; k++) {
                jobs.add(k);
            }
        }
        double allowed = (double) keys * permits * 1000 / periodMillis;
        r.put(prefix + "allowed_per_s", allowed);
        List<Worker> started = new ArrayList<>();
        try (Binomic client = client(task)) {
            client.queues().pause(queue);
            for (int i = 0; i < workers; i++) {
                started.add(Worker.start(redis, queue, "keyed", Integer.getInteger("bench.drainConcurrency", 1000), permits, periodMillis, 0));
            }
            r.put(prefix + "load1", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
            client.submitAll(task, jobs);
            client.queues().resume(queue);
            // midway, every key's limit is in use: its state in Redis is what a tenant costs
            Thread.sleep(seconds * 500L);
            rateKeys(queue, prefix + "mid_", r);
            awaitDone(client, queue, jobs.size(), perKey * periodMillis / 1000 / permits + 120);
            r.put(prefix + "load1_end", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        } finally {
            started.forEach(Worker::close);
        }
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
        long from = first + 2 * SECOND;
        long to = from + seconds * SECOND;
        long inWindow = 0;
        int mostInPeriod = 0;
        int keysOver = 0;
        long periodMicros = periodMillis * 1000;
        for (List<Long> starts : byKey.values()) {
            long[] t = starts.stream().mapToLong(Long::longValue).sorted().toArray();
            int most = 0;
            for (int i = 0, j = 0; i < t.length; i++) {
                while (t[i] - t[j] >= periodMicros) {
                    j++;
                }
                most = Math.max(most, i - j + 1);
            }
            mostInPeriod = Math.max(mostInPeriod, most);
            keysOver += most > permits + 1 ? 1 : 0; // the default burst is 1
            inWindow += Arrays.stream(t).filter(s -> s >= from && s < to).count();
        }
        double window = Math.min(seconds, (last - from) / 1e6);
        r.put(prefix + "jobs", (double) all);
        r.put(prefix + "starts_per_s", inWindow / window);
        r.put(prefix + "window_s", window);
        r.put(prefix + "ratio_to_allowed", inWindow / window / allowed);
        // the first start of each key and its burst come at once; after them each key's starts are spaced by its limit
        r.put(prefix + "drain_starts_per_s", (all - (double) keys * (1 + 1)) / ((last - first) / 1e6));
        r.put(prefix + "drain_ratio_to_allowed", r.get(prefix + "drain_starts_per_s") / allowed);
        r.put(prefix + "most_in_one_period", (double) mostInPeriod);
        r.put(prefix + "permits_plus_burst", (double) permits + 1);
        r.put(prefix + "keys_over_permits_plus_burst", (double) keysOver);
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
        try (Binomic client = client(task)) {
            client.queues().setLimits(queue, QueueLimits.builder().concurrencyLimit(limit).build());
            client.queues().pause(queue);
            for (int i = 0; i < workers; i++) {
                started.add(Worker.start(redis, queue, "hold", 2 * limit, 1, 1000, holdMillis));
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
            Path out = Files.createTempFile("binomic-bench-limits-" + mode + "-", ".out");
            Path err = Files.createTempFile("binomic-bench-limits-" + mode + "-", ".log");
            List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-preview", "-Xmx1g", "-cp", System.getProperty("java.class.path"), BenchLimitsWorker.class.getName(),
                    redis.url(), queue, mode, Integer.toString(concurrency), Integer.toString(permits), Long.toString(periodMillis),
                    Long.toString(holdMillis)));
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

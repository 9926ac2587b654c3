package io.binomic.bench;

import io.binomic.api.BinomicConfig;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.core.BatchBuilder;
import io.binomic.core.Binomic;
import io.binomic.core.Workflow;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * What batches and workflows cost against plain jobs ({@code -Dbench.only=batches}). One worker JVM
 * ({@link BenchBatchesWorker}, concurrency {@code bench.drainConcurrency}) drains every row of a run,
 * warmed first. Rows, each from a fresh server state:
 * <ul>
 *   <li>{@code bb_plain_}: {@code bench.batchJobs} (10,000) untracked no-op jobs by {@code submitAll};</li>
 *   <li>{@code bb_tracked_}: as many tracked ones (a job record kept, as a batch's child has): the fair
 *       baseline of a batch, whose children are tracked;</li>
 *   <li>{@code bb_batch_}: one batch of as many children with an {@code onComplete} callback;</li>
 *   <li>{@code bb_wf_wide_} and {@code bb_wf_layered_}: {@code bench.workflows} (5) workflows of 1,000 nodes:
 *       one root, 998 nodes on it and a join of those; or 10 layers of 100, each node depending on two of
 *       the layer before.</li>
 * </ul>
 * Each: Redis CPU per job of the submit and of the drain (INFO cpu), jobs/s from the first start to
 * the queue found empty, the scripts' execution time per job (INFO commandstats), and ratios to the
 * plain and the tracked rows of the same run. Then callback lag: {@code bench.lagBatches} (40) batches
 * of {@code bench.lagBatchSize} (500), one at a time, from the last child's handler end to the
 * callback's start, against the floor: an ordinary job submitted at that end, from submit to start.
 * The even batches submit it off the last child's handler ({@code bb_callback_}); the odd ones in it,
 * before the handler returns, which holds back that child's outcome by the submit's round trip
 * ({@code bb_callback_inline_}). For the even ones, the lag's parts ({@link TimingBroker}): the last
 * child's outcome waiting for its settle call, that call, the callback's fetch after it, the hand-off
 * to the handler, the outcomes in that call; and the scripts' Redis time per batch. Then how long one
 * submit blocks Redis: another connection's {@code PING}s,
 * one every half millisecond, their longest wait during the submit of each row's jobs.
 */
final class BenchBatches {
    private static final int JOBS = Integer.getInteger("bench.batchJobs", 10_000);
    private static final int WORKFLOWS = Integer.getInteger("bench.workflows", 5);
    private static final int LAG_BATCHES = Integer.getInteger("bench.lagBatches", 40);
    private static final int LAG_BATCH_SIZE = Integer.getInteger("bench.lagBatchSize", 500);
    /** Only the callback lag (its parts included), without the drain rows and the submits' blocking. */
    private static final boolean LAG_ONLY = Boolean.getBoolean("bench.lagOnly");
    private static final int CONCURRENCY = Integer.getInteger("bench.drainConcurrency", 1000);

    /**
     * The parts of a callback's lag, as the worker prints them ({@code cbparts}): the last child's outcome waiting
     * for its settle call, that call, the fetch returning the callback after it, the fetch to the handler; the
     * outcomes in that call, whether the fetch was already blocked when that call ended, and how long a settle
     * call had been under way when the last child ended (-1: none was).
     */
    private static final String[] PARTS = {"settle_wait_us", "settle_call_us", "pickup_us", "handoff_us", "settle_outcomes",
        "fetch_waiting", "settling_at_end_us"};

    private BenchBatches() { }

    /** The workflow number {@code number} of a row: {@link BenchBatchesWorker#WIDE} or {@link BenchBatchesWorker#LAYERED}. */
    static Workflow workflow(String queue, long kind, int number) {
        Task<Long, Void> task = BenchBatchesWorker.nodeTask(queue);
        Workflow.Builder b = Workflow.builder();
        for (int i = 0; i < BenchBatchesWorker.NODES; i++) {
            long argument = BenchBatchesWorker.nodeArgument(kind, number, i);
            int[] deps = BenchBatchesWorker.dependencies(kind, i);
            if (deps.length == 0) {
                b.add("n" + i, task, argument);
            } else {
                b.add("n" + i, task, argument, Workflow.dependsOn(Arrays.stream(deps).mapToObj(d -> "n" + d).toArray(String[]::new)));
            }
        }
        return b.build();
    }

    static void measure(BenchRedis redis, Supplier<String> nextQueue, Map<String, Double> r) throws Exception {
        try (Worker worker = Worker.start(redis.url())) {
            if (LAG_ONLY) {
                callbackLag(redis, worker, nextQueue, r);
                return;
            }
            row(redis, worker, nextQueue, "plain", r);
            row(redis, worker, nextQueue, "tracked", r);
            row(redis, worker, nextQueue, "batch", r);
            row(redis, worker, nextQueue, "wf_wide", r);
            row(redis, worker, nextQueue, "wf_layered", r);
            for (String row : List.of("batch", "wf_wide", "wf_layered")) {
                String p = "bb_" + row + "_";
                r.put(p + "to_plain_redis_cpu", r.get(p + "redis_cpu_us_per_job") / r.get("bb_plain_redis_cpu_us_per_job"));
                r.put(p + "to_tracked_redis_cpu", r.get(p + "redis_cpu_us_per_job") / r.get("bb_tracked_redis_cpu_us_per_job"));
                r.put(p + "to_plain_drain", r.get(p + "jobs_per_s") / r.get("bb_plain_jobs_per_s"));
                r.put(p + "to_tracked_drain", r.get(p + "jobs_per_s") / r.get("bb_tracked_jobs_per_s"));
            }
            r.put("bb_tracked_to_plain_redis_cpu", r.get("bb_tracked_redis_cpu_us_per_job") / r.get("bb_plain_redis_cpu_us_per_job"));
            r.put("bb_tracked_to_plain_drain", r.get("bb_tracked_jobs_per_s") / r.get("bb_plain_jobs_per_s"));
            callbackLag(redis, worker, nextQueue, r);
        }
        for (String row : List.of("plain", "tracked", "batch", "wf_wide", "wf_layered")) {
            blocking(redis, nextQueue.get(), row, r);
        }
    }

    /** Submits a row's jobs on {@code queue} (callbacks on {@code callbacks}); returns how many jobs. */
    private static int submit(Binomic client, String row, String queue, String callbacks) {
        switch (row) {
            case "plain" -> client.submitAll(BenchBatchesWorker.plainTask(queue), Collections.nCopies(JOBS, 0L));
            case "tracked" -> client.submitAll(BenchBatchesWorker.trackedTask(queue), Collections.nCopies(JOBS, 0L));
            case "batch" -> {
                BatchBuilder batch = client.batch().onComplete(BenchBatchesWorker.callbackTask(callbacks), -1L);
                Task<Long, Void> child = BenchBatchesWorker.childTask(queue);
                for (int i = 0; i < JOBS; i++) {
                    batch.add(child, -1L);
                }
                batch.submit();
            }
            default -> {
                long kind = row.equals("wf_wide") ? BenchBatchesWorker.WIDE : BenchBatchesWorker.LAYERED;
                for (int w = 0; w < WORKFLOWS; w++) {
                    client.submit(workflow(queue, kind, w));
                }
                return WORKFLOWS * BenchBatchesWorker.NODES;
            }
        }
        return JOBS;
    }

    private static void row(BenchRedis redis, Worker worker, Supplier<String> nextQueue, String row, Map<String, Double> r)
            throws Exception {
        redis.flushAll();
        String queue = nextQueue.get();
        String callbacks = nextQueue.get();
        String p = "bb_" + row + "_";
        try (Binomic client = client(redis)) {
            double cpu0 = redis.cpuSeconds();
            Map<String, Long> usec0 = redis.usecByCommand();
            int jobs = submit(client, row, queue, callbacks);
            double cpu1 = redis.cpuSeconds();
            Map<String, Long> usec1 = redis.usecByCommand();
            worker.send("serve " + queue + " " + callbacks + " 0");
            long first = Long.parseLong(worker.awaitLine("first-start", 60).split(" ")[1]);
            awaitEmpty(client, queue, 300);
            long last = BenchWorker.nowMicros();
            awaitEmpty(client, callbacks, 60);
            double cpu2 = redis.cpuSeconds();
            Map<String, Long> usec2 = redis.usecByCommand();
            worker.send("stop");
            String[] wf = worker.awaitLine("wf ", 60).split(" ");
            worker.awaitLine("stopped", 60);
            r.put(p + "jobs", (double) jobs);
            r.put(p + "submit_redis_cpu_us_per_job", (cpu1 - cpu0) * 1e6 / jobs);
            r.put(p + "drain_redis_cpu_us_per_job", (cpu2 - cpu1) * 1e6 / jobs);
            r.put(p + "redis_cpu_us_per_job", (cpu2 - cpu0) * 1e6 / jobs);
            r.put(p + "jobs_per_s", jobs / ((last - first) / 1e6));
            r.put(p + "submit_scripts_us_per_job", (double) (scripts(usec1) - scripts(usec0)) / jobs);
            r.put(p + "drain_scripts_us_per_job", (double) (scripts(usec2) - scripts(usec1)) / jobs);
            // where the drain's Redis time went, per job: each command's own (a script's calls counted again inside its evalsha)
            usec2.forEach((command, usec) -> {
                double perJob = (double) (usec - usec1.getOrDefault(command, 0L)) / jobs;
                if (perJob >= 0.1 && !command.startsWith("eval")) {
                    r.put(p + "drain_usec_" + command, perJob);
                }
            });
            if (row.startsWith("wf_")) {
                r.put(p + "release_lag_p50_ms", Long.parseLong(wf[1]) / 1e3);
                r.put(p + "release_lag_p99_ms", Long.parseLong(wf[2]) / 1e3);
                r.put(p + "release_lag_max_ms", Long.parseLong(wf[3]) / 1e3);
                if (row.equals("wf_wide")) {
                    r.put(p + "join_lag_max_ms", Long.parseLong(wf[5]) / 1e3);
                }
            }
        }
    }

    /** The Redis time of the scripts so far, µs: EVAL and EVALSHA with the commands they ran. */
    private static long scripts(Map<String, Long> usec) {
        return usec.getOrDefault("eval", 0L) + usec.getOrDefault("evalsha", 0L);
    }

    /**
     * {@code bench.lagBatches} batches of {@code bench.lagBatchSize}, one at a time: the last child's end to the
     * callback's start, and the floor (an ordinary job submitted at that end, submit to start).
     */
    private static void callbackLag(BenchRedis redis, Worker worker, Supplier<String> nextQueue, Map<String, Double> r)
            throws Exception {
        redis.flushAll();
        String queue = nextQueue.get();
        String callbacks = nextQueue.get();
        long[] lags = new long[LAG_BATCHES];
        long[] floors = new long[LAG_BATCHES];
        long[][] parts = new long[PARTS.length][LAG_BATCHES];
        try (Binomic client = client(redis)) {
            worker.send("serve " + queue + " " + callbacks + " " + LAG_BATCH_SIZE);
            worker.awaitLine("serving", 60);
            Task<Long, Void> child = BenchBatchesWorker.childTask(queue);
            Map<String, Long> usec0 = redis.usecByCommand();
            for (int b = 0; b < LAG_BATCHES; b++) {
                BatchBuilder batch = client.batch().onComplete(BenchBatchesWorker.callbackTask(callbacks), (long) b);
                for (int i = 0; i < LAG_BATCH_SIZE; i++) {
                    batch.add(child, (long) b);
                }
                batch.submit();
                long lag = -1;
                long floor = -1;
                while (lag < 0 || floor < 0) {
                    String[] line = worker.awaitLine("", 120).split(" ");
                    if (line[0].equals("cbparts") && Long.parseLong(line[1]) == b) {
                        if (LAG_ONLY) {
                            System.err.println(String.join(" ", line)); // each batch's parts, to see where a slow one went
                        }
                        for (int i = 0; i < PARTS.length; i++) {
                            parts[i][b] = Long.parseLong(line[2 + i]);
                        }
                    } else if (line[0].equals("cb") && Long.parseLong(line[1]) == b) {
                        lag = Long.parseLong(line[2]);
                    } else if (line[0].equals("floor")) {
                        floor = Long.parseLong(line[1]);
                    }
                }
                lags[b] = lag;
                floors[b] = floor;
            }
            // the scripts' Redis time per batch (its submit, its children's starts and settles, the callback's), ms
            r.put("bb_callback_scripts_ms_per_batch", (scripts(redis.usecByCommand()) - scripts(usec0)) / 1e3 / LAG_BATCHES);
            worker.send("stop");
            worker.awaitLine("stopped", 60);
        }
        // even batches: the floor job submitted off the last child's handler; odd ones: in it, before it returns
        lagFigures("bb_callback_", even(lags, 0), even(floors, 0), r);
        lagFigures("bb_callback_inline_", even(lags, 1), even(floors, 1), r);
        // where the lag went (even batches): in time parts (µs), p50 and max; in counts, the median
        for (int i = 0; i < PARTS.length; i++) {
            long[] part = even(parts[i], 0);
            Arrays.sort(part);
            if (PARTS[i].endsWith("_us")) {
                r.put("bb_callback_" + PARTS[i].replace("_us", "_p50_ms"), percentile(part, 0.50) / 1e3);
                r.put("bb_callback_" + PARTS[i].replace("_us", "_max_ms"), part[part.length - 1] / 1e3);
            } else {
                r.put("bb_callback_" + PARTS[i] + "_p50", (double) percentile(part, 0.50));
            }
        }
    }

    /** Every other value of {@code all}, from {@code first}. */
    private static long[] even(long[] all, int first) {
        return java.util.stream.IntStream.range(0, all.length).filter(i -> i % 2 == first).mapToLong(i -> all[i]).toArray();
    }

    private static void lagFigures(String p, long[] lags, long[] floors, Map<String, Double> r) {
        Arrays.sort(lags);
        Arrays.sort(floors);
        r.put(p + "lag_p50_ms", percentile(lags, 0.50) / 1e3);
        r.put(p + "lag_p99_ms", percentile(lags, 0.99) / 1e3);
        r.put(p + "floor_p50_ms", percentile(floors, 0.50) / 1e3);
        r.put(p + "floor_p99_ms", percentile(floors, 0.99) / 1e3);
    }

    private static long percentile(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }

    /**
     * How long the submit of a row's jobs keeps Redis from answering others: the longest wait of another
     * connection's {@code PING}s (one every half millisecond) during it, the submit's own time, and its
     * scripts' execution time.
     */
    private static void blocking(BenchRedis redis, String queue, String row, Map<String, Double> r) throws Exception {
        redis.flushAll();
        String p = "bb_" + row + "_submit_";
        try (Binomic client = client(redis); Pinger pinger = new Pinger(URI.create(redis.url()))) {
            client.queueStats(queue); // the connections open before the measure
            Map<String, Long> usec0 = redis.usecByCommand();
            pinger.start();
            long start = System.nanoTime();
            submit(client, row, queue, queue + "-cb");
            long nanos = System.nanoTime() - start;
            long longest = pinger.stop();
            Map<String, Long> usec1 = redis.usecByCommand();
            r.put(p + "ms", nanos / 1e6);
            r.put(p + "ping_max_ms", longest / 1e6);
            r.put(p + "scripts_ms", (scripts(usec1) - scripts(usec0)) / 1e3);
        }
        redis.flushAll();
    }

    /** Waits until the queue has nothing ready and nothing pending. */
    private static void awaitEmpty(Binomic client, String queue, int timeoutSeconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        for (QueueStats s = client.queueStats(queue); s.ready() > 0 || s.pending() > 0; s = client.queueStats(queue)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("queue " + queue + " not drained after " + timeoutSeconds + " s: " + s);
            }
            Thread.sleep(5);
        }
    }

    private static Binomic client(BenchRedis redis) {
        return Binomic.builder().config(BinomicConfig.builder().brokerUrl(redis.url()).build()).build().start();
    }

    /** Another client's PINGs on a connection of its own, one every half millisecond; their longest round trip. */
    private static final class Pinger implements AutoCloseable {
        private final Socket socket;
        private final AtomicBoolean running = new AtomicBoolean();
        private final AtomicLong longest = new AtomicLong();
        private Thread thread;

        Pinger(URI redis) throws IOException {
            socket = new Socket(redis.getHost(), redis.getPort());
            socket.setTcpNoDelay(true);
        }

        void start() {
            running.set(true);
            thread = Thread.ofPlatform().name("bench-pinger").start(() -> {
                try {
                    OutputStream out = socket.getOutputStream();
                    InputStream in = socket.getInputStream();
                    byte[] ping = "PING\r\n".getBytes(StandardCharsets.US_ASCII);
                    while (running.get()) {
                        long t0 = System.nanoTime();
                        out.write(ping);
                        out.flush();
                        for (int c = in.read(); c != '\n'; c = in.read()) {
                            if (c < 0) {
                                throw new IOException("redis closed the connection");
                            }
                        }
                        longest.accumulateAndGet(System.nanoTime() - t0, Math::max);
                        LockSupport.parkNanos(500_000);
                    }
                } catch (IOException e) {
                    longest.set(Long.MAX_VALUE);
                }
            });
        }

        /** Stops pinging; the longest round trip, ns. */
        long stop() throws InterruptedException {
            running.set(false);
            thread.join();
            return longest.get();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** The {@link BenchBatchesWorker} JVM, its output read line by line and its commands written to its input. */
    private static final class Worker extends BenchProcess {
        private Worker(List<String> command) throws IOException {
            super("the batches worker", command, "binomic-bench-batches-");
        }

        static Worker start(String url) throws IOException, InterruptedException {
            List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-preview", "-Xmx1g", "-cp", System.getProperty("java.class.path"), BenchBatchesWorker.class.getName(),
                    url, Integer.toString(CONCURRENCY)));
            Worker worker = new Worker(command);
            worker.awaitLine("ready", 300);
            return worker;
        }
    }
}

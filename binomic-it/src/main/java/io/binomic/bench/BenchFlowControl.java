package io.binomic.bench;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.Uniqueness;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What unique jobs and pause cost on Redis, and that a submit or a worker that uses
 * neither pays nothing for them: one submit at a time, plain and unique with a new key (in turns),
 * a duplicate, in bulk, counting Redis' CPU and the commands the client sent (each one round trip here); and
 * how many reads of the paused state an idle worker makes per second.
 */
final class BenchFlowControl {
    private static final int SUBMITS = Integer.getInteger("bench.flowSubmits", 20_000);
    private static final int IDLE_SECONDS = 5;
    /** The turns one submit at a time, plain and unique, takes each. */
    private static final int TURNS = 10;

    private BenchFlowControl() { }

    static void measure(BenchRedis redis, String queue, String idleQueue, Map<String, Double> r) throws Exception {
        Task<Long, Void> plain = Task.builder("flow-plain", Long.class).queue(queue).build();
        Task<Long, Void> unique = Task.builder("flow-unique", Long.class).queue(queue)
                .unique(Uniqueness.whileQueued(Duration.ofHours(1)), n -> Long.toString(n)).build();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url()).build();
        try (Binomic client = Binomic.builder().config(config).task(plain).build().start()) {
            for (int i = 0; i < 2_000; i++) { // compiles both paths
                client.submit(plain, (long) -i);
                client.submit(unique, (long) -i);
            }
            // Plain and unique in turns of a tenth each: the load of this shared machine moves within
            // seconds, and a ratio of two phases measured one after the other moved with it.
            Totals plainTotals = new Totals();
            Totals uniqueTotals = new Totals();
            int turn = SUBMITS / TURNS;
            for (int t = 0; t < TURNS; t++) {
                int from = t * turn;
                plainTotals.add(redis, turn, () -> {
                    for (int i = from; i < from + turn; i++) {
                        client.submit(plain, (long) i);
                    }
                });
                uniqueTotals.add(redis, turn, () -> {
                    for (int i = from; i < from + turn; i++) {
                        client.submit(unique, (long) i);
                    }
                });
            }
            plainTotals.put(r, "submit_plain");
            uniqueTotals.put(r, "submit_unique_new");
            one(redis, r, "submit_unique_duplicate", () -> {
                for (int i = 0; i < SUBMITS; i++) {
                    client.submit(unique, 7L);
                }
            });
            List<Long> bulk = new ArrayList<>(SUBMITS);
            for (int i = 0; i < SUBMITS; i++) {
                bulk.add((long) SUBMITS + i);
            }
            one(redis, r, "submit_all_plain", () -> client.submitAll(plain, bulk));
            one(redis, r, "submit_all_unique", () -> client.submitAll(unique, bulk));
            r.put("submit_unique_to_plain_redis_cpu", r.get("submit_unique_new_redis_cpu_us") / r.get("submit_plain_redis_cpu_us"));
            r.put("submit_unique_to_plain_exec", r.get("submit_unique_new_exec_us") / r.get("submit_plain_exec_us"));
        }
        Task<Long, Void> idle = Task.builder("flow-idle", Long.class).queue(idleQueue).build();
        BinomicConfig workerConfig = BinomicConfig.builder().brokerUrl(redis.url())
                .worker(WorkerConfig.builder().queues(idleQueue).build()).build();
        try (Binomic worker = Binomic.builder().config(workerConfig).handle(idle, n -> null).build().start()) {
            worker.startWorker();
            Thread.sleep(1000);
            long reads0 = redis.calls("smembers");
            Thread.sleep(IDLE_SECONDS * 1000L);
            r.put("pause_state_reads_per_worker_s", (double) (redis.calls("smembers") - reads0) / IDLE_SECONDS);
        }
    }

    private static void one(BenchRedis redis, Map<String, Double> r, String key, Runnable submits) {
        Totals totals = new Totals();
        totals.add(redis, SUBMITS, submits);
        totals.put(r, key);
    }

    /** What Redis spent on the submits of one or more turns, and the commands the client sent. */
    private static final class Totals {
        private long submits;
        private long commands;
        private long execUsec;
        private double cpuSeconds;
        private long nanos;

        void add(BenchRedis redis, int count, Runnable submits) {
            long commands0 = redis.totalCommands();
            Map<String, Long> usec0 = redis.usecByCommand();
            double cpu0 = redis.cpuSeconds();
            long start = System.nanoTime();
            submits.run();
            nanos += System.nanoTime() - start;
            double cpu1 = redis.cpuSeconds();
            long commands1 = redis.totalCommands();
            Map<String, Long> usec1 = redis.usecByCommand();
            cpuSeconds += cpu1 - cpu0;
            commands += commands1 - commands0 - 2; // less the two INFO calls of the measure
            // the time Redis spent executing them, without reading requests and writing replies (the same per
            // round trip for both, and what moves most with the machine's load): the scripts' (their calls
            // inside), or the plain XADDs'
            long scripts = usec1.getOrDefault("evalsha", 0L) - usec0.getOrDefault("evalsha", 0L);
            execUsec += scripts > 0 ? scripts : usec1.getOrDefault("xadd", 0L) - usec0.getOrDefault("xadd", 0L);
            this.submits += count;
        }

        void put(Map<String, Double> r, String key) {
            r.put(key + "_exec_us", (double) execUsec / submits);
            r.put(key + "_per_s", submits / (nanos / 1e9));
            r.put(key + "_redis_cpu_us", cpuSeconds * 1e6 / submits);
            r.put(key + "_commands", (double) commands / submits);
        }
    }
}

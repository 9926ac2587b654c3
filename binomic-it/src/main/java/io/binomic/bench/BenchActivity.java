package io.binomic.bench;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * What the dashboard's charts cost: the per-minute activity buckets workers add to
 * Redis. A drain of {@code bench.activityTasks} no-op tasks by one worker counts the activity
 * writes it made (5 HINCRBY each, from INFO commandstats) per 1,000 tasks, and redis-benchmark
 * runs the write's script alone for its Redis CPU per call: together, the Redis CPU per task.
 */
final class BenchActivity {
    private static final int TASKS = Integer.getInteger("bench.activityTasks", 200_000);
    private static final int SCRIPT_CALLS = 50_000;
    /** The HINCRBYs of one bucket in one activity write. */
    private static final int HINCRBY_PER_WRITE = 5;

    private BenchActivity() { }

    static void measure(BenchRedis redis, String queue, Map<String, Double> r) throws Exception {
        Task<Long, Void> task = Task.builder("activity-noop", Long.class).queue(queue).build();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url())
                .worker(WorkerConfig.builder().queues(queue).concurrency(1000).build()).build();
        try (Binomic client = Binomic.builder().config(config).handle(task, n -> null).build().start()) {
            List<Long> batch = Collections.nCopies(10_000, 0L);
            for (int sent = 0; sent < TASKS; sent += batch.size()) {
                client.submitAll(task, batch);
            }
            long writes0 = redis.calls("hincrby");
            long start = System.nanoTime();
            client.startWorker();
            while (client.taskStats().stream().mapToLong(t -> t.succeeded()).sum() < TASKS) {
                Thread.sleep(20);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            Thread.sleep(6_000); // the last counts go out with the next flush
            double writes = (double) (redis.calls("hincrby") - writes0) / HINCRBY_PER_WRITE;
            r.put("activity_drain_tasks_per_s", TASKS / seconds);
            r.put("activity_writes", writes);
            r.put("activity_writes_per_1000_tasks", writes * 1000 / TASKS);
        }
        String script = (String) accessible(Class.forName("io.binomic.redis.internal.LuaScripts").getDeclaredField("ADD_ACTIVITY")).get(null);
        List<String> call = new ArrayList<>(List.of("EVAL", script, "1", "bench:{activity}:bucket",
                Long.toString(Duration.ofHours(2).toMillis()), "100", "2", "1", "1", "5000000", "90000"));
        double cpu0 = redis.cpuSeconds();
        redis.benchmark(SCRIPT_CALLS, call);
        double perWrite = (redis.cpuSeconds() - cpu0) * 1e6 / SCRIPT_CALLS;
        r.put("activity_redis_cpu_us_per_write", perWrite);
        r.put("activity_redis_cpu_us_per_task", perWrite * r.get("activity_writes") / TASKS);
    }

    private static java.lang.reflect.Field accessible(java.lang.reflect.Field field) {
        field.setAccessible(true); // the script is package-private in binomic-redis; the bench runs on the class path
        return field;
    }
}

package io.binomic.it;

import io.binomic.api.BinomicConfig;
import io.binomic.api.RateLimit;
import io.binomic.api.Uniqueness;
import io.binomic.api.Task;
import io.binomic.api.TaskDefaults;
import io.binomic.api.TaskHandler;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The application of the flow-limit tests ({@link LimitsIT}), in the test JVM and in spawned worker
 * JVMs alike: a task with a rate limit or a concurrency limit whose handler logs each run's start
 * and end (epoch ms, this JVM's pid) in a Redis list, {@code it-limits:<queue>:log}, as
 * {@code S|E n pid ms}.
 */
final class LimitedApp {
    private LimitedApp() { }

    /** One job: its number, and how long it runs. */
    record Work(int n, long sleepMillis) { }

    static Task<Work, Void> task(String queue, String kind, int limit) {
        Task.Builder<Work, Void> b = Task.builder("limited", Work.class).queue(queue).maxAttempts(10);
        return switch (kind) {
            case "rate" -> b.rateLimit(RateLimit.perSecond(limit)).build();
            case "slots" -> b.concurrencyLimit(limit).build();
            case "none" -> b.build(); // limited by its queue's limits only (binomic queue limit)
            // one job per n while queued or running; 'limit' is the key's TTL in seconds
            case "unique" -> b.unique(Uniqueness.whileQueuedOrRunning(Duration.ofSeconds(limit)), w -> "n" + w.n()).build();
            default -> throw new IllegalArgumentException(kind);
        };
    }

    static String logKey(String queue) {
        return "it-limits:" + queue + ":log";
    }

    static TaskHandler<Work, Void> handler(String host, int port, String queue) {
        long pid = ProcessHandle.current().pid();
        return work -> {
            Resp.call(host, port, "RPUSH", logKey(queue), "S " + work.n() + " " + pid + " " + System.currentTimeMillis());
            Thread.sleep(work.sleepMillis());
            Resp.call(host, port, "RPUSH", logKey(queue), "E " + work.n() + " " + pid + " " + System.currentTimeMillis());
            return null;
        };
    }

    static BinomicConfig config(String url, String queue, Duration lease) {
        return BinomicConfig.builder().brokerUrl(url).schedulePeriodicTasks(false)
                .taskDefaults(TaskDefaults.builder().taskTimeout(Duration.ofSeconds(60)).build())
                .worker(WorkerConfig.builder().queues(queue).concurrency(8).leaseTimeout(lease)
                        .pollTimeout(Duration.ofMillis(200)).reclaimInterval(Duration.ofMillis(500))
                        .shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
    }

    /** One run as the log tells it; {@code end} is -1 while it has none (running, or its JVM was killed). */
    record Run(int n, long pid, long start, long end) { }

    static List<Run> runs(RedisServer redis, String queue) {
        List<Run> runs = new ArrayList<>();
        java.util.Map<String, Integer> open = new java.util.HashMap<>();
        for (Object o : (List<?>) redis.call("LRANGE", logKey(queue), "0", "-1")) {
            String[] f = String.valueOf(o).split(" ");
            int n = Integer.parseInt(f[1]);
            long pid = Long.parseLong(f[2]);
            long at = Long.parseLong(f[3]);
            if (f[0].equals("S")) {
                open.put(n + " " + pid, runs.size());
                runs.add(new Run(n, pid, at, -1));
            } else {
                Integer i = open.remove(n + " " + pid);
                if (i != null) {
                    Run r = runs.get(i);
                    runs.set(i, new Run(r.n(), r.pid(), r.start(), at));
                }
            }
        }
        return runs;
    }

    /** Main of a worker JVM: redis host, port, queue, kind (rate|slots), limit, lease ms. */
    public static void main(String[] args) throws InterruptedException {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        String queue = args[2];
        Task<Work, Void> task = task(queue, args[3], Integer.parseInt(args[4]));
        Binomic binomic = Binomic.builder().config(config("redis://" + host + ":" + port, queue, Duration.ofMillis(Long.parseLong(args[5]))))
                .handle(task, handler(host, port, queue)).build().start();
        binomic.startWorker();
        System.out.println("WORKER READY pid=" + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}

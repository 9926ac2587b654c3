package io.binomic.it;

import io.binomic.api.Backoff;
import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.TaskDefaults;
import io.binomic.api.TaskHandler;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import java.time.Duration;

/**
 * The application the end-to-end and fault tests run, in the test JVM and in spawned worker JVMs
 * alike: one task, {@code job}, that records every execution in a {@link Ledger}, sleeps, and
 * fails its first {@code failures} executions.
 */
final class TestApp {
    private TestApp() { }

    /**
     * One unit of test work.
     *
     * @param n the job's number, unique within a test
     * @param sleepMillis how long the handler runs
     * @param failures how many executions fail (retryably) before one succeeds
     * @param cpuBound spin the CPU for {@code sleepMillis} instead of sleeping (a virtual thread that
     *        never blocks keeps its carrier: nothing else runs there meanwhile)
     */
    record Job(int n, long sleepMillis, int failures, boolean cpuBound) {
        Job(int n, long sleepMillis, int failures) {
            this(n, sleepMillis, failures, false);
        }
    }

    /** Busy-waits: no blocking call, so the virtual thread is never unmounted. */
    static long spin(long millis) {
        long end = System.nanoTime() + millis * 1_000_000;
        long spins = 0;
        while (System.nanoTime() < end) {
            spins++;
        }
        return spins;
    }

    static final String TASK = "job";

    /**
     * Where the job task records its executions: the Redis {@link Ledger} of the fault tests, or the
     * chaos suite's per-JVM files ({@link ChaosLedger}), which must not live in the Redis under test.
     */
    interface Runs {
        /** An execution of job {@code n} starts; returns the how-manyth it is (its planned failures count against it). */
        long started(int n);

        void sawAttempt(int n, int attempt);

        void finished(int n);

        /** The execution of job {@code n} is about to throw its planned failure. */
        default void failing(int n) {
        }
    }

    /**
     * The task definition, shared by producers and workers: no handler code. A producer submits
     * it as it is; a worker binds {@link #handler(Runs)} to it.
     */
    static Task<Job, Void> job(String queue, Duration backoff) {
        return job(TASK, queue, backoff, null);
    }

    /** The job task under another name; a DELAY task enqueued {@code delay} after submission when {@code delay} is not null. */
    static Task<Job, Void> job(String name, String queue, Duration backoff, Duration delay) {
        Task.Builder<Job, Void> builder = Task.builder(name, Job.class).queue(queue).maxAttempts(5).backoff(Backoff.fixed(backoff));
        return (delay == null ? builder : builder.delay(delay)).build();
    }

    /** The code of the job task, bound where a worker is built: records every execution in {@code ledger}. */
    static TaskHandler<Job, Void> handler(Runs ledger) {
        return job -> {
            long run = ledger.started(job.n());
            ledger.sawAttempt(job.n(), TaskContext.current().attempt());
            if (job.cpuBound()) {
                spin(job.sleepMillis());
            } else {
                Thread.sleep(job.sleepMillis());
            }
            if (run <= job.failures()) {
                ledger.failing(job.n());
                throw new IllegalStateException("planned failure " + run + " of job " + job.n());
            }
            ledger.finished(job.n());
            return null;
        };
    }

    /** An INTERVAL task firing every {@code period}. */
    static Task<Void, Void> tick(String name, String queue, Duration period) {
        return Task.builder(name).queue(queue).interval(period).maxAttempts(5).build();
    }

    /** The code of a tick task: each tick's execution is recorded as job {@code n}. */
    static TaskHandler.NoArgument tickHandler(Runs ledger, int n) {
        return () -> {
            ledger.started(n);
            ledger.finished(n);
        };
    }

    static BinomicConfig config(String redisUrl, String queue, Duration lease) {
        return config(io.binomic.api.BrokerConfig.builder().url(redisUrl).build(), queue, lease);
    }

    static BinomicConfig config(io.binomic.api.BrokerConfig broker, String queue, Duration lease) {
        return BinomicConfig.builder()
                .broker(broker)
                .schedulePeriodicTasks(false)
                .taskDefaults(TaskDefaults.builder().taskTimeout(Duration.ofSeconds(60)).build())
                .worker(WorkerConfig.builder().queues(queue).concurrency(8).leaseTimeout(lease)
                        .pollTimeout(Duration.ofMillis(200)).reclaimInterval(Duration.ofMillis(500))
                        .shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
    }

    /** A started client, with the job task's handler bound, and the job task's definition. */
    record App(Binomic binomic, Task<Job, Void> job) implements AutoCloseable {
        @Override
        public void close() {
            binomic.close();
        }
    }

    /** A started client that can run the job task (its worker is started by the caller), on {@code queue}. */
    static App client(RedisServer redis, String queue, Duration lease, Duration backoff) {
        Ledger ledger = new Ledger(redis.host(), redis.port(), queue);
        Task<Job, Void> job = job(queue, backoff);
        return new App(Binomic.builder().config(config(redis.url(), queue, lease)).handle(job, handler(ledger)).build().start(), job);
    }
}

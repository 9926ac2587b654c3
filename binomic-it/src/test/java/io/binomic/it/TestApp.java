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
     * The task definition, shared by producers and workers: no handler code. A producer submits
     * it as it is; a worker binds {@link #handler(Ledger)} to it.
     */
    static Task<Job, Void> job(String queue, Duration backoff) {
        return Task.builder(TASK, Job.class).queue(queue).maxAttempts(5).backoff(Backoff.fixed(backoff)).build();
    }

    /** The code of the job task, bound where a worker is built: records every execution in {@code ledger}. */
    static TaskHandler<Job, Void> handler(Ledger ledger) {
        return job -> {
            long run = ledger.started(job.n());
            ledger.sawAttempt(job.n(), TaskContext.current().attempt());
            if (job.cpuBound()) {
                spin(job.sleepMillis());
            } else {
                Thread.sleep(job.sleepMillis());
            }
            if (run <= job.failures()) {
                throw new IllegalStateException("planned failure " + run + " of job " + job.n());
            }
            ledger.finished(job.n());
            return null;
        };
    }

    static BinomicConfig config(String redisUrl, String queue, Duration lease) {
        return BinomicConfig.builder()
                .brokerUrl(redisUrl)
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

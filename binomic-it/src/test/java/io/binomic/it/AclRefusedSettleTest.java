package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.Worker;
import io.binomic.core.WorkerHealth;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * A worker whose ACL user loses a command the settle needs while its jobs run: Redis refuses their outcomes
 * (NOPERM) while it answers every other call. An operator's grant fixes that, so the worker holds the outcomes as
 * during an outage, and writes them once the command is granted back: no job runs a second time by reclaim.
 */
class AclRefusedSettleTest {
    private static final String QUEUE = "acl-refused-settle";
    private static final int JOBS = 3;
    /** Longer than a worker that gave refused outcomes up took to give up all of them (five tries each, one by one). */
    private static final Duration REFUSED_FOR = Duration.ofSeconds(6);

    @Test
    void outcomesRefusedForAPermissionAreHeldAndWrittenOnceItIsGrantedBack() throws Exception {
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        String problem;
        WorkerHealth heldWhileRefused;
        int ranWhileRefused;
        Task<String, String> untracked = Task.builder("count-runs", String.class, String.class).queue(QUEUE)
                .keepStatusFor(Duration.ZERO).build();
        try (RedisServer redis = RedisServer.startNew()) {
            AclRedis.createUsers(redis, AclRedis.rules());
            BinomicConfig workerConfig = BinomicConfig.builder().brokerUrl(AclRedis.url(redis, AclRedis.WORKER))
                    .schedulePeriodicTasks(false).worker(WorkerConfig.builder().queues(QUEUE).leaseTimeout(Duration.ofSeconds(2))
                            .pollTimeout(Duration.ofMillis(200)).build()).build();
            BinomicConfig producerConfig = BinomicConfig.builder().brokerUrl(AclRedis.url(redis, AclRedis.PRODUCER))
                    .schedulePeriodicTasks(false).build();
            try (Binomic worker = Binomic.builder().config(workerConfig)
                    .handle(untracked, s -> {
                        runs.computeIfAbsent(s, k -> new AtomicInteger()).incrementAndGet();
                        return s;
                    }).build().start();
                 Binomic producer = Binomic.builder().config(producerConfig).build().start()) {
                Worker running = worker.startWorker();
                producer.submit(untracked, "before");
                await("the first job is written", () -> runs.containsKey("before") && worker.queueStats(QUEUE).pending() == 0);

                redis.call("ACL", "SETUSER", AclRedis.WORKER, "-xack");
                for (int i = 0; i < JOBS; i++) {
                    producer.submit(untracked, "job-" + i);
                }
                // A worker whose outcomes are refused takes no new work until they are written: the jobs its reads took
                // before the first refusal run now, the rest once the grant is back.
                await("a job ran", () -> runs.size() > 1);
                await("the worker reports the refusal", () -> !running.health().consuming());
                problem = running.health().problem().orElse("none");
                Thread.sleep(REFUSED_FOR.toMillis());
                heldWhileRefused = running.health();
                ranWhileRefused = runs.size() - 1;

                redis.call("ACL", "SETUSER", AclRedis.WORKER, "+xack");
                await("every job ran and its outcome is written", () -> runs.size() == JOBS + 1
                        && worker.queueStats(QUEUE).pending() == 0 && worker.queueStats(QUEUE).ready() == 0
                        && running.health().pendingSettlements() == 0);
                assertTrue(running.health().consuming(), running.health().toString());
            }
        }
        runs.forEach((job, count) -> assertEquals(1, count.get(), "runs of " + job + ": " + runs));
        assertEquals(JOBS + 1, runs.size(), runs.toString());
        assertEquals(ranWhileRefused, heldWhileRefused.pendingSettlements(), "the refused outcomes are held: " + heldWhileRefused);
        assertTrue(problem.startsWith("Redis refuses writing outcomes (NOPERM) for ")
                && problem.contains("grant ACL SETUSER " + AclRedis.WORKER + " +xack;"), problem);
    }

    private static void await(String what, BooleanSupplier done) {
        Await.until(Duration.ofSeconds(20), done, () -> what);
    }
}

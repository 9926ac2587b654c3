package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.QueueLimits;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import io.binomic.testsupport.AdmissionCountingBroker;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Under a queue concurrency limit that binds, with a backlog waiting, a slot a job frees is taken again by the settle
 * that frees it: the settle hands the worker the next job, admitted onto the slot, so the slot does not stay free for
 * a fetch and an admission of its own. Told by the jobs the admission calls let run (counted at the broker), against
 * the jobs that ran: without the hand-off each one needs one. The limit's bound and every job running once are
 * checked beside it.
 */
class FreedSlotHandOffTest {
    private static final int JOBS = 60;
    private static final int LIMIT = 2;

    private static RedisServer redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.startNew();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    @Test
    void aFreedSlotGoesToTheNextJobWithTheSettleThatFreesIt() throws Exception {
        String queue = "handoff-" + UUID.randomUUID().toString().substring(0, 8);
        Task<LimitedApp.Work, Void> task = LimitedApp.task(queue, "none", 0);
        var config = LimitedApp.config(redis.url(), queue, Duration.ofSeconds(10)); // worker concurrency 8: the limit binds
        Map<Integer, AtomicInteger> runs = new ConcurrentHashMap<>();
        AtomicInteger running = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        try (Binomic producer = Binomic.builder().config(config).build().start()) {
            producer.queues().setLimits(queue, QueueLimits.builder().concurrencyLimit(LIMIT).build());
            for (int n = 0; n < JOBS; n++) {
                producer.submit(task, new LimitedApp.Work(n, 0));
            }
            AdmissionCountingBroker broker = new AdmissionCountingBroker(Brokers.redis(redis));
            try (Binomic worker = Binomic.builder().config(config).broker(broker)
                    .handle(task, work -> {
                        most.accumulateAndGet(running.incrementAndGet(), Math::max);
                        try {
                            Thread.sleep(20);
                        } finally {
                            running.decrementAndGet();
                        }
                        runs.computeIfAbsent(work.n(), n -> new AtomicInteger()).incrementAndGet();
                        return null;
                    }).build().start()) {
                worker.startWorker();
                long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
                while (runs.size() < JOBS && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                Thread.sleep(300); // a job run twice would show by now
            }
            System.out.println("HANDOFF jobs=" + runs.size() + " admittedByAdmission=" + broker.admitted() + " most=" + most.get());
            assertEquals(JOBS, runs.size(), "every job ran");
            assertTrue(runs.values().stream().allMatch(c -> c.get() == 1), "no job ran twice: " + runs);
            assertTrue(most.get() <= LIMIT, "never more than the limit at once: " + most.get());
            // The first jobs, and those after a stall long enough to end the hand-off (a second with no park),
            // are admitted by a fetch; every other one must come with the settle that freed its slot.
            assertTrue(broker.admitted() <= JOBS / 3, "a freed slot waited for a fetch and an admission of its own: "
                    + broker.admitted() + " of " + JOBS + " jobs admitted by admission calls");
        }
    }
}

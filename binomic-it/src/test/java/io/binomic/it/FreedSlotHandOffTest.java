package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.QueueLimits;
import io.binomic.api.Task;
import io.binomic.api.spi.Admission;
import io.binomic.api.spi.FlowLimits;
import io.binomic.core.Binomic;
import io.binomic.testsupport.ForwardingBroker;
import java.time.Duration;
import java.util.List;
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

    /** The Redis broker, counting the deliveries its admission calls let run. */
    private static final class CountingBroker extends ForwardingBroker implements FlowLimits {
        private final FlowLimits limits;
        final AtomicInteger admitted = new AtomicInteger();

        CountingBroker(io.binomic.api.spi.Broker delegate) {
            super(delegate);
            this.limits = delegate.capability(FlowLimits.class).orElseThrow();
        }

        private List<Admission> counted(List<Admission> decisions) {
            for (Admission a : decisions) {
                if (a.decision() == Admission.Decision.RUN || a.decision() == Admission.Decision.HOLD) {
                    admitted.incrementAndGet();
                }
            }
            return decisions;
        }

        @Override
        public List<Admission> admit(String consumer, List<Admission.Request> requests) {
            return counted(limits.admit(consumer, requests));
        }

        @Override
        public List<Admission> admit(String consumer, List<Admission.Request> requests, Duration maxHold) {
            return counted(limits.admit(consumer, requests, maxHold));
        }

        @Override
        public int slotsHeld(String queue, String limitId) { return limits.slotsHeld(queue, limitId); }

        @Override
        public Map<String, QueueLimits> queueLimits(List<String> queues) { return limits.queueLimits(queues); }

        @Override
        public void setQueueLimits(String queue, QueueLimits queueLimits) { limits.setQueueLimits(queue, queueLimits); }
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
            CountingBroker broker = new CountingBroker(Brokers.redis(redis));
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
            System.out.println("HANDOFF jobs=" + runs.size() + " admittedByAdmission=" + broker.admitted.get() + " most=" + most.get());
            assertEquals(JOBS, runs.size(), "every job ran");
            assertTrue(runs.values().stream().allMatch(c -> c.get() == 1), "no job ran twice: " + runs);
            assertTrue(most.get() <= LIMIT, "never more than the limit at once: " + most.get());
            // The first jobs, and those after a stall long enough to end the hand-off (a second with no park),
            // are admitted by a fetch; every other one must come with the settle that freed its slot.
            assertTrue(broker.admitted.get() <= JOBS / 3, "a freed slot waited for a fetch and an admission of its own: "
                    + broker.admitted.get() + " of " + JOBS + " jobs admitted by admission calls");
        }
    }
}

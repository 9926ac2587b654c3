package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.QueueLimits;
import io.binomic.api.RateLimit;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Admission;
import io.binomic.api.spi.FlowLimits;
import io.binomic.core.internal.memory.MemoryBroker;
import io.binomic.core.internal.memory.MemoryScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * A worker's first fetch under a queue's rate limit passes that limit even while the first read of the
 * queue limits, begun by the worker's housekeeping, has not answered: the empty map the worker starts
 * with means "not read yet", not "no limits".
 */
class QueueLimitsFirstReadTest {
    private static final int PER_SECOND = 2;

    /** The memory broker, whose first read of the queue limits answers only after {@code slowFor}. */
    private static final class SlowFirstReadBroker extends ForwardingBroker implements FlowLimits {
        private final FlowLimits limits;
        private final AtomicBoolean first = new AtomicBoolean(true);
        final CountDownLatch firstRead = new CountDownLatch(1);

        SlowFirstReadBroker(MemoryBroker delegate) {
            super(delegate);
            this.limits = delegate.capability(FlowLimits.class).orElseThrow();
        }

        @Override
        public Map<String, QueueLimits> queueLimits(List<String> queues) {
            if (first.getAndSet(false)) {
                firstRead.countDown();
                try {
                    Thread.sleep(3_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return limits.queueLimits(queues);
        }

        @Override
        public List<Admission> admit(String consumer, List<Admission.Request> requests) { return limits.admit(consumer, requests); }

        @Override
        public List<Admission> admit(String consumer, List<Admission.Request> requests, Duration maxHold) {
            return limits.admit(consumer, requests, maxHold);
        }

        @Override
        public int slotsHeld(String queue, String limitId) { return limits.slotsHeld(queue, limitId); }

        @Override
        public void setQueueLimits(String queue, QueueLimits queueLimits) { limits.setQueueLimits(queue, queueLimits); }
    }

    @Test
    void aFetchBeforeTheFirstReadOfTheQueueLimitsAnsweredStillPassesThem() throws Exception {
        Task<Integer, String> plain = Task.builder("plain", Integer.class, String.class).queue("limited").build();
        MemoryBroker memory = new MemoryBroker(BrokerConfig.defaults());
        SlowFirstReadBroker broker = new SlowFirstReadBroker(memory);
        broker.setQueueLimits("limited", QueueLimits.builder().rateLimit(RateLimit.perSecond(PER_SECOND)).build());
        ConcurrentLinkedQueue<Long> starts = new ConcurrentLinkedQueue<>();
        BinomicConfig config = BinomicConfig.builder()
                .worker(WorkerConfig.builder().queues("limited").concurrency(10).pollTimeout(Duration.ofMillis(50))
                        .shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        int jobs = 8;
        try (Binomic binomic = Binomic.builder().config(config).broker(broker).scheduler(new MemoryScheduler(memory))
                .handle(plain, n -> {
                    starts.add(System.nanoTime());
                    return "ok";
                }).build().start()) {
            binomic.startWorker();
            // nothing to fetch yet: the housekeeping's read is the first, and the jobs come while it waits
            assertTrue(broker.firstRead.await(10, TimeUnit.SECONDS), "no read of the queue limits");
            binomic.submitAll(plain, IntStream.range(0, jobs).boxed().toList());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (starts.size() < jobs && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(jobs, starts.size(), "every job ran");
            List<Long> at = new ArrayList<>(starts);
            at.sort(null);
            int most = 0;
            for (int i = 0, j = 0; i < at.size(); i++) {
                while (j < at.size() && at.get(j) < at.get(i) + TimeUnit.SECONDS.toNanos(1)) {
                    j++;
                }
                most = Math.max(most, j - i);
            }
            // permits + burst (1), and 1 for the hand-off; run unlimited, all 8 start at once
            assertTrue(most <= PER_SECOND + 1 + 1, "at most " + (PER_SECOND + 1) + " (+1) starts in any 1 s window, saw " + most);
        }
    }
}

package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.QueueLimits;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Admission;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.FlowLimits;
import io.binomic.core.internal.memory.MemoryBroker;
import io.binomic.core.internal.memory.MemoryScheduler;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * A worker whose queue's concurrency limit binds fetches about as many jobs as it can start, not a
 * fetch of every free slot each round: the jobs it cannot start are parked for a slot (and moved back
 * and fetched again later), so fetching the backlog at the worker's pace parked nearly all of it.
 */
class BindingLimitFetchTest {
    private static final int LIMIT = 2;

    /**
     * Within this long of a park the worker's fetch cap (a second) surely holds, however late the fetch round runs; after
     * a second with no park it lapses, and one fetch of every free slot finds out whether the limit still binds.
     */
    private static final long SURELY_CAPPED_NANOS = TimeUnit.MILLISECONDS.toNanos(900);

    /**
     * The memory broker, counting the deliveries its flow limits park for a slot, and the fetches asking for more than
     * twice {@link #LIMIT} (more than the jobs that can have ended since the last fetch: those running then and those it
     * started) soon after a park.
     */
    private static final class CountingBroker extends ForwardingBroker implements FlowLimits {
        private final FlowLimits limits;
        final AtomicInteger slotWaits = new AtomicInteger();
        final AtomicInteger largeFetchesAfterAPark = new AtomicInteger();
        private volatile long lastParkNanos;

        @Override
        public List<Delivery> fetch(List<String> queues, String consumer, int max, Duration wait) throws InterruptedException {
            if (slotWaits.get() > 0 && max > 2 * LIMIT && System.nanoTime() - lastParkNanos < SURELY_CAPPED_NANOS) {
                largeFetchesAfterAPark.incrementAndGet();
            }
            return super.fetch(queues, consumer, max, wait);
        }

        CountingBroker(MemoryBroker delegate) {
            super(delegate);
            this.limits = delegate.capability(FlowLimits.class).orElseThrow();
        }

        private List<Admission> counted(List<Admission> decisions) {
            int parked = (int) decisions.stream().filter(a -> a.decision() == Admission.Decision.WAIT_SLOT).count();
            if (parked > 0) {
                lastParkNanos = System.nanoTime();
            }
            slotWaits.addAndGet(parked);
            return decisions;
        }

        @Override
        public List<Admission> admit(String consumer, List<Admission.Request> requests) { return counted(limits.admit(consumer, requests)); }

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
    void aWorkerWhoseQueueLimitBindsFetchesWhatItsEndedJobsFreedNotEveryFreeSlot() throws Exception {
        Task<Integer, String> task = Task.builder("held", Integer.class, String.class).queue("held").maxAttempts(1).build();
        MemoryBroker memory = new MemoryBroker(BrokerConfig.defaults());
        CountingBroker broker = new CountingBroker(memory);
        broker.setQueueLimits("held", QueueLimits.builder().concurrencyLimit(LIMIT).build());
        AtomicInteger running = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        Map<Integer, AtomicInteger> runs = new ConcurrentHashMap<>();
        BinomicConfig config = BinomicConfig.builder()
                .worker(WorkerConfig.builder().queues("held").concurrency(20).pollTimeout(Duration.ofMillis(50))
                        .shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        int jobs = 200;
        try (Binomic binomic = Binomic.builder().config(config).broker(broker).scheduler(new MemoryScheduler(memory))
                .handle(task, n -> {
                    most.accumulateAndGet(running.incrementAndGet(), Math::max);
                    Thread.sleep(5);
                    running.decrementAndGet();
                    runs.computeIfAbsent(n, k -> new AtomicInteger()).incrementAndGet();
                    return "ok";
                }).build().start()) {
            binomic.submitAll(task, IntStream.range(0, jobs).boxed().toList());
            binomic.startWorker();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (runs.size() < jobs && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(jobs, runs.size(), "every job ran");
        }
        assertTrue(most.get() <= LIMIT, "never more than the limit at once: " + most.get());
        // The first fetch takes 20 for 2 slots, starts 2 and parks 18; after it, each fetch asks for the slots its ended
        // jobs freed (a fetch of every free slot again only after a second without a park). A fetch of every free slot
        // asked for 18 each round and parked each job at least once (198-201 parks against 20-50); one that capped only
        // after a fetch parked all it took asked for 18 right after the first fetch started 2 and parked the rest.
        assertEquals(0, broker.largeFetchesAfterAPark.get(), "fetches of every free slot within 0.9 s of a park ("
                + broker.slotWaits.get() + " parked for a slot)");
    }
    /**
     * A task's limit binding on a queue its other jobs share leaves the worker fetching for every free slot: a fetch
     * of only what ended would not refill the slots its parked jobs left, and the jobs that can start would run fewer
     * and fewer at once.
     */
    @Test
    void aTaskLimitThatBindsLeavesTheOtherJobsOfItsQueueEveryFreeSlot() throws Exception {
        Task<Integer, String> hot = Task.builder("hot", Integer.class, String.class).queue("mixed").concurrencyLimit(1)
                .maxAttempts(1).build();
        Task<Integer, String> other = Task.builder("other", Integer.class, String.class).queue("mixed").maxAttempts(1).build();
        MemoryBroker memory = new MemoryBroker(BrokerConfig.defaults());
        AtomicInteger running = new AtomicInteger();
        List<Integer> atStarts = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        Map<Integer, AtomicInteger> runs = new ConcurrentHashMap<>();
        BinomicConfig config = BinomicConfig.builder()
                .worker(WorkerConfig.builder().queues("mixed").concurrency(8).pollTimeout(Duration.ofMillis(50))
                        .shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        int others = 30;
        try (Binomic binomic = Binomic.builder().config(config).broker(memory).scheduler(new MemoryScheduler(memory))
                .handle(hot, n -> {
                    Thread.sleep(100);
                    return "hot";
                })
                .handle(other, n -> {
                    atStarts.add(running.incrementAndGet());
                    Thread.sleep(400);
                    running.decrementAndGet();
                    runs.computeIfAbsent(n, k -> new AtomicInteger()).incrementAndGet();
                    return "other";
                }).build().start()) {
            for (int i = 0; i < others * 8; i++) { // one job of another task for seven of the limited one
                if (i % 8 == 7) {
                    binomic.submit(other, i);
                } else {
                    binomic.submit(hot, i);
                }
            }
            binomic.startWorker();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (runs.size() < others && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(others, runs.size(), "every job of the other task ran");
        }
        // 7 slots are free for them beside the one the limit allows. Fetching only what ended, after the first fetch
        // filled the slots, let the parked jobs' slots go unfilled: most of them started with 1-2 of them running.
        List<Integer> sorted = atStarts.stream().sorted().toList();
        int median = sorted.get(sorted.size() / 2);
        assertTrue(median >= 4, "the other task's jobs started with a median of " + median + " of them running, of 7 free"
                + " slots: " + atStarts);
    }
}

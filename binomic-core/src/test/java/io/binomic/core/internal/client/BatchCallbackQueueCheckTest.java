package io.binomic.core.internal.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.api.spi.Batches;
import io.binomic.core.BatchHandle;
import io.binomic.core.Binomic;
import io.binomic.core.ForwardingBroker;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * A submit's check that a batch callback's queue has a consumer reads the broker once per queue
 * within {@link BatchSubmitter#CONSUMERS_FRESH}, not once per submit, and still warns of each batch
 * whose jobs or callback no worker would read. Each read is asked once within a bound
 * ({@code Broker.statsOnce}), never as a plain {@code stats} read with the broker's retries.
 */
class BatchCallbackQueueCheckTest {
    record Item(String name) { }

    static final Task<Item, Void> work = Task.builder("work", Item.class).queue("check-jobs").build();
    static final Task<Item, Void> report = Task.builder("report", Item.class).queue("check-reports").build();

    /** A memory broker, with its batches, that counts the stats reads of each queue asked once, and those retried. */
    static class CountingBroker extends ForwardingBroker {
        final Map<String, AtomicInteger> statsReads = new ConcurrentHashMap<>();
        final AtomicInteger retriedReads = new AtomicInteger();
        final List<Duration> bounds = new CopyOnWriteArrayList<>();

        CountingBroker() {
            super(new MemoryBrokerProvider().create(BrokerConfig.defaults()));
        }

        @Override
        public QueueStats statsOnce(String queue, Duration bound) {
            statsReads.computeIfAbsent(queue, q -> new AtomicInteger()).incrementAndGet();
            bounds.add(bound);
            return super.statsOnce(queue, bound);
        }

        @Override
        public QueueStats stats(String queue) {
            retriedReads.incrementAndGet();
            return super.stats(queue);
        }

        int reads(String queue) { return statsReads.getOrDefault(queue, new AtomicInteger()).get(); }

        @Override
        public <T> Optional<T> capability(Class<T> type) {
            return type == Batches.class ? delegate.capability(type) : super.capability(type);
        }
    }

    /** A clock the test moves. */
    static final class ManualClock extends Clock {
        volatile Instant now = Instant.parse("2026-12-03T06:00:00Z");

        @Override public Instant instant() { return now; }

        @Override public ZoneId getZone() { return ZoneOffset.UTC; }

        @Override public Clock withZone(ZoneId zone) { throw new UnsupportedOperationException(); }
    }

    @Test
    void aCallbackQueueIsReadOncePerFreshnessPeriodAndEveryBatchOfAnUnreadOneIsWarnedOf() {
        CountingBroker broker = new CountingBroker();
        ManualClock clock = new ManualClock();
        List<LogRecord> warnings = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override public void publish(LogRecord r) { if (r.getLevel() == Level.WARNING) { warnings.add(r); } }
            @Override public void flush() { }
            @Override public void close() { }
        };
        Logger logger = Logger.getLogger(BatchSubmitter.class.getName());
        logger.addHandler(capture);
        try (Binomic binomic = Binomic.builder().broker(broker).scheduler(broker.scheduler()).clock(clock).task(work).task(report)
                .build().start()) {
            for (int i = 0; i < 3; i++) {
                binomic.batch().add(work, new Item("job " + i)).onComplete(report, new Item("done " + i)).submit();
            }
            assertEquals(1, broker.reads(report.queue()), "the callback queue is read once for the three submits");
            assertEquals(0, broker.retriedReads.get(), "a read for a warning is asked once, not with the broker's retries");
            assertTrue(broker.bounds.stream().allMatch(b -> b.compareTo(BatchSubmitter.CONSUMERS_READ_BOUND) <= 0), broker.bounds.toString());
            assertEquals(1, broker.reads(work.queue()), "and the jobs' queue");
            assertEquals(6, warnings.size(), "each batch whose jobs and callback no worker reads is warned of");
            assertEquals(3, warnings.stream().filter(w -> w.getMessage().contains("its jobs of task(s) {1} go to queue")
                    && "work".equals(w.getParameters()[1]) && work.queue().equals(w.getParameters()[2])).count(), warnings.toString());

            clock.now = clock.now.plus(BatchSubmitter.CONSUMERS_FRESH.minusMillis(1));
            binomic.batch().add(work, new Item("job 3")).onComplete(report, new Item("done 3")).submit();
            assertEquals(1, broker.reads(report.queue()), "still fresh");

            clock.now = clock.now.plus(Duration.ofMillis(1));
            binomic.batch().add(work, new Item("job 4")).onComplete(report, new Item("done 4")).submit();
            assertEquals(2, broker.reads(report.queue()), "read again once the last read is as old as CONSUMERS_FRESH");
            assertEquals(10, warnings.size());

            BatchHandle open = binomic.batch().keepOpen().add(work, new Item("job 5")).onComplete(report, new Item("done 5")).submit();
            Task<Item, Void> typo = Task.builder("typo", Item.class).queue("check-jobz").build();
            open.add(typo, new Item("added"));
            assertTrue(warnings.getLast().getMessage().contains("its jobs of task(s) {1} go to queue")
                    && "check-jobz".equals(warnings.getLast().getParameters()[2]), "a job added to an open batch is checked too");
        } finally {
            logger.removeHandler(capture);
        }
    }

    /**
     * A worker is a consumer of its queues once its first fetch reaches the broker, some time after
     * startWorker() returned. A batch submitted at once was warned of as going to queues no worker
     * reads (and the answer was then kept for {@link BatchSubmitter#CONSUMERS_FRESH}), although this
     * instance's own worker reads them. Here no fetch reaches the broker until the submit is done.
     */
    @Test
    void aBatchOnQueuesThisInstancesStartedWorkerReadsIsNotWarnedOfBeforeItsFirstFetch() throws Exception {
        java.util.concurrent.CountDownLatch submitted = new java.util.concurrent.CountDownLatch(1);
        CountingBroker broker = new CountingBroker() {
            @Override
            public List<io.binomic.api.spi.Delivery> fetch(List<String> queues, String consumer, int max, Duration wait)
                    throws InterruptedException {
                submitted.await();
                return super.fetch(queues, consumer, max, wait);
            }

            @Override
            public List<io.binomic.api.spi.Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
                awaitSubmitted();
                return super.reclaim(queue, consumer, minIdle, max);
            }

            @Override
            public int removeIdleConsumers(String queue, String consumer, Duration idle) {
                awaitSubmitted();
                return super.removeIdleConsumers(queue, consumer, idle);
            }

            private void awaitSubmitted() {
                try {
                    submitted.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        List<LogRecord> warnings = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override public void publish(LogRecord r) { if (r.getLevel() == Level.WARNING) { warnings.add(r); } }
            @Override public void flush() { }
            @Override public void close() { }
        };
        Logger logger = Logger.getLogger(BatchSubmitter.class.getName());
        logger.addHandler(capture);
        try (Binomic binomic = Binomic.builder().broker(broker).scheduler(broker.scheduler())
                .handle(work, item -> null).handle(report, item -> null).build().start()) {
            binomic.startWorker();
            BatchHandle batch = binomic.batch().add(work, new Item("job")).onComplete(report, new Item("done")).submit();
            submitted.countDown();
            assertEquals(List.of(), warnings.stream().map(LogRecord::getMessage).toList(), "this instance's worker reads both queues");
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (batch.status().orElseThrow().fired().size() < 1 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(1, batch.status().orElseThrow().fired().size(), "its worker ran the job and the callback was enqueued");
        } finally {
            submitted.countDown();
            logger.removeHandler(capture);
        }
    }
}

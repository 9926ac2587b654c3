package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A lone worker whose handler finishes as Redis goes down, and which cannot reach it for longer than
 * the lease: when the broker is back the worker reclaims its own delivery, and must write the outcome
 * it kept, not run the task a second time. A read sent just before the outage and answered just after
 * the settle call failed must not make the outage look like a batch the broker refuses (given up, and
 * so run again by the reclaim).
 */
class LoneWorkerOutageTest {
    private static final Duration LEASE = Duration.ofMillis(300);

    private final Broker memory = new MemoryBrokerProvider().create(BrokerConfig.defaults());
    private Binomic binomic;

    @AfterEach
    void close() {
        if (binomic != null) {
            binomic.close();
        }
        memory.close();
    }

    @Test
    void anOutcomeKeptThroughAnOutagePastTheLeaseIsWrittenAndTheTaskNotRunAgain() throws Exception {
        AtomicBoolean down = new AtomicBoolean();
        AtomicBoolean holdNextFetch = new AtomicBoolean();
        CountDownLatch fetchHeld = new CountDownLatch(1);
        CountDownLatch settleFailed = new CountDownLatch(1);
        AtomicInteger failedSettles = new AtomicInteger();
        ForwardingBroker outage = new ForwardingBroker(memory) {
            private void unlessDown() {
                if (down.get()) {
                    throw new BrokerException("Redis at 127.0.0.1:1 is unreachable (test outage)");
                }
            }

            @Override
            public List<Delivery> fetch(List<String> queues, String consumer, int max, Duration wait) throws InterruptedException {
                unlessDown();
                List<Delivery> got = super.fetch(queues, consumer, max, wait);
                if (holdNextFetch.compareAndSet(true, false)) {
                    // Sent before the outage, its answer arrives after the settle call has failed.
                    fetchHeld.countDown();
                    settleFailed.await(20, TimeUnit.SECONDS);
                }
                return got;
            }

            @Override
            public SettleReport settle(String consumer, List<Settlement> settlements) {
                if (down.get()) {
                    failedSettles.incrementAndGet();
                    settleFailed.countDown();
                }
                unlessDown();
                return super.settle(consumer, settlements);
            }

            @Override
            public List<Delivery> renewLeasesReportingLost(String consumer, List<Delivery> inFlight) {
                unlessDown();
                return super.renewLeasesReportingLost(consumer, inFlight);
            }

            @Override
            public void renewLeases(String consumer, List<Delivery> inFlight) {
                unlessDown();
                super.renewLeases(consumer, inFlight);
            }

            @Override
            public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
                unlessDown();
                return super.reclaim(queue, consumer, minIdle, max);
            }

            @Override
            public QueueStats stats(String queue) {
                unlessDown();
                return super.stats(queue);
            }

            @Override
            public List<Delivery> pendingOf(String queue, String consumer, int max) {
                unlessDown();
                return super.pendingOf(queue, consumer, max);
            }

            @Override
            public int removeIdleConsumers(String queue, String consumer, Duration idle) {
                unlessDown();
                return super.removeIdleConsumers(queue, consumer, idle);
            }

            @Override
            public long removeSettled(String queue) {
                unlessDown();
                return super.removeSettled(queue);
            }

            @Override
            public void close() {
            }
        };
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        Task<Integer, Void> job = Task.builder("job", Integer.class).build();
        BinomicConfig config = BinomicConfig.builder().worker(WorkerConfig.builder().consumerName("lone")
                .pollTimeout(Duration.ofMillis(100)).leaseTimeout(LEASE).reclaimInterval(Duration.ofMillis(100))
                .shutdownGrace(Duration.ofSeconds(2)).build()).build();
        binomic = Binomic.builder().config(config).codec(new TextCodec()).broker(outage).scheduler(outage.scheduler())
                .handle(job, (Integer n) -> {
                    runs.incrementAndGet();
                    running.countDown();
                    finish.await();
                    return null;
                }).build().start();
        Worker worker = binomic.startWorker();
        binomic.submit(job, 1);
        assertTrue(running.await(20, TimeUnit.SECONDS), "the job ran");
        holdNextFetch.set(true);
        assertTrue(fetchHeld.await(20, TimeUnit.SECONDS), "a fetch is under way");

        down.set(true);
        long outageBegan = System.nanoTime();
        finish.countDown(); // the handler returns as Redis goes down: its outcome cannot be written
        // Five failed tries are when a batch the broker is taken to refuse is given up; the lease lapses meanwhile.
        WorkerTest.await("five settle calls failed and the lease lapsed",
                () -> failedSettles.get() >= 5 && System.nanoTime() - outageBegan > 3 * LEASE.toNanos());
        WorkerCounters held = worker.counters();
        assertEquals(List.of(1L, 1L, 0L), List.of(held.held(), held.heldSucceeded(), held.writtenSucceeded()),
                "an outcome the broker does not have yet is held, not a written success: " + held);
        down.set(false);

        WorkerTest.await("the outcome was written", () -> memory.stats("default").pending() == 0 && worker.counters().inFlight() == 0);
        Thread.sleep(3 * LEASE.toMillis()); // room for a wrongful second run
        worker.stop(Duration.ofSeconds(5));

        assertEquals(1, runs.get(), "runs of the job: the lone worker ran again what it had run and kept the outcome of");
        assertEquals(1, worker.counters().succeeded(), worker.counters().toString());
        assertEquals(List.of(0L, 1L), List.of(worker.counters().held(), worker.counters().writtenSucceeded()), worker.counters().toString());
        assertEquals(0, worker.counters().staleSettlements(), worker.counters().toString());
        QueueStats stats = memory.stats("default");
        assertEquals(0, stats.pending() + stats.ready() + stats.delayed() + stats.deadLetters(), stats.toString());
    }
}

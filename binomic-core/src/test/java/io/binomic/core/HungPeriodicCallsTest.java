package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The calls a worker makes only every so often (reclaim, the search for lost reads, the removal of
 * idle consumers and of settled entries) must never stand between a free slot and its next job:
 * over a slow link, each would add its round trip to the fetch rounds it falls in. Here they do not
 * answer at all until the jobs are done, and every job still runs. A worker that made them on its
 * fetch thread would run none.
 */
class HungPeriodicCallsTest {
    private static final int JOBS = 200;

    @Test
    void jobsRunWhileEveryPeriodicBrokerCallHangs() throws Exception {
        Broker memory = new MemoryBrokerProvider().create(BrokerConfig.defaults());
        CountDownLatch answer = new CountDownLatch(1);
        AtomicInteger hung = new AtomicInteger();
        Broker hanging = new ForwardingBroker(memory) {
            private void hang() {
                hung.incrementAndGet();
                try {
                    answer.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }

            @Override
            public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
                hang();
                return super.reclaim(queue, consumer, minIdle, max);
            }

            @Override
            public List<Delivery> pendingOf(String queue, String consumer, int max) {
                hang();
                return super.pendingOf(queue, consumer, max);
            }

            @Override
            public int removeIdleConsumers(String queue, String consumer, Duration idle) {
                hang();
                return super.removeIdleConsumers(queue, consumer, idle);
            }

            @Override
            public long removeSettled(String queue) {
                hang();
                return super.removeSettled(queue);
            }
        };
        AtomicInteger ran = new AtomicInteger();
        Task<Integer, Void> job = Task.builder("job", Integer.class).build();
        TaskBinding<Integer, Void> binding = job.handledBy((Integer n) -> {
            ran.incrementAndGet();
            return null;
        });
        // Every periodic call due at once and again every 20 ms: a worker that made them between its
        // reads would be stuck in the first.
        WorkerConfig worker = WorkerConfig.builder().concurrency(8).pollTimeout(Duration.ofMillis(100))
                .reclaimInterval(Duration.ofMillis(20)).leaseTimeout(Duration.ofSeconds(30))
                .shutdownGrace(Duration.ofSeconds(2)).build();
        Binomic.Builder builder = Binomic.builder().config(BinomicConfig.builder().worker(worker).build())
                .codec(new TextCodec()).broker(hanging).handle(binding);
        Binomic binomic = builder.scheduler(((ForwardingBroker) hanging).scheduler()).build().start();
        try {
            binomic.startWorker();
            binomic.submitAll(job, IntStream.range(0, JOBS).boxed().toList());

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (ran.get() < JOBS && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertTrue(hung.get() > 0, "the worker made none of the periodic calls this test holds");
            assertEquals(JOBS, ran.get(), "jobs run while the periodic calls hang (" + hung.get() + " hanging)");
        } finally {
            answer.countDown(); // a stopping worker waits for the reclaim under way
            binomic.close();
        }
    }
}

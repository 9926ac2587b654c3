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
import org.junit.jupiter.api.Test;

/**
 * A worker told to stop takes no more work, whatever its reclaim was doing when the stop came: a
 * draining worker that went on reclaiming stranded deliveries ran them past its grace (and was
 * killed), or left them claimed and unrun, each time at the cost of an attempt. Here the stop
 * comes while the reclaim waits on its first queue; the second queue holds a stranded delivery.
 */
class StoppingWorkerReclaimTest {
    private static final Duration LEASE = Duration.ofMillis(300);

    @Test
    void aStoppingWorkerReclaimsNothingMore() throws Exception {
        Broker memory = new MemoryBrokerProvider().create(BrokerConfig.defaults());
        CountDownLatch reclaimWaits = new CountDownLatch(1);
        CountDownLatch answer = new CountDownLatch(1);
        AtomicInteger reclaimsOfSecond = new AtomicInteger();
        Broker slowFirstReclaim = new ForwardingBroker(memory) {
            @Override
            public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
                if (queue.equals("first") && reclaimWaits.getCount() > 0) {
                    reclaimWaits.countDown();
                    try {
                        answer.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                } else if (queue.equals("second")) {
                    reclaimsOfSecond.incrementAndGet();
                }
                return super.reclaim(queue, consumer, minIdle, max);
            }
        };
        AtomicInteger ran = new AtomicInteger();
        Task<String, Void> job = Task.builder("job", String.class).queue("second").build();
        TaskBinding<String, Void> binding = job.handledBy((String s) -> {
            ran.incrementAndGet();
            return null;
        });
        WorkerConfig worker = WorkerConfig.builder().queues("first", "second").pollTimeout(Duration.ofMillis(100))
                .leaseTimeout(LEASE).reclaimInterval(Duration.ofSeconds(30)).shutdownGrace(Duration.ofSeconds(2)).build();
        Binomic binomic = Binomic.builder().config(BinomicConfig.builder().worker(worker).build()).codec(new TextCodec())
                .broker(slowFirstReclaim).scheduler(((ForwardingBroker) slowFirstReclaim).scheduler()).handle(binding).build().start();
        try {
            binomic.submit(job, "stranded");
            // Read by a worker that then died: pending under its name, its lease lapsing.
            assertEquals(1, memory.fetch(List.of("second"), "dead-worker", 1, Duration.ZERO).size());
            Thread.sleep(LEASE.multipliedBy(2).toMillis());

            Worker running = binomic.startWorker();
            assertTrue(reclaimWaits.await(10, TimeUnit.SECONDS), "the worker's first reclaim began");
            Thread stopping = StopBegan.stopping(running.consumerName(), () -> running.stop(Duration.ofSeconds(2)));
            Thread.sleep(300); // the stop is under way: the fetcher has ended and waits for the reclaim
            answer.countDown();
            stopping.join(TimeUnit.SECONDS.toMillis(10));

            assertTrue(running.isStopped(), "stopped");
            assertEquals(0, reclaimsOfSecond.get(), "reclaims after the stop");
            assertEquals(0, ran.get(), "a stranded delivery run by a stopping worker");
            assertEquals(1, memory.stats("second").pending(), "left pending for a worker that is not stopping");
        } finally {
            answer.countDown();
            binomic.close();
        }
    }
}

package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An outage that a reclaim meets first: the reclaim waits on a broker that does not answer, then fails, and the
 * fetches only start failing later. The age the worker's health gives runs from that reclaim's start, after the
 * reclaim has ended as while it waited, not from the first fetch that failed.
 */
class ReclaimOutageHealthTest {
    private static final Duration POLL = Duration.ofMillis(100);
    private static final long RECLAIM_WAITS_MILLIS = 4000;
    /** How long after the reclaim began the fetches fail too: the age the health would lose. */
    private static final long FETCHES_FAIL_AFTER_MILLIS = 3000;

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
    void aFailedReclaimKeepsTheStartOfTheOutageItMetFirst() throws Exception {
        AtomicBoolean armed = new AtomicBoolean();
        AtomicLong reclaimBegan = new AtomicLong();
        CountDownLatch reclaimEnded = new CountDownLatch(1);
        ForwardingBroker outage = new ForwardingBroker(memory) {
            @Override
            public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
                if (reclaimBegan.get() != 0) {
                    throw new BrokerException("Redis at 127.0.0.1:1: connection refused (test outage)");
                }
                if (!armed.get() || !reclaimBegan.compareAndSet(0, System.nanoTime())) {
                    return super.reclaim(queue, consumer, minIdle, max);
                }
                try {
                    Thread.sleep(RECLAIM_WAITS_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    reclaimEnded.countDown();
                }
                throw new BrokerException("Redis at 127.0.0.1:1 did not answer the reclaim within 4000 ms (test outage)");
            }

            @Override
            public List<Delivery> fetch(List<String> queues, String consumer, int max, Duration wait) throws InterruptedException {
                long began = reclaimBegan.get();
                if (began != 0 && System.nanoTime() - began > TimeUnit.MILLISECONDS.toNanos(FETCHES_FAIL_AFTER_MILLIS)) {
                    throw new BrokerException("Redis at 127.0.0.1:1: connection refused (test outage)");
                }
                return super.fetch(queues, consumer, max, wait);
            }

            @Override
            public void close() { }
        };
        Task<Integer, Void> job = Task.builder("job", Integer.class).build();
        BinomicConfig config = BinomicConfig.builder().worker(WorkerConfig.builder().consumerName("reclaim-outage").pollTimeout(POLL)
                .reclaimInterval(Duration.ofMillis(200)).build()).build();
        binomic = Binomic.builder().config(config).codec(new TextCodec()).broker(outage).scheduler(outage.scheduler())
                .handle(job, (Integer n) -> null).build().start();
        Worker worker = binomic.startWorker();
        assertEquals(WorkerHealth.State.CONSUMING, worker.health().state());

        armed.set(true);
        assertTrue(reclaimEnded.await(30, TimeUnit.SECONDS), "no reclaim came");
        Thread.sleep(300); // the reclaim's failure handled, and a fetch failed since
        long checked = System.nanoTime();
        WorkerHealth after = worker.health();
        assertEquals(WorkerHealth.State.BROKER_UNREACHABLE, after.state(), after.toString());
        Matcher age = Pattern.compile(" for (\\d+) s").matcher(after.problem().orElseThrow());
        assertTrue(age.find(), after.toString());
        long outageSeconds = TimeUnit.NANOSECONDS.toSeconds(checked - reclaimBegan.get());
        // From the first failed fetch it would be about FETCHES_FAIL_AFTER_MILLIS shorter.
        assertTrue(Long.parseLong(age.group(1)) >= outageSeconds - 1,
                "the outage began " + outageSeconds + " s ago with a reclaim; the health says " + after.problem().orElseThrow());
    }
}

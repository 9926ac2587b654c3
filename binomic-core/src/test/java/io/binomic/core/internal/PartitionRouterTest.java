package io.binomic.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Partitioning;
import io.binomic.api.spi.QueuePartitions;
import io.binomic.core.ForwardingBroker;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class PartitionRouterTest {

    /** A memory broker whose partitions are read from {@code partitioning}. */
    private static Broker brokerWith(Partitioning partitioning) {
        return new ForwardingBroker(new MemoryBrokerProvider().create(BrokerConfig.defaults())) {
            @Override
            public <T> Optional<T> capability(Class<T> type) {
                return type == Partitioning.class ? Optional.of(type.cast(partitioning)) : super.capability(type);
            }
        };
    }

    /**
     * A producer thread's submit read the partitions of a queue while another thread paused that
     * queue (a pause forgets what was read, to read it again): the submit threw a
     * NullPointerException. Here the forget lands in the middle of the read, as that thread's did.
     */
    @Test
    void aQueueForgottenByAnotherThreadWhileOthersAreReadIsStillAnswered() {
        AtomicReference<PartitionRouter> router = new AtomicReference<>();
        Partitioning partitioning = new Partitioning() {
            @Override
            public Map<String, QueuePartitions> partitions(List<String> queues) {
                router.get().forget("fresh");
                return Map.of();
            }

            @Override
            public void setPartitions(String queue, QueuePartitions partitions) { }
        };
        try (Broker broker = brokerWith(partitioning)) {
            router.set(new PartitionRouter(broker));
            router.get().of(List.of("fresh"));

            Map<String, QueuePartitions> both = router.get().of(List.of("fresh", "unread"));

            assertEquals(Map.of("fresh", QueuePartitions.ONE, "unread", QueuePartitions.ONE), both);
        }
    }

    /**
     * Found by an outside tester: with Redis refusing connections, a submit blocked twice the command
     * timeout, first on the once-a-second read of its queue's partitions, then on its own write. Once
     * a queue's partitions are known, their refresh is read in the background and the submit goes on
     * with the last answer.
     */
    @Test
    void aRefreshIsReadInTheBackgroundWhileTheLastAnswerIsUsed() throws Exception {
        CountDownLatch stuck = new CountDownLatch(1);
        AtomicInteger reads = new AtomicInteger();
        AtomicReference<QueuePartitions> stored = new AtomicReference<>(new QueuePartitions(2, 2));
        Partitioning partitioning = new Partitioning() {
            @Override
            public Map<String, QueuePartitions> partitions(List<String> queues) {
                if (reads.incrementAndGet() > 1) {
                    try {
                        stuck.await(); // a broker that does not answer
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return Map.of("q", stored.get());
            }

            @Override
            public void setPartitions(String queue, QueuePartitions partitions) { }
        };
        try (Broker broker = brokerWith(partitioning)) {
            PartitionRouter router = new PartitionRouter(broker);
            assertEquals(new QueuePartitions(2, 2), router.of("q"), "the first look waits for its read");
            Thread.sleep(PartitionRouter.REFRESH_MILLIS + 100);
            stored.set(new QueuePartitions(3, 3));

            // Preemptively: a look that waited for the stuck read would never return.
            assertEquals(new QueuePartitions(2, 2), assertTimeoutPreemptively(Duration.ofSeconds(10), () -> router.of("q")),
                    "answered while the refresh is stuck");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (reads.get() < 2) {
                assertTrue(System.nanoTime() < deadline, "the refresh is read");
                Thread.sleep(10);
            }
            assertEquals(new QueuePartitions(2, 2), router.of("q"));
            assertEquals(2, reads.get(), "one refresh at a time");
            stuck.countDown();
            while (!router.of("q").equals(new QueuePartitions(3, 3))) {
                assertTrue(System.nanoTime() < deadline, "the refresh's answer is used once read");
                Thread.sleep(10);
            }
        }
    }
}

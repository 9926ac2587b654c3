package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.SettledCleanup;
import io.binomic.core.internal.memory.MemoryBroker;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * In an outage each broker call fails only after its timeout. A worker's periodic pass over its
 * queues (keeping its consumers, clearing settled entries) stops at the first such failure instead
 * of waiting that long once per queue: over many queues a pass took minutes, and the worker's health
 * took its loop for stuck, so the master replaced a worker that was only waiting for Redis. A
 * failure that comes at once costs nothing, and the other queues are still called.
 */
class SlowFailingPassTest {
    private static final List<String> QUEUES = List.of("pass-1", "pass-2", "pass-3", "pass-4", "pass-5");

    private final Set<String> keptQueues = ConcurrentHashMap.newKeySet();
    private final Set<String> clearedQueues = ConcurrentHashMap.newKeySet();

    private Binomic start(AtomicBoolean slow) {
        MemoryBroker memory = new MemoryBroker(BrokerConfig.defaults());
        ForwardingBroker failing = new ForwardingBroker(memory) {
            @Override
            public int removeIdleConsumers(String queue, String consumer, Duration idle) {
                keptQueues.add(queue);
                throw fail(slow);
            }

            @Override
            public long removeSettled(String queue) {
                clearedQueues.add(queue);
                throw fail(slow);
            }

            @Override
            public <T> Optional<T> capability(Class<T> type) {
                // the memory broker has no settled entries to clear: this one says it has, to be asked
                return type == SettledCleanup.class ? Optional.of(type.cast(this)) : super.capability(type);
            }
        };
        BinomicConfig config = BinomicConfig.builder()
                .worker(WorkerConfig.builder().queues(QUEUES.toArray(String[]::new)).leaseTimeout(Duration.ofSeconds(4))
                        .reclaimInterval(Duration.ofSeconds(1)).shutdownGrace(Duration.ofSeconds(1)).build())
                .build();
        Binomic binomic = Binomic.builder().config(config).broker(failing).scheduler(failing.scheduler())
                .handle(Task.builder("noop", String.class).queue("pass-1").build(), s -> null).build().start();
        binomic.startWorker();
        return binomic;
    }

    private static BrokerException fail(AtomicBoolean slow) {
        if (slow.get()) {
            try {
                Thread.sleep(1_500); // a command that timed out
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return new BrokerException("Redis did not answer in time");
    }

    @Test
    void aPassStopsAtTheFirstCallThatFailedAfterWaiting() throws Exception {
        Binomic binomic = start(new AtomicBoolean(true));
        try {
            Thread.sleep(7_000); // passes every second; each of the old passes took 7.5 s per kind of call
            assertEquals(Set.of("pass-1"), keptQueues, "a pass went on past a call that failed after its timeout");
            assertEquals(Set.of("pass-1"), clearedQueues, "a pass went on past a call that failed after its timeout");
        } finally {
            binomic.close();
        }
    }

    @Test
    void aCallThatFailsAtOnceDoesNotStopThePass() throws Exception {
        Binomic binomic = start(new AtomicBoolean(false));
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!(keptQueues.size() == QUEUES.size() && clearedQueues.size() == QUEUES.size())) {
                assertTrue(System.nanoTime() < deadline, "kept " + keptQueues + ", cleared " + clearedQueues);
                Thread.sleep(50);
            }
        } finally {
            binomic.close();
        }
    }
}

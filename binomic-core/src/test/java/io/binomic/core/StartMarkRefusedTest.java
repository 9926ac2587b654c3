package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.JobUpdate;
import io.binomic.core.internal.memory.MemoryBroker;
import io.binomic.core.internal.memory.MemoryScheduler;
import io.binomic.core.internal.worker.DeliveryProcessor;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A broker that answers every call but refuses every start mark (a script error, a permission the
 * worker's user lacks) must not have a tracked job put back twice a second for ever: after a bounded
 * number of tries the attempt fails, and the retry path ends in the dead-letter queue, unrun.
 */
class StartMarkRefusedTest {
    record Item(String name) { }

    @Test
    void aJobWhoseStartMarkIsAlwaysRefusedEndsAsAFailedAttemptInTheDeadLetterQueueWithoutRunning() throws Exception {
        Task<Item, Void> tracked = Task.builder("refused", Item.class).queue("refused").maxAttempts(1)
                .keepStatusFor(Duration.ofMinutes(5)).build();
        MemoryBroker memory = new MemoryBroker(BrokerConfig.defaults());
        AtomicInteger startMarks = new AtomicInteger();
        ForwardingBroker refusing = new ForwardingBroker(memory) {
            @Override
            public Set<UUID> startJobs(List<JobUpdate> starts) {
                startMarks.incrementAndGet();
                throw new BrokerException("ERR Error running script: NOPERM this user has no permissions to access one of the keys");
            }
        };
        AtomicInteger runs = new AtomicInteger();
        BinomicConfig config = BinomicConfig.builder()
                .worker(WorkerConfig.builder().queues("refused").pollTimeout(Duration.ofMillis(50)).shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        try (Binomic binomic = Binomic.builder().config(config).broker(refusing).scheduler(new MemoryScheduler(memory))
                .handle(tracked, item -> {
                    runs.incrementAndGet();
                    return null;
                }).build().start()) {
            binomic.startWorker();
            binomic.submit(tracked, new Item("one"));

            // twenty put-backs half a second apart: ten seconds on an idle machine, more beside a busy one
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            while (binomic.queueStats("refused").deadLetters() == 0) {
                assertTrue(System.nanoTime() < deadline, "not dead-lettered after " + startMarks.get() + " start marks");
                Thread.sleep(50);
            }
            DeadLetter letter = binomic.deadLetters().list("refused", DeadLetterFilter.all(), 10).getFirst();
            assertEquals(DeadLetterReason.MAX_ATTEMPTS, letter.failure().reason());
            assertEquals(DeliveryProcessor.START_MARK_FAILED, letter.failure().errorClass());
            assertTrue(letter.failure().errorMessage().contains("NOPERM"), letter.failure().errorMessage());
            assertEquals(0, runs.get(), "its handler ran without a RUNNING record");
            assertEquals(20, startMarks.get(), "the tries before the attempt failed");
        }
    }
}

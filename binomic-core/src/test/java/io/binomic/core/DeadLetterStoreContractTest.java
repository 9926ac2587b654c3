package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.JobHandle;
import io.binomic.api.QueueStats;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobEvent;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every broker with the {@link io.binomic.api.spi.DeadLetterStore} capability must have: dead letters kept
 * with why they failed, paged, replayed as first attempts and deleted.
 */
public abstract class DeadLetterStoreContractTest extends BrokerContractFixture {

    protected DeadLetterStoreContractTest() {
    }

    @Test
    void deadLetterKeepsTheMessageAndWhyItFailed() throws Exception {
        Message m = message("t", "{\"x\":1}");
        broker.enqueue(m);
        Delivery d = fetch(1).getFirst();
        Instant failedAt = Instant.now().truncatedTo(ChronoUnit.MILLIS);

        deadLetter("c1", d, new DeadLetter.Failure(DeadLetterReason.NON_RETRYABLE, "java.lang.IllegalStateException",
                "no such account", "java.lang.IllegalStateException: no such account\n\tat x.y(Z.java:1)", 1, failedAt));

        QueueStats stats = broker.stats(queue);
        assertEquals(0, stats.pending());
        assertEquals(1, stats.deadLetters());
        List<DeadLetter> letters = BrokerCapabilities.deadLetterStore(broker).readDeadLetters(queue, Optional.empty(), 10);
        assertEquals(1, letters.size());
        DeadLetter letter = letters.getFirst();
        assertEquals("t", letter.task());
        assertEquals(queue, letter.queue());
        assertEquals(m, letter.message().orElseThrow());
        assertEquals(DeadLetterReason.NON_RETRYABLE, letter.failure().reason());
        assertEquals("java.lang.IllegalStateException", letter.failure().errorClass());
        assertEquals("no such account", letter.failure().errorMessage());
        assertTrue(letter.failure().stackHead().contains("x.y(Z.java:1)"));
        assertEquals(1, letter.failure().attempts());
        assertEquals(failedAt, letter.failure().failedAt());
    }

    @Test
    void replayedDeadLetterReturnsToItsQueueAsAFirstAttempt() throws Exception {
        Message m = message(queue, "t", "{}", 3);
        broker.enqueue(m);
        Delivery d = fetch(1).getFirst();
        deadLetter("c1", d, new DeadLetter.Failure(DeadLetterReason.MAX_ATTEMPTS, "E", "boom", "", 3, Instant.now()));
        String letterId = BrokerCapabilities.deadLetterStore(broker).readDeadLetters(queue, Optional.empty(), 10).getFirst().id();

        assertEquals(1, BrokerCapabilities.deadLetterStore(broker).replayDeadLetters(queue, List.of(letterId)));
        assertEquals(0, BrokerCapabilities.deadLetterStore(broker).replayDeadLetters(queue, List.of(letterId)), "a replayed letter is gone from the DLQ");

        Message back = fetch(1).getFirst().message().orElseThrow();
        assertEquals(m.id(), back.id());
        assertEquals(1, back.attempt());
        assertEquals(letterId, back.replayedFrom().orElse(null));
        assertEquals("t-1", back.userHeaders().get("trace"));
        assertEquals(0, broker.stats(queue).deadLetters());
    }

    @Test
    void deadLettersArePagedByCursorAndDeletable() throws Exception {
        for (int i = 0; i < 7; i++) {
            broker.enqueue(message("t", "{\"i\":" + i + "}"));
        }
        for (Delivery d : fetch(7)) {
            deadLetter("c1", d, new DeadLetter.Failure(DeadLetterReason.MAX_ATTEMPTS, "E", "", "", 3, Instant.now()));
        }

        List<DeadLetter> page1 = BrokerCapabilities.deadLetterStore(broker).readDeadLetters(queue, Optional.empty(), 4);
        List<DeadLetter> page2 = BrokerCapabilities.deadLetterStore(broker).readDeadLetters(queue, Optional.of(page1.getLast().id()), 4);
        assertEquals(4, page1.size());
        assertEquals(3, page2.size());
        Set<String> ids = new HashSet<>();
        page1.forEach(l -> ids.add(l.id()));
        page2.forEach(l -> ids.add(l.id()));
        assertEquals(7, ids.size());

        assertEquals(2, BrokerCapabilities.deadLetterStore(broker).deleteDeadLetters(queue, List.of(page1.get(0).id(), page1.get(1).id(), "0-1")));
        assertEquals(5, broker.stats(queue).deadLetters());
    }
}

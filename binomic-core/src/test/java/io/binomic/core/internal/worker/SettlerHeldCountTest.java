package io.binomic.core.internal.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.DeadLetter.Failure;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.QueueStats;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The outcomes a worker holds unwritten ({@link Settler#held()}, read by each heartbeat and metrics
 * scrape) are counted once each, from their hand-over until they are written or given up: a reading
 * taken as the worker releases a delivery (its {@code done}) no longer counts the outcomes written.
 */
class SettlerHeldCountTest {
    private static final Duration NO_WAIT = Duration.ofMillis(10);

    private final List<Long> heldAtDone = new ArrayList<>();
    private Settler settler;

    private Settler settler(Function<List<Settlement>, SettleReport> settle) {
        settler = new Settler(new SettleOnlyBroker(settle), "c", 8, key -> null, d -> heldAtDone.add(settler.held().total));
        return settler;
    }

    private static Delivery delivery(String id) {
        Message m = Message.builder().id(UUID.randomUUID()).task("t").queue("q").enqueuedAt(Instant.EPOCH)
                .payload("{}".getBytes(StandardCharsets.UTF_8)).build();
        return new Delivery("q", id, Optional.of(m), 1, Map.of(), Optional.empty());
    }

    @Test
    void eachOutcomeIsCountedByKindUntilItIsWritten() throws Exception {
        Settler s = settler(sent -> SettleReport.ALL_APPLIED);
        Delivery retried = delivery("2-0");
        s.submit(new Settlement.Ack(delivery("1-0")));
        s.submit(new Settlement.RetryLater(retried, retried.message().orElseThrow(), Instant.EPOCH));
        s.submit(new Settlement.DeadLetter(delivery("3-0"), new Failure(DeadLetterReason.MAX_ATTEMPTS, "E", "m", "", 1, Instant.EPOCH)));
        HeldOutcomes before = s.held();
        assertEquals(List.of(3L, 1L, 1L, 1L), List.of(before.total, before.succeeded, before.retried, before.deadLettered));
        assertEquals(3, s.pending());

        assertTrue(s.sendOnce(NO_WAIT));
        assertEquals(List.of(2L, 1L, 0L), heldAtDone, "each outcome uncounted as its delivery is released, not after the batch");
        HeldOutcomes after = s.held();
        assertEquals(List.of(0L, 0L, 0L, 0L), List.of(after.total, after.succeeded, after.retried, after.deadLettered));
    }

    /** A batch the broker refuses while it answers other calls: kept and counted once while retried and split, then given up. */
    @Test
    void aRefusedBatchIsCountedOnceWhileRetriedAndSplitAndNotOnceGivenUp() throws Exception {
        Settler s = settler(sent -> {
            throw new IllegalStateException("WRONGTYPE Operation against a key holding the wrong kind of value");
        });
        s.submit(new Settlement.Ack(delivery("1-0")));
        s.submit(new Settlement.Ack(delivery("2-0")));
        assertTrue(s.sendOnce(NO_WAIT));
        s.brokerAnswered(System.nanoTime()); // another call answered after the writes failed: a refusal, not an outage
        while (heldAtDone.isEmpty()) {
            assertEquals(2, s.held().total, "kept for another try, or split, and counted once");
            assertEquals(2, s.held().succeeded);
            assertTrue(s.sendOnce(NO_WAIT));
        }
        assertEquals(List.of(1L), heldAtDone, "the outcome given up is not counted as its delivery is released");
        while (heldAtDone.size() < 2) {
            assertEquals(1, s.held().total);
            assertTrue(s.sendOnce(NO_WAIT));
        }
        assertEquals(List.of(1L, 0L), heldAtDone);
        assertEquals(0, s.held().total);
        assertEquals(2, s.abandoned.sum());
    }
}

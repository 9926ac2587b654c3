package io.binomic.core.internal.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * {@link Settler#awaitWritten}: the fetcher's wait, before an admission under a concurrency limit,
 * for the outcomes of the jobs that ended before its read. It returns once those are written (not
 * the ones handed over later), keeps waiting while their batch fails and is retried, and never
 * waits for outcomes given up at the stop.
 */
class SettlerWrittenMarkTest {
    private static final Duration NO_WAIT = Duration.ofMillis(10);
    private static final Duration SHORT = Duration.ofMillis(50);

    private final AtomicBoolean failing = new AtomicBoolean();
    private final Settler settler = new Settler(new SettleOnlyBroker(sent -> {
        if (failing.get()) {
            throw new IllegalStateException("injected: the settle call failed");
        }
        return SettleReport.ALL_APPLIED;
    }), "c", 8, key -> null, d -> { });

    private static Settlement ack(String id) {
        Message m = Message.builder().id(UUID.randomUUID()).task("t").queue("q").enqueuedAt(Instant.EPOCH)
                .payload("{}".getBytes(StandardCharsets.UTF_8)).build();
        return new Settlement.Ack(new Delivery("q", id, Optional.of(m), 1, Map.of(), Optional.empty()));
    }

    @Test
    void theOutcomesHandedOverBeforeTheMarkAreAwaitedUntilWrittenAndNoLater() throws Exception {
        assertTrue(settler.awaitWritten(settler.handedOver(), NO_WAIT), "nothing handed over: nothing to wait for");
        settler.submit(ack("1-0"));
        settler.submit(ack("2-0"));
        long mark = settler.handedOver();
        assertEquals(2, mark);
        assertFalse(settler.awaitWritten(mark, SHORT), "two outcomes still in the buffer");

        assertTrue(settler.sendOnce(NO_WAIT));
        settler.submit(ack("3-0")); // handed over after the mark: not waited for
        assertTrue(settler.awaitWritten(mark, NO_WAIT));
        assertFalse(settler.awaitWritten(settler.handedOver(), SHORT), "the third is not written yet");
        assertTrue(settler.sendOnce(NO_WAIT));
        assertTrue(settler.awaitWritten(settler.handedOver(), NO_WAIT));
    }

    @Test
    void aBatchThatFailsIsAwaitedUntilItsRetryIsWritten() throws Exception {
        settler.submit(ack("1-0"));
        long mark = settler.handedOver();
        failing.set(true);
        assertTrue(settler.sendOnce(NO_WAIT));
        assertFalse(settler.awaitWritten(mark, SHORT), "taken, failed, kept for a retry: not written");
        failing.set(false);
        assertTrue(settler.sendOnce(NO_WAIT));
        assertTrue(settler.awaitWritten(mark, NO_WAIT));
    }

    @Test
    void aWaitEndsWhenTheBatchIsWrittenNotAtItsLimit() throws Exception {
        settler.submit(ack("1-0"));
        long mark = settler.handedOver();
        Thread sender = Thread.ofPlatform().start(() -> {
            try {
                Thread.sleep(100);
                settler.sendOnce(NO_WAIT);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        long began = System.nanoTime();
        assertTrue(settler.awaitWritten(mark, Duration.ofSeconds(30)));
        assertTrue(System.nanoTime() - began < Duration.ofSeconds(20).toNanos(), "woken by the write");
        sender.join();
    }

    @Test
    void outcomesGivenUpAtTheStopAreNotWaitedFor() throws Exception {
        settler.submit(ack("1-0"));
        settler.submit(ack("2-0"));
        long mark = settler.handedOver();
        assertEquals(2, settler.giveUpAtStop().count());
        assertTrue(settler.awaitWritten(mark, NO_WAIT));
    }
}

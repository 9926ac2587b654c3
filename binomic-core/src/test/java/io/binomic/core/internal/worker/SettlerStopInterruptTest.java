package io.binomic.core.internal.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerException;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Found by an outside tester: a worker stopped while Redis was frozen warned that it was "keeping them and trying
 * again" for outcomes whose write the stop's own interrupt had cut off, right before it gave them up.
 */
class SettlerStopInterruptTest {
    /** Held here: java.util.logging keeps its loggers weakly. */
    private final Logger settlerLog = Logger.getLogger(Settler.class.getName());
    private final List<LogRecord> warnings = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                warnings.add(r);
            }
        }

        @Override
        public void flush() { }

        @Override
        public void close() { }
    };

    @AfterEach
    void removeCapture() {
        settlerLog.removeHandler(capture);
        Thread.interrupted();
    }

    private static Delivery delivery(String id) {
        Message m = Message.builder().id(UUID.randomUUID()).task("t").queue("q").enqueuedAt(Instant.EPOCH)
                .payload("{}".getBytes(StandardCharsets.UTF_8)).build();
        return new Delivery("q", id, Optional.of(m), 1, Map.of(), Optional.empty());
    }

    private void sendOneFailing(Function<List<Settlement>, SettleReport> settle) throws InterruptedException {
        Settler s = new Settler(new SettleOnlyBroker(settle), "c", 8, key -> null, d -> { });
        s.submit(new Settlement.Ack(delivery("1-0")));
        settlerLog.addHandler(capture);
        try {
            s.sendOnce(Duration.ofMillis(10));
        } catch (InterruptedException e) {
            // the pause before the next try, cut off by the same interrupt: the settle loop ends there
        }
        Thread.interrupted();
        assertEquals(1, s.held().total, "kept until written or given up");
    }

    @Test
    void aWriteCutOffByTheStopsInterruptPromisesNoRetry() throws Exception {
        sendOneFailing(sent -> {
            // as a Redis client's blocking call ends when the stop interrupts its thread
            Thread.currentThread().interrupt();
            throw new BrokerException("Redis settle on queues [q] failed at 127.0.0.1:6392: InterruptedException",
                    new RuntimeException(new InterruptedException()));
        });
        assertTrue(warnings.isEmpty(), () -> warnings.getFirst().getMessage());
    }

    @Test
    void aWriteThatFailsOnItsOwnIsStillWarnedOf() throws Exception {
        sendOneFailing(sent -> {
            throw new BrokerException("Redis settle on queues [q] failed at 127.0.0.1:6392: Connection refused");
        });
        assertEquals(1, warnings.size());
        assertTrue(warnings.getFirst().getMessage().contains("keeping them and trying again"), warnings.getFirst().getMessage());
    }
}

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
 * What every broker contract suite shares: a fresh broker and its scheduler per test, started on
 * two queues of fresh names (so a shared server is fine), and the helpers the suites use. Each
 * implementation extends a suite and says how to create an unstarted broker and its scheduler.
 */
public abstract class BrokerContractFixture {

    protected BrokerContractFixture() {
    }

    /** A new, not yet started broker. */
    protected abstract Broker createBroker();

    /** The scheduler of {@code started} (the broker stores retries in the scheduler's store, atomically with the ack). */
    protected abstract Scheduler createScheduler(Broker started);

    protected Broker broker;
    protected Scheduler scheduler;
    protected String queue;
    protected String otherQueue;

    @BeforeEach
    void startBroker() {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        queue = "contract-" + suffix;
        otherQueue = "contract-other-" + suffix;
        broker = createBroker();
        broker.start(List.of(queue, otherQueue));
        scheduler = createScheduler(broker);
    }

    @AfterEach
    void closeBroker() {
        scheduler.close();
        broker.close();
    }

    protected Message message(String task, String payload) {
        return message(queue, task, payload, 1);
    }

    protected static Message message(String queue, String task, String payload, int attempt) {
        return Message.fromWire(UUID.randomUUID(), task, queue, attempt, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                payload.getBytes(StandardCharsets.UTF_8), Map.of("trace", "t-1"));
    }

    protected List<Delivery> fetch(int max) throws InterruptedException {
        return broker.fetch(List.of(queue), "c1", max, Duration.ofMillis(200));
    }

    /** Acks as {@code consumer}; returns the acks that were not applied. */
    protected List<Settlement> ack(String consumer, List<Delivery> deliveries) {
        return broker.settle(consumer, deliveries.stream().<Settlement>map(Settlement.Ack::new).toList()).notApplied();
    }

    protected List<Settlement> deadLetter(String consumer, Delivery d, DeadLetter.Failure failure) {
        return broker.settle(consumer, List.of(new Settlement.DeadLetter(d, failure))).notApplied();
    }

    protected static DeadLetter.Failure failure() {
        return new DeadLetter.Failure(DeadLetterReason.MAX_ATTEMPTS, "E", "boom", "", 3, Instant.now());
    }

    /** Sleeps until the wall clock is past {@code instant}. */
    protected static void sleepPast(Instant instant) throws InterruptedException {
        long millis = Duration.between(Instant.now(), instant).toMillis() + 5;
        if (millis > 0) {
            Thread.sleep(millis);
        }
    }

    // ---- job records (tracked messages) ----

    protected Message trackedMessage(String task, long retentionMillis) {
        return Message.fromWire(UUID.randomUUID(), task, queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                "{}".getBytes(StandardCharsets.UTF_8), Map.of(Message.TRACK, Long.toString(retentionMillis)));
    }

    protected JobUpdate update(Message m, Map<String, String> set, Duration expireAfter, boolean ends) {
        return new JobUpdate(queue, m.id(), set, List.of(), expireAfter, ends);
    }

    protected String state(Message m) {
        return BrokerCapabilities.jobStore(broker).readJob(queue, m.id()).map(f -> f.get(JobRecords.STATE)).orElse("none");
    }

}

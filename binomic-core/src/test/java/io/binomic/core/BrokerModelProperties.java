package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.QueueStats;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A model-based test of the delivery state machine as a broker keeps it: random sequences of
 * submit, fetch by one of three consumers, ack, retry, dead-letter (by the owner, or late by a
 * former owner), consumer crash, reclaim, moving due retries, replay and purge run against the
 * broker and against a small model, and after every step both must agree: every message is in
 * exactly one place, attempts only grow (until a replay resets them), and a settlement by a
 * consumer that no longer owns the delivery changes nothing. Every broker runs it (memory in core,
 * Redis in binomic-it); QuickTheories shrinks a failure to a short sequence and prints its seed.
 */
public abstract class BrokerModelProperties {
    private static final String[] CONSUMERS = {"c0", "c1", "c2"};
    private static final int OPS = 13;

    protected BrokerModelProperties() {
    }

    /** A new, not yet started broker. */
    protected abstract Broker createBroker();

    /** The scheduler of {@code started}, which moves the retries the broker's settle schedules. */
    protected abstract Scheduler createScheduler(Broker started);

    /**
     * Creates {@code queue} (its stream and consumer group) on the started broker. Defaults to
     * {@code start} again, which the memory broker allows; a broker that starts once overrides it.
     */
    protected void prepare(Broker started, String queue) {
        started.start(List.of(queue));
    }

    /** How many random sequences to run. */
    protected int examples() {
        return 150;
    }

    private Broker broker;
    private Scheduler scheduler;

    @BeforeEach
    void start() {
        broker = createBroker();
        broker.start(List.of());
        scheduler = createScheduler(broker);
    }

    @AfterEach
    void close() {
        scheduler.close();
        broker.close();
    }

    enum Place { READY, PENDING, DELAYED, DEAD, DONE }

    /** The model's view of one message. */
    static final class Model {
        Place place = Place.READY;
        String owner;
        String receipt;  // the stream entry now holding it (a retry or a replay makes a new one)
        int deliveryCount;
        int lastAttempt;
    }

    @Test
    void theBrokerAgreesWithTheModelAfterEveryStepOfAnySequence() {
        AtomicInteger cases = new AtomicInteger();
        qt().withExamples(examples()).forAll(lists().of(integers().between(0, OPS * 8 - 1)).ofSizeBetween(1, 40))
                .checkAssert(ops -> {
                    cases.incrementAndGet();
                    run(ops);
                });
        assertTrue(cases.get() >= examples() * 9 / 10, "only " + cases.get() + " sequences ran");
    }

    private void run(List<Integer> ops) {
        String queue = "model-" + UUID.randomUUID().toString().substring(0, 8);
        prepare(broker, queue);
        Map<String, Model> model = new HashMap<>();            // by the message's "n" header
        Map<String, List<Delivery>> held = new HashMap<>();   // what each consumer believes it holds
        for (String c : CONSUMERS) {
            held.put(c, new ArrayList<>());
        }
        List<String> trace = new ArrayList<>();
        int submitted = 0;
        for (int op : ops) {
            String consumer = CONSUMERS[(op / OPS) % CONSUMERS.length];
            int pick = op / (OPS * CONSUMERS.length);
            List<Delivery> mine = held.get(consumer);
            switch (op % OPS) {
                case 0, 1 -> {
                    String n = Integer.toString(submitted++);
                    broker.enqueue(Message.fromWire(UUID.randomUUID(), "t", queue, 1, Instant.now(), "{}".getBytes(StandardCharsets.UTF_8),
                            Map.of("n", n)));
                    model.put(n, new Model());
                    trace.add("submit " + n);
                }
                case 2, 3 -> {
                    int max = 1 + pick;
                    long ready = model.values().stream().filter(m -> m.place == Place.READY).count();
                    List<Delivery> got = fetch(queue, consumer, max);
                    trace.add(consumer + " fetch " + max + " -> " + names(got));
                    assertEquals(Math.min(max, ready), got.size(), "fetched: " + trace);
                    for (Delivery d : got) {
                        Model m = model.get(n(d));
                        assertEquals(Place.READY, m.place, "fetched a message that was not ready: " + trace);
                        m.place = Place.PENDING;
                        m.owner = consumer;
                        m.receipt = d.receipt();
                        m.deliveryCount = 1;
                        checkAttempt(m, d, trace);
                        mine.add(d);
                    }
                }
                case 4, 5, 6, 7 -> {
                    if (mine.isEmpty()) {
                        continue;
                    }
                    Delivery d = mine.remove(pick % mine.size());
                    Settlement s = switch (op % OPS) {
                        case 4, 5 -> new Settlement.Ack(d);
                        case 6 -> new Settlement.RetryLater(d, d.message().orElseThrow().withAttempt(d.attempt() + 1, Instant.now()),
                                Instant.now().minusSeconds(1));
                        default -> new Settlement.DeadLetter(d, new DeadLetter.Failure(DeadLetterReason.MAX_ATTEMPTS, "E", "boom", "",
                                d.attempt(), Instant.now()));
                    };
                    SettleReport report = broker.settle(consumer, List.of(s));
                    Model m = model.get(n(d));
                    trace.add(consumer + " " + s.getClass().getSimpleName() + " " + n(d) + "@" + d.deliveryCount() + " -> " + report);
                    boolean pending = m.place == Place.PENDING && m.receipt.equals(d.receipt());
                    boolean owns = pending && m.owner.equals(consumer) && m.deliveryCount >= d.deliveryCount();
                    if (owns) {
                        assertTrue(report.allApplied(), "the owner's settlement must apply: " + trace);
                        m.place = switch (s) {
                            case Settlement.Ack a -> Place.DONE;
                            case Settlement.RetryLater r -> Place.DELAYED;
                            case Settlement.DeadLetter x -> Place.DEAD;
                        };
                        m.owner = null;
                    } else if (pending) {
                        assertEquals(List.of(s), report.reclaimed(), "a former owner's settlement is refused as reclaimed: " + trace);
                    } else {
                        assertEquals(List.of(s), report.notPending(), "a settlement of a settled delivery changes nothing: " + trace);
                    }
                }
                case 8 -> {
                    mine.clear(); // the consumer's JVM died: what it held stays pending
                    trace.add(consumer + " crash");
                }
                case 9 -> {
                    List<Delivery> got = broker.reclaim(queue, consumer, Duration.ZERO, 1000);
                    trace.add(consumer + " reclaim -> " + names(got));
                    Set<String> expected = new HashSet<>();
                    model.forEach((n, m) -> {
                        if (m.place == Place.PENDING) {
                            expected.add(n);
                        }
                    });
                    assertEquals(expected, new HashSet<>(names(got)), "reclaim with no minimum idle takes every pending entry: " + trace);
                    for (Delivery d : got) {
                        Model m = model.get(n(d));
                        m.owner = consumer;
                        m.deliveryCount++;
                        assertEquals(m.deliveryCount, d.deliveryCount(), "delivery count: " + trace);
                        checkAttempt(m, d, trace);
                        // A worker holds one hand-out per entry: the newest (it settles that one).
                        mine.removeIf(old -> old.receipt().equals(d.receipt()));
                        mine.add(d);
                    }
                }
                case 10 -> {
                    int moved = 0;
                    int step;
                    while ((step = scheduler.moveDue(queue, Instant.now(), 1000)) > 0) {
                        moved += step;
                    }
                    trace.add("move -> " + moved);
                    long delayed = model.values().stream().filter(m -> m.place == Place.DELAYED).count();
                    assertEquals(delayed, moved, "every due retry moves once: " + trace);
                    model.values().stream().filter(m -> m.place == Place.DELAYED).forEach(m -> m.place = Place.READY);
                }
                case 11 -> {
                    List<String> ids = BrokerCapabilities.deadLetterStore(broker).readDeadLetters(queue, Optional.empty(), 1000).stream().map(DeadLetter::id).toList();
                    int replayed = BrokerCapabilities.deadLetterStore(broker).replayDeadLetters(queue, ids);
                    trace.add("replay -> " + replayed);
                    long dead = model.values().stream().filter(m -> m.place == Place.DEAD).count();
                    assertEquals(dead, replayed, trace.toString());
                    model.values().stream().filter(m -> m.place == Place.DEAD).forEach(m -> {
                        m.place = Place.READY;
                        m.lastAttempt = 0; // a replay starts again at attempt 1
                    });
                }
                default -> {
                    List<String> ids = BrokerCapabilities.deadLetterStore(broker).readDeadLetters(queue, Optional.empty(), 1000).stream().map(DeadLetter::id).toList();
                    int purged = BrokerCapabilities.deadLetterStore(broker).deleteDeadLetters(queue, ids);
                    trace.add("purge -> " + purged);
                    long dead = model.values().stream().filter(m -> m.place == Place.DEAD).count();
                    assertEquals(dead, purged, trace.toString());
                    model.values().stream().filter(m -> m.place == Place.DEAD).forEach(m -> m.place = Place.DONE);
                }
            }
            QueueStats stats = broker.stats(queue);
            assertEquals(count(model, Place.READY), stats.ready(), "ready: " + trace);
            assertEquals(count(model, Place.PENDING), stats.pending(), "pending: " + trace);
            assertEquals(count(model, Place.DELAYED), stats.delayed(), "delayed: " + trace);
            assertEquals(count(model, Place.DEAD), stats.deadLetters(), "dead letters: " + trace);
        }
    }

    private static void checkAttempt(Model m, Delivery d, List<String> trace) {
        assertTrue(d.attempt() > m.lastAttempt, "attempts only grow: " + d.attempt() + " after " + m.lastAttempt + ": " + trace);
        m.lastAttempt = d.attempt();
    }

    private List<Delivery> fetch(String queue, String consumer, int max) {
        try {
            return broker.fetch(List.of(queue), consumer, max, Duration.ofMillis(1));
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private static long count(Map<String, Model> model, Place place) {
        return model.values().stream().filter(m -> m.place == place).count();
    }

    private static String n(Delivery d) {
        return d.message().orElseThrow().userHeaders().get("n");
    }

    private static List<String> names(List<Delivery> deliveries) {
        return deliveries.stream().map(BrokerModelProperties::n).toList();
    }
}

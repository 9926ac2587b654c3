package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import io.binomic.api.BatchStatus;
import io.binomic.api.BatchStatus.Callback;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.FlowCounts;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.NewBatch;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A model-based test of batch bookkeeping: a batch of one to five jobs, then random sequences of
 * fetches by three consumers, settlements (success, dead letter, retry, the ack of a job a worker
 * found cancelled) by the owner or late by a former owner, resends of any settlement sent before,
 * reclaims, due retries moved back, and a batch cancel. After every step the broker's batch
 * status must match a model that counts each job's first applied final outcome, and the callbacks
 * enqueued so far must be exactly what the model says: complete once when every job ended and
 * not before, success once when every job succeeded, death once at the first dead letter.
 * Every broker runs it (memory in core, Redis in binomic-it).
 */
public abstract class BatchModelProperties {
    private static final String[] CONSUMERS = {"c0", "c1", "c2"};
    private static final int OPS = 9;

    protected BatchModelProperties() {
    }

    protected abstract Broker createBroker();

    protected abstract Scheduler createScheduler(Broker started);

    /** Creates {@code queues} on the started broker; {@code start} again by default, which the memory broker allows. */
    protected void prepare(Broker started, List<String> queues) {
        started.start(queues);
    }

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

    /** The model of one job: who holds which delivery of it, and how it ended (null while it has not). */
    static final class Job {
        String owner;
        String receipt;
        int deliveryCount;
        boolean delayed;
        Batches.Outcome ended;
    }

    @Test
    void eachCallbackIsEnqueuedOnceAndTheCountsHoldInAnyInterleaving() {
        AtomicInteger cases = new AtomicInteger();
        qt().withExamples(examples())
                .forAll(integers().between(1, 5), lists().of(integers().between(0, OPS * 24 - 1)).ofSizeBetween(1, 60))
                .checkAssert((size, ops) -> {
                    cases.incrementAndGet();
                    run(size, ops);
                });
        assertTrue(cases.get() >= examples() * 9 / 10, "only " + cases.get() + " sequences ran");
    }

    private void run(int size, List<Integer> ops) {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String queue = "bmodel-" + suffix;
        String callbacks = "bmodel-cb-" + suffix;
        prepare(broker, List.of(queue, callbacks));
        Batches batches = BrokerCapabilities.of(broker, Batches.class);
        UUID id = UUID.randomUUID();
        Map<UUID, Job> model = new HashMap<>();
        List<Message> jobs = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            Message m = Message.builder().id(UUID.randomUUID()).task("child").queue(queue).enqueuedAt(Instant.now())
                    .payload("{}".getBytes(StandardCharsets.UTF_8)).trackFor(Duration.ofMinutes(5)).batch(id).build();
            jobs.add(m);
            model.put(m.id(), new Job());
        }
        Map<Callback, Message> cbs = new EnumMap<>(Callback.class);
        for (Callback c : Callback.values()) {
            cbs.put(c, Message.builder().id(UUID.randomUUID()).task(c.name()).queue(callbacks).enqueuedAt(Instant.now())
                    .payload("{}".getBytes(StandardCharsets.UTF_8)).batchCallback(id).build());
        }
        FlowCounts before = batches.counts();
        batches.submitBatch(new NewBatch(id, false, Duration.ofMinutes(5), cbs), jobs);

        Map<String, List<Delivery>> held = new HashMap<>();
        for (String c : CONSUMERS) {
            held.put(c, new ArrayList<>());
        }
        List<Settlement> sent = new ArrayList<>();
        Map<String, Integer> fired = new HashMap<>();
        boolean cancelRequested = false;
        List<String> trace = new ArrayList<>();
        for (int op : ops) {
            String consumer = CONSUMERS[(op / OPS) % CONSUMERS.length];
            int pick = op / (OPS * CONSUMERS.length);
            List<Delivery> mine = held.get(consumer);
            switch (op % OPS) {
                case 0 -> {
                    List<Delivery> got = fetch(queue, consumer, 1 + pick % 3);
                    for (Delivery d : got) {
                        Job j = model.get(d.message().orElseThrow().id());
                        j.owner = consumer;
                        j.receipt = d.receipt();
                        j.deliveryCount = d.deliveryCount();
                    }
                    mine.addAll(got);
                    trace.add(consumer + " fetch " + got.size());
                }
                case 1, 2, 3, 4 -> {
                    if (mine.isEmpty()) {
                        continue;
                    }
                    Delivery d = mine.remove(pick % mine.size());
                    Settlement s = settlement(op % OPS, d);
                    apply(consumer, s, model, trace);
                    sent.add(s);
                }
                case 5 -> {
                    if (sent.isEmpty()) {
                        continue;
                    }
                    // a resend goes out as its first sender did (apply looks the sender up)
                    trace.add("resend");
                    apply(consumer, sent.get(pick % sent.size()), model, trace);
                }
                case 6 -> {
                    List<Delivery> got = broker.reclaim(queue, consumer, Duration.ZERO, 1 + pick % 3);
                    for (Delivery d : got) {
                        Job j = model.get(d.message().orElseThrow().id());
                        j.owner = consumer;
                        j.receipt = d.receipt();
                        j.deliveryCount = d.deliveryCount();
                    }
                    mine.addAll(got); // the former owner keeps its stale copy: its settlement must count nothing
                    trace.add(consumer + " reclaim " + got.size());
                }
                case 7 -> {
                    int moved = scheduler.moveDue(queue, Instant.now().plusSeconds(3600), 100);
                    model.values().forEach(j -> j.delayed = false);
                    trace.add("move due " + moved);
                }
                case 8 -> {
                    if (pick % 4 == 0) {
                        Set<UUID> unfinished = batches.cancelBatch(id).keySet();
                        Set<UUID> expected = new HashSet<>();
                        model.forEach((job, j) -> {
                            if (j.ended == null) {
                                expected.add(job);
                            }
                        });
                        assertEquals(expected, unfinished, "the unfinished jobs a cancel lists: " + trace);
                        // a batch whose jobs all ended has ended (it is closed): its cancel changes nothing
                        cancelRequested |= !expected.isEmpty();
                        trace.add("cancel batch");
                    }
                }
                default -> throw new AssertionError(op);
            }
            check(batches, id, model, callbacks, fired, cancelRequested, size, trace);
            checkCounts(batches, before, model, cancelRequested, size, trace);
        }
    }

    /** Who sent each settlement first: a resend goes out as that consumer. */
    private final Map<Settlement, String> senders = new HashMap<>();

    private Settlement settlement(int kind, Delivery d) {
        Message m = d.message().orElseThrow();
        JobUpdate succeeded = new JobUpdate(d.queue(), m.id(), Map.of(JobRecords.STATE, "SUCCEEDED"), List.of(), Duration.ZERO, true);
        JobUpdate dead = new JobUpdate(d.queue(), m.id(), Map.of(JobRecords.STATE, "DEAD_LETTERED"), List.of(), Duration.ZERO, true);
        return switch (kind) {
            case 1 -> new Settlement.Ack(d, succeeded);
            case 2 -> new Settlement.DeadLetter(d, new io.binomic.api.DeadLetter.Failure(DeadLetterReason.MAX_ATTEMPTS, "E", "boom", "",
                    d.attempt(), Instant.now()), dead);
            case 3 -> new Settlement.RetryLater(d, m.withAttempt(d.attempt() + 1, Instant.now()), Instant.now());
            default -> new Settlement.Ack(d); // a tracked job the worker found cancelled: not run
        };
    }

    private void apply(String consumer, Settlement s, Map<UUID, Job> model, List<String> trace) {
        senders.putIfAbsent(s, consumer);
        String sender = senders.get(s);
        Delivery d = s.delivery();
        Job j = model.get(d.message().orElseThrow().id());
        boolean current = j.ended == null && !j.delayed && sender.equals(j.owner) && d.receipt().equals(j.receipt)
                && d.deliveryCount() <= j.deliveryCount; // a consumer that reclaimed what it held settles either copy
        boolean applied = broker.settle(sender, List.of(s)).allApplied();
        trace.add(sender + " " + s.getClass().getSimpleName() + (s.job() == null ? "" : "+job") + " of " + j.receipt
                + (applied ? " applied" : " refused"));
        assertEquals(current, applied, "a settlement applies exactly when its sender holds the delivery: " + trace);
        if (!applied) {
            return;
        }
        j.owner = null;
        j.receipt = null;
        Batches.Outcome outcome = Batches.outcomeOf(s);
        if (outcome == null) {
            j.delayed = true;
        } else {
            j.ended = outcome;
        }
    }

    private void check(Batches batches, UUID id, Map<UUID, Job> model, String callbacks, Map<String, Integer> fired,
                       boolean cancelRequested, int size, List<String> trace) {
        try {
            for (Delivery d : broker.fetch(List.of(callbacks), "cb", 10, Duration.ofMillis(1))) {
                fired.merge(d.message().orElseThrow().task(), 1, Integer::sum);
                broker.settle("cb", List.of(new Settlement.Ack(d)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        int succeeded = count(model, Batches.Outcome.SUCCEEDED);
        int dead = count(model, Batches.Outcome.DEAD_LETTERED);
        int cancelled = count(model, Batches.Outcome.CANCELLED);
        boolean complete = succeeded + dead + cancelled == size;
        Map<String, Integer> expected = new HashMap<>();
        if (complete) {
            expected.put(Callback.COMPLETE.name(), 1);
        }
        if (succeeded == size) {
            expected.put(Callback.SUCCESS.name(), 1);
        }
        if (dead > 0) {
            expected.put(Callback.DEATH.name(), 1);
        }
        assertEquals(expected, fired, "callbacks enqueued: " + trace);
        BatchStatus s = batches.readBatch(id).orElseThrow();
        List<Integer> counts = List.of(s.total(), s.succeeded(), s.deadLettered(), s.cancelled());
        assertEquals(List.of(size, succeeded, dead, cancelled), counts, "counts: " + trace);
        assertEquals(cancelRequested, s.cancelRequested());
        Set<UUID> failed = new HashSet<>();
        model.forEach((job, j) -> {
            if (j.ended != null && j.ended != Batches.Outcome.SUCCEEDED) {
                failed.add(job);
            }
        });
        assertEquals(failed, Set.copyOf(s.failedJobs()), "failed jobs: " + trace);
    }

    /** The broker-wide counts hold this one batch open until its jobs all ended, then in the state its end makes. */
    private static void checkCounts(Batches batches, FlowCounts before, Map<UUID, Job> model, boolean cancelRequested, int size,
                                    List<String> trace) {
        int succeeded = count(model, Batches.Outcome.SUCCEEDED);
        boolean complete = model.values().stream().allMatch(j -> j.ended != null);
        boolean allSucceeded = succeeded == size;
        FlowCounts expected = BatchesContractTest.plus(before, complete ? 0 : 1, complete && allSucceeded ? 1 : 0,
                complete && !allSucceeded && !cancelRequested ? 1 : 0, complete && !allSucceeded && cancelRequested ? 1 : 0);
        assertEquals(expected, batches.counts(), "the broker-wide counts: " + trace);
    }

    private static int count(Map<UUID, Job> model, Batches.Outcome o) {
        return (int) model.values().stream().filter(j -> j.ended == o).count();
    }

    private List<Delivery> fetch(String queue, String consumer, int max) {
        try {
            return broker.fetch(List.of(queue), consumer, max, Duration.ofMillis(1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}

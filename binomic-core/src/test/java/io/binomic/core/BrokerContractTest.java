package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.JobHandle;
import io.binomic.api.Message;
import io.binomic.api.QueueStats;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobEvent;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.JobUpdate;
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
 * The behaviour every {@link Broker} must have. Each implementation extends this class and says
 * how to create an unstarted broker; every test uses fresh queue names so a shared server is fine.
 * This is what makes "swap the broker via ServiceLoader" safe.
 */
public abstract class BrokerContractTest {

    protected BrokerContractTest() {
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

    @Test
    void backedUpQueuesOfOneWorkerTakeTurnsWhateverEmptyQueuesLieBetweenThem() throws InterruptedException {
        String suffix = queue.substring(queue.lastIndexOf('-') + 1);
        List<String> queues = List.of("empty1-" + suffix, queue, otherQueue, "empty2-" + suffix, "empty3-" + suffix);
        broker.close();
        broker = createBroker(); // a worker's broker, started on all five queues
        broker.start(queues);
        List<Message> backlog = new java.util.ArrayList<>();
        for (int i = 0; i < 20; i++) {
            backlog.add(message(queue, "t", "{\"i\":" + i + "}", 1));
            backlog.add(message(otherQueue, "t", "{\"i\":" + i + "}", 1));
        }
        broker.enqueueAll(backlog);

        Map<String, Integer> served = new java.util.HashMap<>();
        for (int i = 0; i < 20; i++) { // one free slot at a time, as a busy worker fetches
            for (Delivery d : broker.fetch(queues, "c1", 1, Duration.ofMillis(200))) {
                served.merge(d.queue(), 1, Integer::sum);
            }
        }
        assertEquals(Map.of(queue, 10, otherQueue, 10), served, "one each in turn");

        served.clear();
        for (int i = 0; i < 5; i++) { // four free slots at a time
            for (Delivery d : broker.fetch(queues, "c1", 4, Duration.ofMillis(200))) {
                served.merge(d.queue(), 1, Integer::sum);
            }
        }
        assertEquals(20, served.values().stream().mapToInt(Integer::intValue).sum());
        assertTrue(Math.abs(served.get(queue) - served.get(otherQueue)) <= 4, "shared within a fetch's worth: " + served);
    }

    protected Message message(String task, String payload) {
        return message(queue, task, payload, 1);
    }

    protected static Message message(String queue, String task, String payload, int attempt) {
        return new Message(UUID.randomUUID(), task, queue, attempt, Instant.now().truncatedTo(ChronoUnit.MILLIS),
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

    private static DeadLetter.Failure failure() {
        return new DeadLetter.Failure(DeadLetterReason.MAX_ATTEMPTS, "E", "boom", "", 3, Instant.now());
    }

    @Test
    void partitionsAreStoredPerQueueAndAPartitionIsAQueueOfItsOwnAtEveryPriority() throws Exception {
        assertEquals(Map.of(), BrokerCapabilities.partitioning(broker).partitions(List.of(queue, otherQueue)));
        BrokerCapabilities.partitioning(broker).setPartitions(queue, new io.binomic.api.spi.QueuePartitions(3, 4));
        assertEquals(Map.of(queue, new io.binomic.api.spi.QueuePartitions(3, 4)), BrokerCapabilities.partitioning(broker).partitions(List.of(queue, otherQueue)));

        // partitions 0 and 3, at the default priority and at another: fetched, renewed and settled
        // on their own streams ('@' in a physical queue's name clashes with nothing)
        String last = io.binomic.api.spi.QueuePartitions.physical(queue, 3);
        List<Message> sent = new java.util.ArrayList<>();
        for (String q : List.of(queue, last)) {
            sent.add(message(q, "t", "{}", 1));
            sent.add(message(q, "t", "{}", 1).withHeader(Message.PRIORITY, "8"));
        }
        broker.enqueueAll(sent);
        List<Delivery> got = new java.util.ArrayList<>();
        for (int round = 0; round < 10 && got.size() < 4; round++) {
            got.addAll(broker.fetch(List.of(queue, last), "c1", 4, Duration.ofMillis(100)));
        }
        assertEquals(4, got.size());
        assertEquals(2, got.stream().filter(d -> d.queue().equals(last)).count());
        broker.renewLeases("c1", got);
        assertEquals(List.of(), ack("c1", got));
        assertEquals(0, broker.stats(last).pending());
        assertEquals(0, broker.stats(queue).pending());

        BrokerCapabilities.partitioning(broker).setPartitions(queue, io.binomic.api.spi.QueuePartitions.ONE);
        assertEquals(Map.of(), BrokerCapabilities.partitioning(broker).partitions(List.of(queue)), "one partition is no partitioning");
    }

    @Test
    void fetchOverSeveralQueuesNeverHandsOutMoreThanMaxInTotal() throws Exception {
        for (int i = 0; i < 10; i++) {
            broker.enqueue(message(queue, "t", "{\"i\":" + i + "}", 1));
            broker.enqueue(message(otherQueue, "t", "{\"i\":" + i + "}", 1));
        }
        List<String> both = List.of(queue, otherQueue);

        List<Delivery> three = broker.fetch(both, "c1", 3, Duration.ofMillis(200));
        assertTrue(three.size() <= 3, "asked for 3 over two queues, got " + three.size());
        int total = three.size();
        Set<String> queuesServed = new HashSet<>();
        for (int round = 0; round < 40 && total < 20; round++) {
            List<Delivery> one = broker.fetch(both, "c1", 1, Duration.ofMillis(200));
            assertTrue(one.size() <= 1, "asked for 1 over two queues, got " + one.size());
            one.forEach(d -> queuesServed.add(d.queue()));
            total += one.size();
        }

        assertEquals(20, total, "every message of both queues is handed out, one fetch at a time");
        assertEquals(Set.of(queue, otherQueue), queuesServed, "no queue is starved by the other");
    }

    @Test
    void settlementsOfAFormerOwnerAreStaleAndChangeNothing() throws Exception {
        broker.enqueue(message("t", "{}"));
        Delivery held = fetch(1).getFirst();
        Thread.sleep(150);
        Delivery takenOver = broker.reclaim(queue, "c2", Duration.ofMillis(100), 10).getFirst();

        Settlement lateAck = new Settlement.Ack(held);
        Settlement lateRetry = new Settlement.RetryLater(held, held.message().orElseThrow().withAttempt(2, Instant.now()), Instant.now());
        Settlement lateDeadLetter = new Settlement.DeadLetter(held, failure());
        assertEquals(new SettleReport(List.of(lateAck, lateRetry, lateDeadLetter), List.of()),
                broker.settle("c1", List.of(lateAck, lateRetry, lateDeadLetter)),
                "the old owner's ack, retry and dead letter are all refused: another consumer holds the delivery");
        broker.renewLeases("c1", List.of(held));

        QueueStats stats = broker.stats(queue);
        assertEquals(1, stats.pending(), "still running at the new owner");
        assertEquals(0, stats.delayed(), "no extra retry scheduled");
        assertEquals(0, stats.deadLetters(), "not dead-lettered while it runs elsewhere");
        assertEquals(List.of(), ack("c2", List.of(takenOver)), "the new owner settles it");
        assertEquals(0, broker.stats(queue).pending());
    }

    /** Its own reclaim (after its lease lapsed while it still ran the task) does not fence a consumer out. */
    @Test
    void aConsumerThatReclaimedItsOwnDeliverySettlesItWithTheCountItFirstHad() throws Exception {
        broker.enqueue(message("t", "{}"));
        Delivery first = fetch(1).getFirst();
        Thread.sleep(150);
        Delivery second = broker.reclaim(queue, "c1", Duration.ofMillis(100), 10).getFirst();
        assertEquals(2, second.deliveryCount());

        broker.renewLeases("c1", List.of(first));
        assertEquals(List.of(), ack("c1", List.of(first)));
        assertEquals(0, broker.stats(queue).pending());
    }

    @Test
    void settlingTwiceIsANoOpTheSecondTimeReportedAsNotPending() throws Exception {
        broker.enqueue(message("t", "{}"));
        Delivery d = fetch(1).getFirst();

        assertEquals(List.of(), ack("c1", List.of(d)));
        Settlement late = new Settlement.DeadLetter(d, failure());
        assertEquals(new SettleReport(List.of(), List.of(late)), broker.settle("c1", List.of(late)));
        assertEquals(0, broker.stats(queue).deadLetters());
    }

    @Test
    void pendingOfListsOnlyTheConsumersOwnDeliveriesAndChangesNothing() throws Exception {
        broker.enqueueAll(List.of(message("t", "{\"i\":1}"), message("t", "{\"i\":2}"), message("t", "{\"i\":3}")));
        List<Delivery> mine = fetch(2);
        List<Delivery> theirs = broker.fetch(List.of(queue), "c2", 1, Duration.ofMillis(200));
        assertEquals(1, theirs.size());

        List<Delivery> pending = BrokerCapabilities.lostReadRecovery(broker).pendingOf(queue, "c1", 10);

        if (!pending.isEmpty()) { // optional for a broker whose fetch cannot lose what it handed out
            assertEquals(mine, pending, "the same deliveries, at the same counts");
        }
        assertEquals(List.of(), ack("c1", mine), "listing them counted no delivery");
        assertEquals(1, broker.stats(queue).pending());
    }

    @Test
    void oneSettleCallMixesOutcomesAndQueues() throws Exception {
        broker.enqueueAll(List.of(message("t", "{}"), message("t", "{}"), message(otherQueue, "t", "{}", 1)));
        List<Delivery> got = new ArrayList<>(fetch(2));
        got.addAll(broker.fetch(List.of(otherQueue), "c1", 1, Duration.ofMillis(200)));
        assertEquals(3, got.size());

        List<Settlement> stale = broker.settle("c1", List.of(
                new Settlement.Ack(got.get(0)),
                new Settlement.RetryLater(got.get(1), got.get(1).message().orElseThrow().withAttempt(2, Instant.now()),
                        Instant.now().plusSeconds(60)),
                new Settlement.DeadLetter(got.get(2), failure()))).notApplied();

        assertEquals(List.of(), stale);
        QueueStats main = broker.stats(queue);
        assertEquals(0, main.pending());
        assertEquals(0, main.ready());
        assertEquals(1, main.delayed());
        QueueStats other = broker.stats(otherQueue);
        assertEquals(0, other.pending());
        assertEquals(1, other.deadLetters());
    }

    @Test
    void enqueuedMessageIsFetchedWithEveryFieldIntact() throws Exception {
        Message sent = message("greet", "{\"name\":\"Ada\"}");
        broker.enqueue(sent);

        List<Delivery> got = fetch(10);

        assertEquals(1, got.size());
        Delivery d = got.getFirst();
        assertEquals(queue, d.queue());
        assertEquals(sent, d.message().orElseThrow());
        assertEquals(1, d.deliveryCount());
        assertEquals(1, d.attempt());
    }

    @Test
    void fetchReturnsAtMostMaxInEnqueueOrder() throws Exception {
        List<Message> sent = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            sent.add(message("t", "{\"i\":" + i + "}"));
        }
        broker.enqueueAll(sent);

        List<Delivery> first = fetch(10);
        List<Delivery> rest = fetch(100);

        assertEquals(10, first.size());
        assertEquals(15, rest.size());
        List<Message> received = new ArrayList<>();
        first.forEach(d -> received.add(d.message().orElseThrow()));
        rest.forEach(d -> received.add(d.message().orElseThrow()));
        assertEquals(sent, received);
    }

    @Test
    void fetchOnAnEmptyQueueWaitsThenReturnsNothing() throws Exception {
        long start = System.nanoTime();
        List<Delivery> got = broker.fetch(List.of(queue), "c1", 5, Duration.ofMillis(300));
        long waitedMs = (System.nanoTime() - start) / 1_000_000;

        assertTrue(got.isEmpty());
        assertTrue(waitedMs >= 250, "fetch should block about the wait, returned after " + waitedMs + " ms");
    }

    @Test
    void blockedFetchWakesUpWhenAMessageArrives() throws Exception {
        var fetched = CompletableFuture.supplyAsync(() -> {
            try {
                return broker.fetch(List.of(queue), "c1", 5, Duration.ofSeconds(5));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(200);
        broker.enqueue(message("t", "{}"));

        assertEquals(1, fetched.get().size());
    }

    @Test
    void queuesAreIsolated() throws Exception {
        broker.enqueue(message(otherQueue, "t", "{}", 1));

        assertTrue(fetch(10).isEmpty());
        List<Delivery> fromOther = broker.fetch(List.of(queue, otherQueue), "c1", 10, Duration.ofMillis(200));
        assertEquals(1, fromOther.size());
        assertEquals(otherQueue, fromOther.getFirst().queue());
    }

    @Test
    void ackedMessagesAreGoneForGood() throws Exception {
        broker.enqueueAll(List.of(message("t", "{}"), message("t", "{}")));
        List<Delivery> got = fetch(10);

        assertEquals(List.of(), ack("c1", got));

        QueueStats stats = broker.stats(queue);
        assertEquals(0, stats.ready());
        assertEquals(0, stats.pending());
        assertTrue(broker.reclaim(queue, "c2", Duration.ZERO, 10).isEmpty(), "an acked message must not be reclaimable");
    }

    /**
     * The dashboard's charts: what several processes add to the same minute adds up, the longest
     * run is the longest any of them saw, and a read from a later minute leaves earlier ones out.
     */
    @Test
    void activityOfSeveralProcessesAddsUpPerMinute() {
        Instant thisMinute = io.binomic.api.spi.ActivityBucket.minuteOf(Instant.now());
        Instant before = thisMinute.minusSeconds(120);
        BrokerCapabilities.activity(broker).addActivity(Map.of(queue, List.of(new io.binomic.api.spi.ActivityBucket(before, 5, 1, 1, 0, 6_000_000, 2_000_000),
                new io.binomic.api.spi.ActivityBucket(thisMinute, 3, 0, 0, 1, 3_000_000, 1_500_000))));
        BrokerCapabilities.activity(broker).addActivity(Map.of(queue, List.of(new io.binomic.api.spi.ActivityBucket(thisMinute, 2, 2, 1, 1, 8_000_000, 4_000_000)),
                otherQueue, List.of(new io.binomic.api.spi.ActivityBucket(thisMinute, 100, 0, 0, 0, 1, 1))));

        assertEquals(List.of(new io.binomic.api.spi.ActivityBucket(before, 5, 1, 1, 0, 6_000_000, 2_000_000),
                        new io.binomic.api.spi.ActivityBucket(thisMinute, 5, 2, 1, 2, 11_000_000, 4_000_000)),
                BrokerCapabilities.activity(broker).activity(queue, before.plusSeconds(30)), "two processes' counts of a minute add up; the queue's own only");
        assertEquals(List.of(new io.binomic.api.spi.ActivityBucket(thisMinute, 5, 2, 1, 2, 11_000_000, 4_000_000)),
                BrokerCapabilities.activity(broker).activity(queue, thisMinute), "from a minute on");
        assertTrue(BrokerCapabilities.activity(broker).activity("never-used-" + UUID.randomUUID(), before).isEmpty());
    }

    @Test
    void unackedMessageIsPendingAndReclaimedAsTheNextAttempt() throws Exception {
        broker.enqueue(message("t", "{}"));
        Delivery first = fetch(1).getFirst();
        assertEquals(1, broker.stats(queue).pending());

        Thread.sleep(150);
        List<Delivery> reclaimed = broker.reclaim(queue, "c2", Duration.ofMillis(100), 10);

        assertEquals(1, reclaimed.size());
        Delivery again = reclaimed.getFirst();
        assertEquals(first.receipt(), again.receipt());
        assertEquals(2, again.deliveryCount());
        assertEquals(2, again.attempt());
        assertEquals(first.message(), again.message());
    }

    @Test
    void recentlyFetchedMessageIsNotReclaimed() throws Exception {
        broker.enqueue(message("t", "{}"));
        fetch(1);

        assertTrue(broker.reclaim(queue, "c2", Duration.ofSeconds(30), 10).isEmpty());
    }

    @Test
    void renewedLeasePreventsReclaim() throws Exception {
        broker.enqueue(message("t", "{}"));
        Delivery d = fetch(1).getFirst();

        for (int i = 0; i < 4; i++) {
            Thread.sleep(200);
            broker.renewLeases("c1", List.of(d));
        }

        // 1 s of allowed idleness against renewals every ~200 ms: slack for a loaded machine.
        assertTrue(broker.reclaim(queue, "c2", Duration.ofSeconds(1), 10).isEmpty(),
                "a message whose owner renews must never be reclaimed");
        Thread.sleep(1200);
        assertEquals(1, broker.reclaim(queue, "c2", Duration.ofSeconds(1), 10).size(),
                "once renewals stop, the message must be reclaimable");
    }

    @Test
    void retryLaterAcksAndSchedulesTheNextAttemptAtomically() throws Exception {
        broker.enqueue(message("t", "{}"));
        Delivery d = fetch(1).getFirst();
        Instant due = Instant.now().plusMillis(300);

        assertEquals(SettleReport.ALL_APPLIED, broker.settle("c1", List.of(new Settlement.RetryLater(d, d.message().orElseThrow().withAttempt(2, Instant.now()), due))));

        QueueStats stats = broker.stats(queue);
        assertEquals(0, stats.pending());
        assertEquals(1, stats.delayed());
        assertEquals(0, scheduler.moveDue(queue, Instant.now(), 100), "nothing is due before its time");
        assertEquals(due.toEpochMilli(), scheduler.nextDue(queue).orElseThrow().toEpochMilli(), "the retry is the scheduler's");
        sleepPast(due);
        assertEquals(1, scheduler.moveDue(queue, Instant.now(), 100));
        Delivery retried = fetch(1).getFirst();
        assertEquals(2, retried.attempt());
        assertEquals(d.message().orElseThrow().id(), retried.message().orElseThrow().id());
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
        assertEquals(letterId, back.headers().get(Message.REPLAYED_FROM));
        assertEquals("t-1", back.headers().get("trace"));
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

    /** Sleeps until the wall clock is past {@code instant}. */
    protected static void sleepPast(Instant instant) throws InterruptedException {
        long millis = Duration.between(Instant.now(), instant).toMillis() + 5;
        if (millis > 0) {
            Thread.sleep(millis);
        }
    }

    @Test
    void statsCountReadyPendingDelayedAndConsumers() throws Exception {
        broker.enqueueAll(List.of(message("t", "{}"), message("t", "{}"), message("t", "{}")));
        scheduler.schedule(message("t", "{}"), Instant.now().plusSeconds(60));
        fetch(1);

        QueueStats stats = broker.stats(queue);
        assertEquals(queue, stats.queue());
        assertEquals(2, stats.ready());
        assertEquals(1, stats.pending());
        assertEquals(1, stats.delayed());
        assertEquals(0, stats.deadLetters());
        assertEquals(1, stats.consumers());
    }

    @Test
    void idleConsumersWithNothingPendingAreRemoved() throws Exception {
        broker.enqueue(message("t", "{}"));
        broker.fetch(List.of(queue), "holder", 1, Duration.ofMillis(100));
        broker.fetch(List.of(queue), "idle", 1, Duration.ofMillis(100));
        Thread.sleep(300);

        int removed = broker.removeIdleConsumers(queue, Duration.ofMillis(200));

        assertEquals(1, removed, "only the consumer without pending messages goes");
        assertEquals(1, broker.stats(queue).consumers());
    }

    // ---- job records (tracked messages) ----

    protected Message trackedMessage(String task, long retentionMillis) {
        return new Message(UUID.randomUUID(), task, queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                "{}".getBytes(StandardCharsets.UTF_8), Map.of(Message.TRACK, Long.toString(retentionMillis)));
    }

    private JobUpdate update(Message m, Map<String, String> set, Duration expireAfter, boolean ends) {
        return new JobUpdate(queue, m.id(), set, List.of(), expireAfter, ends);
    }

    private String state(Message m) {
        return BrokerCapabilities.jobStore(broker).readJob(queue, m.id()).map(f -> f.get(JobRecords.STATE)).orElse("none");
    }

    @Test
    void aTrackedMessageHasAQueuedRecordAndAnUntrackedOneHasNone() throws Exception {
        Message tracked = trackedMessage("t", 60_000);
        Message untracked = message("t", "{}");
        broker.enqueueAll(List.of(tracked, untracked));

        Map<String, String> record = BrokerCapabilities.jobStore(broker).readJob(queue, tracked.id()).orElseThrow().fields();
        assertEquals("QUEUED", record.get(JobRecords.STATE));
        assertEquals("t", record.get(JobRecords.TASK));
        assertEquals("60000", record.get(JobRecords.RETENTION));
        assertEquals(Optional.empty(), BrokerCapabilities.jobStore(broker).readJob(queue, untracked.id()));
        assertEquals(2, fetch(10).size(), "tracking changes nothing about delivery");
    }

    @Test
    void aSettlementCarriesItsJobUpdateAndAnEndingOneNotifiesSubscribers() throws Exception {
        Message m = trackedMessage("t", 60_000);
        LinkedBlockingQueue<JobEvent> events = new LinkedBlockingQueue<>();
        try (AutoCloseable _ = BrokerCapabilities.jobStore(broker).subscribeJobEvents(queue, events::add)) {
            broker.enqueue(m);
            Delivery d = fetch(1).getFirst();
            assertEquals(Set.of(), BrokerCapabilities.jobStore(broker).startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING"), Duration.ZERO, false))));
            assertEquals("RUNNING", state(m));

            BrokerCapabilities.jobStore(broker).updateRunningJob(update(m, Map.of("progress", "50"), Duration.ZERO, false));
            assertEquals("50", BrokerCapabilities.jobStore(broker).readJob(queue, m.id()).orElseThrow().get("progress"));

            var done = update(m, Map.of(JobRecords.STATE, "SUCCEEDED", "result", "42"), Duration.ofMinutes(1), true);
            assertEquals(List.of(), broker.settle("c1", List.of(new Settlement.Ack(d, done))).notApplied());

            JobEvent event = events.poll(5, TimeUnit.SECONDS);
            assertEquals(new JobEvent(queue, m.id(), JobEvent.Kind.ENDED), event);
            Map<String, String> record = BrokerCapabilities.jobStore(broker).readJob(queue, m.id()).orElseThrow().fields();
            assertEquals("SUCCEEDED", record.get(JobRecords.STATE));
            assertEquals("42", record.get("result"));
            BrokerCapabilities.jobStore(broker).updateRunningJob(update(m, Map.of("progress", "99"), Duration.ZERO, false));
            assertEquals("50", BrokerCapabilities.jobStore(broker).readJob(queue, m.id()).orElseThrow().get("progress"), "progress only while running");
        }
    }

    @Test
    void aStaleSettlementChangesNoJobRecord() throws Exception {
        Message m = trackedMessage("t", 60_000);
        broker.enqueue(m);
        Delivery first = fetch(1).getFirst();
        Thread.sleep(30);
        assertEquals(1, broker.reclaim(queue, "c2", Duration.ofMillis(10), 10).size());

        var late = update(m, Map.of(JobRecords.STATE, "SUCCEEDED"), Duration.ofMinutes(1), true);
        assertEquals(1, broker.settle("c1", List.of(new Settlement.Ack(first, late))).notApplied().size());
        assertEquals("QUEUED", state(m), "the former owner's outcome is not the job's");
    }

    @Test
    void aCancelledQueuedJobIsNeverStartedAndStaysCancelled() throws Exception {
        Message m = trackedMessage("t", 60_000);
        broker.enqueue(m);
        var cancelled = update(m, Map.of(JobRecords.STATE, "CANCELLED"), Duration.ZERO, true);

        assertEquals(JobHandle.CancelOutcome.CANCELLED, BrokerCapabilities.jobStore(broker).cancelJob(cancelled));
        assertEquals("CANCELLED", state(m));
        fetch(1);
        assertEquals(Set.of(m.id()), BrokerCapabilities.jobStore(broker).startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING"), Duration.ZERO, false))));
        assertEquals("CANCELLED", state(m));
        assertEquals(JobHandle.CancelOutcome.ALREADY_ENDED, BrokerCapabilities.jobStore(broker).cancelJob(cancelled));
    }

    @Test
    void cancellingARunningJobAsksItsWorkerAndLeavesItRunning() throws Exception {
        Message m = trackedMessage("t", 60_000);
        LinkedBlockingQueue<JobEvent> events = new LinkedBlockingQueue<>();
        try (AutoCloseable _ = BrokerCapabilities.jobStore(broker).subscribeJobEvents(queue, events::add)) {
            broker.enqueue(m);
            fetch(1);
            BrokerCapabilities.jobStore(broker).startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING"), Duration.ZERO, false)));

            var cancelled = update(m, Map.of(JobRecords.STATE, "CANCELLED"), Duration.ZERO, true);
            assertEquals(JobHandle.CancelOutcome.CANCEL_REQUESTED, BrokerCapabilities.jobStore(broker).cancelJob(cancelled));

            assertEquals(new JobEvent(queue, m.id(), JobEvent.Kind.CANCEL_REQUESTED), events.poll(5, TimeUnit.SECONDS));
            Map<String, String> record = BrokerCapabilities.jobStore(broker).readJob(queue, m.id()).orElseThrow().fields();
            assertEquals("RUNNING", record.get(JobRecords.STATE));
            assertEquals("1", record.get(JobRecords.CANCEL_REQUESTED));
        }
    }

    @Test
    void cancellingAnUnknownJobSaysSoAndCreatesNothing() {
        Message m = trackedMessage("t", 60_000);
        var cancelled = update(m, Map.of(JobRecords.STATE, "CANCELLED"), Duration.ZERO, true);
        assertEquals(JobHandle.CancelOutcome.NOT_FOUND, BrokerCapabilities.jobStore(broker).cancelJob(cancelled));
        assertEquals(Optional.empty(), BrokerCapabilities.jobStore(broker).readJob(queue, m.id()));
    }

    @Test
    void anEndedJobsRecordExpiresAfterItsRetention() throws Exception {
        Message m = trackedMessage("t", 60_000);
        broker.enqueue(m);
        Delivery d = fetch(1).getFirst();
        broker.settle("c1", List.of(new Settlement.Ack(d, update(m, Map.of(JobRecords.STATE, "SUCCEEDED"), Duration.ofMillis(300), true))));
        assertEquals("SUCCEEDED", state(m));
        Thread.sleep(1_000);
        assertEquals(Optional.empty(), BrokerCapabilities.jobStore(broker).readJob(queue, m.id()));
    }

    @Test
    void aReplayedTrackedDeadLetterIsQueuedAgainAndRunsAgain() throws Exception {
        Message m = trackedMessage("t", 60_000);
        broker.enqueue(m);
        Delivery d = fetch(1).getFirst();
        broker.settle("c1", List.of(new Settlement.DeadLetter(d, failure(),
                update(m, Map.of(JobRecords.STATE, "DEAD_LETTERED"), Duration.ofMinutes(1), true))));
        assertEquals("DEAD_LETTERED", state(m));
        String letterId = BrokerCapabilities.deadLetterStore(broker).readDeadLetters(queue, Optional.empty(), 10).getFirst().id();

        assertEquals(1, BrokerCapabilities.deadLetterStore(broker).replayDeadLetters(queue, List.of(letterId)));
        assertEquals("QUEUED", state(m));
        fetch(1);
        assertEquals(Set.of(), BrokerCapabilities.jobStore(broker).startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING"), Duration.ZERO, false))));
    }

    @Test
    void aJobAskedToCancelWhileItsWorkerDiedEndsCancelledInsteadOfRunningAgain() throws Exception {
        Message m = trackedMessage("t", 60_000);
        LinkedBlockingQueue<JobEvent> events = new LinkedBlockingQueue<>();
        try (AutoCloseable _ = BrokerCapabilities.jobStore(broker).subscribeJobEvents(queue, events::add)) {
            broker.enqueue(m);
            fetch(1);
            BrokerCapabilities.jobStore(broker).startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING", "attempt", "1"), Duration.ZERO, false)));
            var cancelled = update(m, Map.of(JobRecords.STATE, "CANCELLED"), Duration.ZERO, true);
            assertEquals(JobHandle.CancelOutcome.CANCEL_REQUESTED, BrokerCapabilities.jobStore(broker).cancelJob(cancelled));
            assertEquals(JobEvent.Kind.CANCEL_REQUESTED, events.poll(5, TimeUnit.SECONDS).kind());
            Thread.sleep(30);
            assertEquals(1, broker.reclaim(queue, "c2", Duration.ofMillis(10), 10).size(), "its worker died: reclaimed");

            Set<UUID> notStarted = BrokerCapabilities.jobStore(broker).startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING", "attempt", "2"),
                    Duration.ZERO, false)));

            assertEquals(Set.of(m.id()), notStarted);
            assertEquals("CANCELLED", state(m));
            assertEquals(new JobEvent(queue, m.id(), JobEvent.Kind.ENDED), events.poll(5, TimeUnit.SECONDS));
        }
    }

    @Test
    void anAttemptWhoseWorkerStoppedIsKeptInTheHistoryAsAbandoned() throws Exception {
        Message m = trackedMessage("t", 60_000);
        broker.enqueue(m);
        fetch(1);
        BrokerCapabilities.jobStore(broker).startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING", "attempt", "1", "worker", "w1", "startedAt", "1000"),
                Duration.ZERO, false)));

        BrokerCapabilities.jobStore(broker).startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING", "attempt", "2", "worker", "w2"), Duration.ZERO, false)));

        Map<String, String> record = BrokerCapabilities.jobStore(broker).readJob(queue, m.id()).orElseThrow().fields();
        assertEquals("2", record.get("attempt"));
        String[] first = record.get("a.1").split("\t");
        assertEquals("w1", first[0]);
        assertEquals("1000", first[1]);
        assertEquals("abandoned", first[3]);
    }
}

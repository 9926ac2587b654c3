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
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link Broker} must have. Each implementation extends this class and says
 * how to create an unstarted broker; every test uses fresh queue names so a shared server is fine.
 * This is what makes "swap the broker via ServiceLoader" safe.
 */
public abstract class BrokerContractTest extends BrokerContractFixture {

    protected BrokerContractTest() {
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

    /** A renewal says which deliveries the consumer lost, taken over or no longer pending: the worker stops running those. */
    @Test
    void aRenewalReportsTheDeliveriesTheConsumerNoLongerHolds() throws Exception {
        for (int i = 0; i < 3; i++) {
            broker.enqueue(message("t", "{}"));
        }
        List<Delivery> got = fetch(3);
        assertEquals(3, got.size());
        Thread.sleep(150);
        Delivery kept = got.get(0);
        assertEquals(List.of(), broker.renewLeasesReportingLost("c1", List.of(kept)), "still held: renewed");
        List<Delivery> takenOver = broker.reclaim(queue, "c2", Duration.ofMillis(100), 10);
        assertEquals(2, takenOver.size(), "the two not renewed were taken over");
        assertEquals(List.of(), ack("c2", List.of(takenOver.get(1))));

        List<Delivery> lost = broker.renewLeasesReportingLost("c1", got);
        assertEquals(Set.of(got.get(1).key(), got.get(2).key()), lost.stream().map(Delivery::key).collect(Collectors.toSet()),
                "one running at c2, one settled by c2");
        assertEquals(got.get(1).deliveryCount(), lost.getFirst().deliveryCount(), "reported as passed in");
        assertEquals(List.of(), ack("c1", List.of(kept)), "the renewed one is still c1's");
    }

    /** Its own reclaim (after its lease lapsed while it still ran the task) does not fence a consumer out. */
    @Test
    void aConsumerThatReclaimedItsOwnDeliverySettlesItWithTheCountItFirstHad() throws Exception {
        broker.enqueue(message("t", "{}"));
        Delivery first = fetch(1).getFirst();
        Thread.sleep(150);
        Delivery second = broker.reclaim(queue, "c1", Duration.ofMillis(100), 10).getFirst();
        assertEquals(2, second.deliveryCount());

        assertEquals(List.of(), broker.renewLeasesReportingLost("c1", List.of(first)), "its own, at a higher count: not lost");
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

    /** A stats read asked once, within a bound, answers as {@link Broker#stats} does, consumers included. */
    @Test
    void statsAskedOnceAnswerAsStats() throws Exception {
        broker.enqueueAll(List.of(message("t", "{}"), message("t", "{}")));
        fetch(1);
        QueueStats once = broker.statsOnce(queue, Duration.ofSeconds(5));
        assertEquals(broker.stats(queue), once);
        assertEquals(1, once.ready());
        assertEquals(1, once.pending());
        assertTrue(once.consumers() >= 1, "the consumer that fetched: " + once);
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

        int removed = broker.removeIdleConsumers(queue, "holder", Duration.ofMillis(200));

        assertEquals(1, removed, "only the consumer without pending messages goes");
        assertEquals(1, broker.stats(queue).consumers());
    }

    /**
     * A worker that stops cleanly leaves its queue's consumers, so the queue's views stop counting it; one that
     * holds a delivery stays with it, since removing it would drop the delivery (XGROUP DELCONSUMER drops the
     * consumer's pending entries) where reclaim must find it. The queue stays one a worker has read.
     */
    @Test
    void aStoppingConsumerLeavesOnlyWhenItHoldsNothing() throws Exception {
        broker.enqueue(message("t", "{}"));
        Delivery held = broker.fetch(List.of(queue), "holder", 1, Duration.ofMillis(100)).getFirst();
        broker.fetch(List.of(queue), "done", 1, Duration.ofMillis(100));
        assertEquals(2, broker.stats(queue).consumers());

        assertTrue(broker.removeConsumer(queue, "done"));
        assertFalse(broker.removeConsumer(queue, "holder"), "it holds a delivery");

        assertEquals(1, broker.stats(queue).consumers());
        assertEquals(1, broker.stats(queue).pending());
        assertTrue(broker.hasBeenRead(queue), "the queue a worker read is still known");
        assertFalse(broker.hasBeenRead(queue + "-unread"));
        List<Delivery> reclaimed = broker.reclaim(queue, "other", Duration.ZERO, 10);
        assertEquals(List.of(held.message().orElseThrow().id()), reclaimed.stream().map(d -> d.message().orElseThrow().id()).toList(),
                "the delivery the holder kept is there to reclaim");
    }

    /**
     * Found by an outside tester on Redis 7.0: a read blocked on an empty stream does not refresh
     * the consumer's idle time there, so live workers removed each other's consumers.
     */
    @Test
    void consumersOfWorkersThatSayTheyAreAliveStayWhileTheyWaitOnAnEmptyQueue() throws Exception {
        // Five times the loop's round of about 200 ms: a machine busy enough to stretch one round past the idle
        // limit would remove a live consumer, which is what this test is here to catch.
        Duration idle = Duration.ofSeconds(1);
        broker.fetch(List.of(queue), "gone", 1, Duration.ofMillis(50));
        broker.fetch(List.of(queue), "a", 1, Duration.ofMillis(50));
        broker.fetch(List.of(queue), "b", 1, Duration.ofMillis(50));
        int removed = 0;
        long end = System.nanoTime() + idle.multipliedBy(3).toNanos();
        while (System.nanoTime() < end) {
            for (String alive : List.of("a", "b")) {
                removed += broker.removeIdleConsumers(queue, alive, idle);
                assertEquals(List.of(), broker.fetch(List.of(queue), alive, 1, Duration.ofMillis(100)));
            }
        }

        assertEquals(1, removed, "only the consumer that stopped saying it is alive goes");
        assertEquals(2, broker.stats(queue).consumers());
    }
}

package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.Priority;
import io.binomic.api.QueueStats;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.SettledCleanup;
import io.binomic.api.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link Broker} must do with {@linkplain Priority priorities}: higher first within a
 * queue, lower levels served on a bounded share of fetches, and every path a message can take
 * (retry, dead letter and replay, reclaim, lease renewal, delayed moves, job records) keeping its
 * priority. Each implementation extends this class, as it does {@link BrokerContractTest}.
 */
public abstract class PriorityContractTest {

    protected PriorityContractTest() {
    }

    /** A new, not yet started broker with these {@link io.binomic.api.BrokerConfig#options()}. */
    protected abstract Broker createBroker(Map<String, String> options);

    /** The scheduler of {@code started}. */
    protected abstract Scheduler createScheduler(Broker started);

    protected Broker broker;
    protected Scheduler scheduler;
    protected String queue;
    protected String otherQueue;

    @BeforeEach
    void startBroker() {
        start(Map.of());
    }

    private void start(Map<String, String> options) {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        queue = "prio-" + suffix;
        otherQueue = "prio-other-" + suffix;
        broker = createBroker(options);
        broker.start(List.of(queue, otherQueue));
        scheduler = createScheduler(broker);
    }

    @AfterEach
    void closeBroker() {
        scheduler.close();
        broker.close();
    }

    protected static Message message(String queue, String payload, int priority) {
        Map<String, String> headers = new HashMap<>(Map.of("trace", "t-1"));
        if (priority != Priority.DEFAULT) {
            headers.put(Message.PRIORITY, Integer.toString(priority));
        }
        return Message.fromWire(UUID.randomUUID(), "t", queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                payload.getBytes(StandardCharsets.UTF_8), headers);
    }

    private Message message(String payload, int priority) {
        return message(queue, payload, priority);
    }

    private List<Delivery> fetch(int max) throws InterruptedException {
        return broker.fetch(List.of(queue), "c1", max, Duration.ofMillis(200));
    }

    private static String payload(Delivery d) {
        return payload(d.message().orElseThrow());
    }

    private static String payload(Message m) {
        return new String(m.payload(), StandardCharsets.UTF_8);
    }

    private static int priority(Delivery d) {
        return d.message().orElseThrow().priority();
    }

    private List<Settlement> ack(String consumer, List<Delivery> deliveries) {
        return broker.settle(consumer, deliveries.stream().<Settlement>map(Settlement.Ack::new).toList()).notApplied();
    }

    @Test
    void higherPriorityIsFetchedFirstAndEachLevelInOrderOfArrival() throws Exception {
        List<Message> all = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            all.add(message("low-" + i, 1));
            all.add(message("mid-" + i, Priority.DEFAULT));
            all.add(message("high-" + i, 9));
        }
        all.forEach(broker::enqueue);

        List<String> order = fetch(12).stream().map(PriorityContractTest::payload).toList();

        assertEquals(List.of("high-0", "high-1", "high-2", "high-3", "mid-0", "mid-1", "mid-2", "mid-3",
                "low-0", "low-1", "low-2", "low-3"), order);
    }

    @Test
    void theMessageKeepsItsPriorityAndAMessageWithoutOneHasTheDefault() throws Exception {
        broker.enqueueAll(List.of(message("high", 9), message("plain", Priority.DEFAULT), message("low", 0)));

        List<Delivery> got = fetch(3);

        assertEquals(List.of(9, Priority.DEFAULT, 0), got.stream().map(PriorityContractTest::priority).toList());
        assertEquals(Map.of("trace", "t-1"), got.get(1).message().orElseThrow().wireHeaders(), "no priority header for the default");
        assertEquals("9", got.getFirst().message().orElseThrow().wireHeaders().get(Message.PRIORITY));
    }

    @Test
    void aBacklogOfHigherPriorityLeavesOneFetchInTenToLowerLevels() throws Exception {
        for (int i = 0; i < 30; i++) {
            broker.enqueue(message("high-" + i, 9));
            broker.enqueue(message("low-" + i, 1));
        }
        List<Integer> lowAt = new ArrayList<>();
        for (int f = 1; f <= 30; f++) {
            List<Delivery> one = fetch(1);
            assertEquals(1, one.size());
            if (priority(one.getFirst()) == 1) {
                lowAt.add(f);
            }
            assertEquals(List.of(), ack("c1", one));
        }
        assertEquals(List.of(10, 20, 30), lowAt, "the 10th, 20th and 30th fetch start at the lower level (default "
                + Priority.FAIRNESS_OPTION + " " + Priority.DEFAULT_FAIRNESS + ")");
    }

    @Test
    void strictPriorityNeverServesALowerLevelWhileAHigherOneHasWork() throws Exception {
        closeBroker();
        start(Map.of(Priority.FAIRNESS_OPTION, "0"));
        for (int i = 0; i < 25; i++) {
            broker.enqueue(message("high-" + i, 8));
            broker.enqueue(message("low-" + i, 2));
        }
        for (int f = 0; f < 25; f++) {
            List<Delivery> one = fetch(1);
            assertEquals(8, priority(one.getFirst()), "fetch " + f);
            ack("c1", one);
        }
        assertEquals(2, priority(fetch(1).getFirst()), "the lower level once the higher one is empty");
    }

    @Test
    void everyLevelTakesItsTurnAtBeingServedFirst() throws Exception {
        for (int i = 0; i < 40; i++) {
            broker.enqueue(message("9-" + i, 9));
            broker.enqueue(message("5-" + i, Priority.DEFAULT));
            broker.enqueue(message("0-" + i, 0));
        }
        Map<Integer, Integer> byLevel = new HashMap<>();
        for (int f = 0; f < 40; f++) {
            List<Delivery> one = fetch(1);
            byLevel.merge(priority(one.getFirst()), 1, Integer::sum);
            ack("c1", one);
        }
        assertEquals(36, byLevel.get(9), "36 of 40 fetches from the top: " + byLevel);
        assertEquals(2, byLevel.get(Priority.DEFAULT), "the middle level starts 2 of 4 lower-first fetches: " + byLevel);
        assertEquals(2, byLevel.get(0), "the lowest level starts the other 2: " + byLevel);
    }

    @Test
    void fetchNeverHandsOutMoreThanMaxOverLevelsAndQueues() throws Exception {
        Set<String> expected = new HashSet<>();
        for (int p : new int[] {9, 7, Priority.DEFAULT, 1}) {
            for (int i = 0; i < 5; i++) {
                Message a = message(queue, "q" + p + "-" + i, p);
                Message b = message(otherQueue, "o" + p + "-" + i, p);
                broker.enqueueAll(List.of(a, b));
                expected.add(payload(a));
                expected.add(payload(b));
            }
        }
        Set<String> seen = new HashSet<>();
        int[] maxes = {3, 1, 2, 7, 1, 5};
        for (int round = 0; round < 200 && seen.size() < expected.size(); round++) {
            int max = maxes[round % maxes.length];
            List<Delivery> got = broker.fetch(List.of(queue, otherQueue), "c1", max, Duration.ofMillis(100));
            assertTrue(got.size() <= max, "asked for " + max + ", got " + got.size());
            for (Delivery d : got) {
                assertTrue(seen.add(payload(d)), "handed out twice: " + payload(d));
            }
            assertEquals(List.of(), ack("c1", got));
        }
        assertEquals(expected, seen);
        assertEquals(List.of(), broker.fetch(List.of(queue, otherQueue), "c1", 4, Duration.ofMillis(100)));
    }

    @Test
    void aWaitingFetchWakesForAMessageOfAnotherLevel() throws Exception {
        broker.enqueue(message("first", 9));
        ack("c1", fetch(5));
        CompletableFuture<List<Delivery>> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return broker.fetch(List.of(queue), "c1", 4, Duration.ofSeconds(20));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(300);
        long sent = System.nanoTime();
        broker.enqueue(message("later", 9));
        List<Delivery> got = waiting.get(15, TimeUnit.SECONDS);
        assertEquals(List.of("later"), got.stream().map(PriorityContractTest::payload).toList());
        assertTrue(System.nanoTime() - sent < Duration.ofSeconds(10).toNanos(), "woken by the message, not by the end of the wait");
    }

    @Test
    void aWaitingFetchOfFewerThanTheLevelsWakesForAMessageOfAnyLevel() throws Exception {
        // a worker with one slot free (a concurrency limit's waiter moved back as a slot frees) waits on every level
        int[] levels = {9, Priority.DEFAULT, 1};
        for (int p : levels) {
            broker.enqueue(message("level-" + p, p));
        }
        ack("c1", fetch(levels.length));
        for (int round = 0; round < 2 * levels.length; round++) {
            int level = levels[round % levels.length];
            CompletableFuture<List<Delivery>> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return broker.fetch(List.of(queue), "c1", 1, Duration.ofSeconds(30));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(300);
            long sent = System.nanoTime();
            broker.enqueue(message("later-" + round, level));
            List<Delivery> got = waiting.get(40, TimeUnit.SECONDS);
            long waited = System.nanoTime() - sent;
            assertEquals(List.of("later-" + round), got.stream().map(PriorityContractTest::payload).toList(),
                    "round " + round + ": the fetch waiting for 1 got the message of level " + level);
            assertTrue(waited < Duration.ofSeconds(8).toNanos(), "round " + round + ": woken by the message of level " + level
                    + ", not by the end of a wait on another level: " + Duration.ofNanos(waited));
            assertEquals(List.of(), ack("c1", got));
        }
    }

    @Test
    void statsCountEveryLevel() throws Exception {
        broker.enqueueAll(List.of(message("a", 9), message("b", 9), message("c", Priority.DEFAULT), message("d", 0),
                message("e", 0), message("f", 0)));
        QueueStats before = broker.stats(queue);
        assertEquals(6, before.ready());
        assertEquals(0, before.pending());

        List<Delivery> four = fetch(4);

        QueueStats after = broker.stats(queue);
        assertEquals(2, after.ready(), "ready summed over levels");
        assertEquals(4, after.pending(), "pending summed over levels");
        assertEquals(List.of(), ack("c1", four));
        assertEquals(0, broker.stats(queue).pending());
        broker.capability(SettledCleanup.class).ifPresent(cleanup -> cleanup.removeSettled(queue)); // a broker that keeps nothing settled has none
        assertEquals(2, broker.stats(queue).ready(), "trimming settled entries leaves the ready ones of every level");
    }

    @Test
    void aSettlementAppliesToTheLevelItCameFromAndOnlyOnce() throws Exception {
        broker.enqueueAll(List.of(message("high", 9), message("plain", Priority.DEFAULT)));
        List<Delivery> both = fetch(2);
        assertEquals(List.of(), ack("c1", both));

        SettleReport again = broker.settle("c1", both.stream().<Settlement>map(Settlement.Ack::new).toList());
        assertEquals(2, again.notPending().size(), "an ack of an acked delivery of any level is a no-op");
        assertEquals(0, broker.stats(queue).pending());
    }

    @Test
    void aRetryKeepsItsPriority() throws Exception {
        broker.enqueue(message("retried", 9));
        Delivery d = fetch(1).getFirst();
        Instant due = Instant.now().plusMillis(100);
        assertEquals(SettleReport.ALL_APPLIED, broker.settle("c1",
                List.of(new Settlement.RetryLater(d, d.message().orElseThrow().withAttempt(2, Instant.now()), due))));
        broker.enqueue(message("plain", Priority.DEFAULT));
        Thread.sleep(300);
        assertEquals(1, scheduler.moveDue(queue, Instant.now(), 100));

        List<Delivery> got = fetch(2);

        assertEquals(List.of("retried", "plain"), got.stream().map(PriorityContractTest::payload).toList(),
                "the retry comes back at its priority, ahead of the default");
        assertEquals(9, priority(got.getFirst()));
        assertEquals(2, got.getFirst().attempt());
    }

    @Test
    void aScheduledMessageGoesToItsLevelWhenDue() throws Exception {
        scheduler.schedule(message("scheduled", 7), Instant.now().plusMillis(50));
        broker.enqueue(message("plain", Priority.DEFAULT));
        Thread.sleep(250);
        assertEquals(1, scheduler.moveDue(queue, Instant.now(), 100));

        assertEquals(List.of("scheduled", "plain"), fetch(2).stream().map(PriorityContractTest::payload).toList());
    }

    @Test
    void aPeriodicTickGoesToTheLevelOfItsMessage() throws Exception {
        broker.enqueue(message("plain", Priority.DEFAULT));
        Instant tick = Instant.now().minusSeconds(1).truncatedTo(ChronoUnit.SECONDS);

        scheduler.fireTick("prio-tick-" + queue, tick, tick.plusSeconds(60), message("tick", 7), Duration.ofMinutes(1));

        List<Delivery> got = fetch(2);
        assertEquals(List.of("tick", "plain"), got.stream().map(PriorityContractTest::payload).toList());
        assertEquals(7, priority(got.getFirst()));
    }

    @Test
    void aReplayedDeadLetterKeepsItsPriority() throws Exception {
        broker.enqueue(message("dead", 8));
        Delivery d = fetch(1).getFirst();
        broker.settle("c1", List.of(new Settlement.DeadLetter(d,
                new DeadLetter.Failure(DeadLetterReason.MAX_ATTEMPTS, "E", "boom", "", 3, Instant.now()))));
        DeadLetter letter = BrokerCapabilities.deadLetterStore(broker).readDeadLetters(queue, java.util.Optional.empty(), 10).getFirst();
        assertEquals(8, letter.message().orElseThrow().priority(), "the dead letter keeps the priority");
        broker.enqueue(message("plain", Priority.DEFAULT));

        assertEquals(1, BrokerCapabilities.deadLetterStore(broker).replayDeadLetters(queue, List.of(letter.id())));
        List<Delivery> got = fetch(2);

        assertEquals(List.of("dead", "plain"), got.stream().map(PriorityContractTest::payload).toList());
        assertEquals(8, priority(got.getFirst()));
        assertEquals(1, got.getFirst().attempt(), "a replay is a first attempt");
    }

    @Test
    void aPriorityDeliveryIsReclaimedRenewedAndFencedLikeAnyOther() throws Exception {
        broker.enqueueAll(List.of(message("kept", 9), message("abandoned", 9), message("plain", Priority.DEFAULT)));
        List<Delivery> held = fetch(3);
        assertEquals(3, held.size());
        Delivery kept = held.getFirst();
        Thread.sleep(300);
        broker.renewLeases("c1", List.of(kept));

        List<Delivery> reclaimed = broker.reclaim(queue, "c2", Duration.ofMillis(250), 10);

        assertEquals(Set.of("abandoned", "plain"), new HashSet<>(reclaimed.stream().map(PriorityContractTest::payload).toList()),
                "the renewed delivery stays; the others of both levels are taken over");
        Delivery abandoned = reclaimed.stream().filter(d -> payload(d).equals("abandoned")).findFirst().orElseThrow();
        assertEquals(9, priority(abandoned));
        assertEquals(2, abandoned.deliveryCount());
        Delivery stale = held.get(1);
        assertEquals(1, broker.settle("c1", List.of(new Settlement.Ack(stale))).reclaimed().size(), "the former owner is fenced out");
        assertEquals(List.of(), ack("c2", reclaimed));
        assertEquals(List.of(), ack("c1", List.of(kept)));
        assertEquals(0, broker.stats(queue).pending());
    }

    @Test
    void pendingOfListsTheDeliveriesOfEveryLevel() throws Exception {
        broker.enqueueAll(List.of(message("high", 9), message("plain", Priority.DEFAULT), message("low", 0)));
        List<Delivery> held = fetch(3);

        List<Delivery> pending = BrokerCapabilities.pendingDeliveries(broker).pendingOf(queue, "c1", 10);

        if (!pending.isEmpty()) { // a broker whose fetch cannot lose a reply lists nothing (the SPI default)
            assertEquals(Set.copyOf(held.stream().map(Delivery::receipt).toList()),
                    Set.copyOf(pending.stream().map(Delivery::receipt).toList()));
            assertEquals(List.of(), ack("c1", pending), "what pendingOf lists settles like the fetched deliveries");
        }
    }

    @Test
    void aTrackedJobOfAnyPriorityHasItsRecord() throws Exception {
        Message tracked = message("tracked", 9).toBuilder().trackFor(Duration.ofMinutes(1)).build();
        broker.enqueue(tracked);
        assertEquals("QUEUED", BrokerCapabilities.jobStore(broker).readJob(queue, tracked.id()).orElseThrow().get(JobRecords.STATE));
        Delivery d = fetch(1).getFirst();
        assertEquals(tracked.id(), d.message().orElseThrow().id());
        assertTrue(d.message().orElseThrow().isTracked());
        assertEquals(9, priority(d));
    }
}

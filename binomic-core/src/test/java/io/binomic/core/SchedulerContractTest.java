package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.Settlement;
import io.binomic.api.spi.TickResult;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link Scheduler} must have, on the broker it belongs with. Each
 * implementation extends this class and says how to create an unstarted broker and the scheduler
 * of a started one; every test uses fresh queue names so a shared server is fine.
 */
public abstract class SchedulerContractTest {

    /**
     * How far ahead the tests schedule what must not be due yet: longer than scheduling 1,500
     * messages ever takes on a loaded machine (500 ms was not), so "nothing is due yet" cannot fail
     * because the writes were slow.
     */
    private static final Duration SCHEDULING_MARGIN = Duration.ofSeconds(5);

    protected SchedulerContractTest() {
    }

    /** A new, not yet started broker. */
    protected abstract Broker createBroker();

    /** The scheduler of {@code started}, through its provider. */
    protected abstract Scheduler createScheduler(Broker started);

    /**
     * Whether the scheduler judges due times by the {@code now} its caller passes to
     * {@link Scheduler#moveDue} (the in-memory one) rather than by a clock of its own (Redis'
     * {@code TIME}). Then the tests move their own clock past a due time instead of sleeping.
     */
    protected abstract boolean judgesDueTimesByCallersClock();

    protected Broker broker;
    protected Scheduler scheduler;
    protected String queue;
    /** How far the tests' clock ({@link #now()}) runs ahead of the wall clock. */
    private Duration callersClockAhead = Duration.ZERO;

    @BeforeEach
    void startBroker() {
        queue = "scheduler-contract-" + UUID.randomUUID().toString().substring(0, 8);
        broker = createBroker();
        broker.start(List.of(queue));
        scheduler = createScheduler(broker);
    }

    @AfterEach
    void closeBroker() {
        scheduler.close();
        broker.close();
    }

    /** The caller's clock, as the tests pass it to {@link Scheduler#moveDue}. */
    protected Instant now() {
        return Instant.now().plus(callersClockAhead);
    }

    /** Lets the scheduler's time pass {@code due}: by moving the caller's clock when that is what it judges by, else by waiting. */
    private void passTimeUntilPast(Instant due) throws InterruptedException {
        if (!judgesDueTimesByCallersClock()) {
            sleepPast(due);
            return;
        }
        Duration gap = Duration.between(now(), due).plusMillis(5);
        if (gap.isPositive()) {
            callersClockAhead = callersClockAhead.plus(gap);
        }
    }

    /** Sleeps until the wall clock is past {@code instant}. */
    private static void sleepPast(Instant instant) throws InterruptedException {
        long millis = Duration.between(Instant.now(), instant).toMillis() + 5;
        if (millis > 0) {
            Thread.sleep(millis);
        }
    }

    private Message message(String task, String payload) {
        return Message.fromWire(UUID.randomUUID(), task, queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                payload.getBytes(StandardCharsets.UTF_8), Map.of("trace", "t-1"));
    }

    private Message trackedMessage(String task, long retentionMillis) {
        return Message.fromWire(UUID.randomUUID(), task, queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                "{}".getBytes(StandardCharsets.UTF_8), Map.of(Message.TRACK, Long.toString(retentionMillis)));
    }

    private Message tickMessage(Instant tick) {
        return Message.fromWire(UUID.randomUUID(), "report", queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                "null".getBytes(StandardCharsets.UTF_8), Map.of("tick", tick.toString()));
    }

    private List<Delivery> fetch(int max) throws InterruptedException {
        return broker.fetch(List.of(queue), "c1", max, Duration.ofMillis(200));
    }

    private void ack(String consumer, List<Delivery> deliveries) {
        broker.settle(consumer, deliveries.stream().<Settlement>map(Settlement.Ack::new).toList());
    }

    @Test
    void scheduledMessageWaitsUntilDueAndGetsAFreshEnqueueTime() throws Exception {
        Message m = message("t", "{}");
        Instant due = now().plus(SCHEDULING_MARGIN);
        scheduler.schedule(m, due);

        assertTrue(fetch(1).isEmpty());
        assertEquals(0, scheduler.moveDue(queue, now(), 10), "nothing is due before its time");
        assertEquals(Optional.of(due.truncatedTo(ChronoUnit.MILLIS)), scheduler.nextDue(queue));
        passTimeUntilPast(due);
        Instant before = now().truncatedTo(ChronoUnit.MILLIS);
        assertEquals(1, scheduler.moveDue(queue, now(), 10));
        Instant after = now();

        Message fetched = fetch(1).getFirst().message().orElseThrow();
        assertEquals(m.id(), fetched.id());
        assertFalse(fetched.enqueuedAt().isBefore(before) || fetched.enqueuedAt().isAfter(after),
                "enqueuedAt " + fetched.enqueuedAt() + " is the time of the move, between " + before + " and " + after);
        assertEquals(Optional.empty(), scheduler.nextDue(queue));
    }

    @Test
    void scheduleAllStoresEveryMessageUntilTheirCommonDueTime() throws Exception {
        List<Message> sent = new ArrayList<>();
        for (int i = 0; i < 1500; i++) {
            sent.add(message("t", "{\"i\":" + i + "}"));
        }
        Instant due = now().plus(SCHEDULING_MARGIN).truncatedTo(ChronoUnit.MILLIS);

        scheduler.scheduleAll(sent, due);

        assertEquals(1500, broker.stats(queue).delayed());
        assertEquals(0, scheduler.moveDue(queue, now(), 10_000), "nothing is due before the common due time");
        assertEquals(Optional.of(due), scheduler.nextDue(queue));
        passTimeUntilPast(due);
        assertEquals(1500, scheduler.moveDue(queue, now(), 10_000), "all are due at the common due time");
        Set<UUID> ids = new HashSet<>();
        List<Delivery> got;
        while (!(got = fetch(1000)).isEmpty()) {
            got.forEach(d -> ids.add(d.message().orElseThrow().id()));
        }
        assertEquals(sent.stream().map(Message::id).collect(java.util.stream.Collectors.toSet()), ids);
    }

    @Test
    void concurrentMoversMoveEachDueMessageOnce() throws Exception {
        int n = 200;
        Instant due = now().minusSeconds(1);
        for (int i = 0; i < n; i++) {
            scheduler.schedule(message("t", "{\"i\":" + i + "}"), due);
        }
        AtomicInteger moved = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        try (var pool = Executors.newFixedThreadPool(8)) {
            for (int t = 0; t < 8; t++) {
                pool.submit(() -> {
                    go.await();
                    int got;
                    while ((got = scheduler.moveDue(queue, now(), 7)) > 0) {
                        moved.addAndGet(got);
                    }
                    return null;
                });
            }
            go.countDown();
        }

        assertEquals(n, moved.get());
        Set<UUID> ids = new HashSet<>();
        List<Delivery> got;
        while (!(got = fetch(100)).isEmpty()) {
            got.forEach(d -> ids.add(d.message().orElseThrow().id()));
        }
        assertEquals(n, ids.size());
        assertEquals(0, broker.stats(queue).delayed());
    }

    private static final Duration CLAIM_LIFETIME = Duration.ofMinutes(1);
    /** For the ticks these tests fire late on purpose: no later tick takes their place. */
    private static final Instant NEVER_SUPERSEDED = Instant.parse("9999-01-01T00:00:00Z");

    /** The ticks of the messages on the queue, in order. */
    private List<String> enqueuedTicks() throws InterruptedException {
        List<String> ticks = new ArrayList<>();
        List<Delivery> got;
        while (!(got = broker.fetch(List.of(queue), "tick-reader", 100, Duration.ofMillis(50))).isEmpty()) {
            got.forEach(d -> ticks.add(d.message().orElseThrow().userHeaders().get("tick")));
            ack("tick-reader", got);
        }
        return ticks;
    }

    @Test
    void eachPeriodicTickIsFiredOnceAcrossConcurrentClients() throws Exception {
        Instant tick = Instant.now().minusSeconds(1).truncatedTo(ChronoUnit.SECONDS);
        Map<Integer, TickResult.Outcome> results = new ConcurrentHashMap<>();
        CountDownLatch go = new CountDownLatch(1);
        try (var pool = Executors.newFixedThreadPool(8)) {
            for (int i = 0; i < 8; i++) {
                int who = i;
                pool.submit(() -> {
                    go.await();
                    results.put(who, scheduler.fireTick("report", tick, NEVER_SUPERSEDED, tickMessage(tick), CLAIM_LIFETIME).outcome());
                    return null;
                });
            }
            go.countDown();
        }

        assertEquals(1, results.values().stream().filter(o -> o == TickResult.Outcome.FIRED).count(), results.toString());
        assertEquals(7, results.values().stream().filter(o -> o == TickResult.Outcome.ALREADY_FIRED).count(), results.toString());
        assertEquals(List.of(tick.toString()), enqueuedTicks(), "exactly one message for the tick");
        Instant older = tick.minusSeconds(60);
        assertEquals(TickResult.Outcome.ALREADY_FIRED, scheduler.fireTick("report", older, NEVER_SUPERSEDED, tickMessage(older), CLAIM_LIFETIME).outcome(),
                "an older tick is never fired again");
        Instant next = tick.plusMillis(500);
        assertEquals(TickResult.Outcome.FIRED, scheduler.fireTick("report", next, NEVER_SUPERSEDED, tickMessage(next), CLAIM_LIFETIME).outcome());
        assertEquals(TickResult.Outcome.FIRED, scheduler.fireTick("other-job", tick, NEVER_SUPERSEDED, tickMessage(tick), CLAIM_LIFETIME).outcome(),
                "jobs claim their ticks independently");
        assertEquals(List.of(next.toString(), tick.toString()), enqueuedTicks());
    }

    /**
     * Claiming and enqueuing are one step: whenever a tick counts as fired, its message is on the
     * queue, with the broker's time as enqueue time. (Two steps lost the tick when the client died
     * between them.)
     */
    @Test
    void aFiredTickAlwaysHasItsMessageOnTheQueue() throws Exception {
        Instant tick = Instant.now().minusMillis(10);
        Message m = tickMessage(tick);
        Instant before = Instant.now().truncatedTo(ChronoUnit.MILLIS);

        TickResult result = scheduler.fireTick("report", tick, NEVER_SUPERSEDED, m, CLAIM_LIFETIME);

        assertEquals(TickResult.Outcome.FIRED, result.outcome());
        List<Delivery> got = fetch(10);
        assertEquals(1, got.size(), "the claimed tick's message is on the queue");
        Message enqueued = got.getFirst().message().orElseThrow();
        assertEquals(m.id(), enqueued.id());
        assertEquals(tick.toString(), enqueued.userHeaders().get("tick"));
        assertFalse(enqueued.enqueuedAt().isBefore(before) || enqueued.enqueuedAt().isAfter(Instant.now()),
                "enqueued at the broker's time: " + enqueued.enqueuedAt());
        assertEquals(TickResult.Outcome.ALREADY_FIRED, scheduler.fireTick("report", tick, NEVER_SUPERSEDED, tickMessage(tick), CLAIM_LIFETIME).outcome());
        assertTrue(fetch(1).isEmpty(), "a refused tick enqueues nothing");
    }

    /** The schedules page shows the last tick any process fired, per job. */
    @Test
    void theLastFiredTickIsTheLatestClaimedOfItsJob() {
        Instant tick = Instant.now().minusSeconds(5).truncatedTo(ChronoUnit.MILLIS);
        assertEquals(Optional.empty(), scheduler.lastFiredTick(queue, "report"), "nothing fired yet");
        scheduler.fireTick("report", tick.minusSeconds(1), NEVER_SUPERSEDED, tickMessage(tick.minusSeconds(1)), CLAIM_LIFETIME);
        scheduler.fireTick("report", tick, NEVER_SUPERSEDED, tickMessage(tick), CLAIM_LIFETIME);
        scheduler.fireTick("report", tick.minusSeconds(2), NEVER_SUPERSEDED, tickMessage(tick.minusSeconds(2)), CLAIM_LIFETIME);

        assertEquals(Optional.of(tick), scheduler.lastFiredTick(queue, "report"), "an older tick refused changes nothing");
        assertEquals(Optional.empty(), scheduler.lastFiredTick(queue, "other-job"));
    }

    @Test
    void aTickClaimIsForgottenAfterItsLifetime() throws Exception {
        Instant tick = Instant.now().minusSeconds(1);
        Duration lifetime = Duration.ofMillis(200);
        assertEquals(TickResult.Outcome.FIRED, scheduler.fireTick("report", tick, NEVER_SUPERSEDED, tickMessage(tick), lifetime).outcome());
        assertEquals(TickResult.Outcome.ALREADY_FIRED, scheduler.fireTick("report", tick, NEVER_SUPERSEDED, tickMessage(tick), lifetime).outcome());

        Thread.sleep(lifetime.toMillis() + 100);

        assertEquals(TickResult.Outcome.FIRED, scheduler.fireTick("report", tick, NEVER_SUPERSEDED, tickMessage(tick), lifetime).outcome(),
                "the claim expired: nothing of the job is left in the broker");
    }

    /**
     * A client whose clock runs 10 minutes ahead asks for a tick 10 minutes in the future: the
     * broker refuses it, enqueues nothing and records nothing, so the correct clients' ticks
     * before it still fire.
     */
    @Test
    void aClientWhoseClockRunsAheadNeitherFiresEarlyNorBlocksTheOthers() throws Exception {
        Instant correctTick = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        Instant aheadTick = correctTick.plus(Duration.ofMinutes(10));

        TickResult early = scheduler.fireTick("report", aheadTick, NEVER_SUPERSEDED, tickMessage(aheadTick), CLAIM_LIFETIME);

        assertEquals(TickResult.Outcome.NOT_DUE, early.outcome());
        assertTrue(Duration.between(early.brokerTime(), aheadTick).compareTo(Duration.ofMinutes(9)) > 0,
                "the broker tells its own time: " + early.brokerTime());
        assertTrue(enqueuedTicks().isEmpty(), "nothing enqueued for a tick in the future");
        sleepPast(correctTick);
        assertEquals(TickResult.Outcome.FIRED, scheduler.fireTick("report", correctTick, NEVER_SUPERSEDED, tickMessage(correctTick), CLAIM_LIFETIME).outcome(),
                "the correct client's tick is not blocked");
        assertEquals(List.of(correctTick.toString()), enqueuedTicks());
    }

    /**
     * A tick that reaches the broker after its next tick is due (it waited through an outage, or its
     * process was paused) is refused and writes nothing, so that it does not fire beside the next
     * one; the broker tells its time, for the caller to fire the latest due tick instead.
     */
    @Test
    void aTickThatArrivesAfterTheNextIsDueIsRefusedAsSuperseded() throws Exception {
        Instant tick = Instant.now().minusSeconds(3).truncatedTo(ChronoUnit.SECONDS);
        Instant next = tick.plusSeconds(1);

        TickResult late = scheduler.fireTick("report", tick, next, tickMessage(tick), CLAIM_LIFETIME);

        assertEquals(TickResult.Outcome.SUPERSEDED, late.outcome());
        assertFalse(late.brokerTime().isBefore(next), "the broker tells its own time: " + late.brokerTime());
        assertEquals(Optional.empty(), scheduler.lastFiredTick(queue, "report"), "a superseded tick claims nothing");
        Instant latest = tick.plusSeconds(2);
        assertEquals(TickResult.Outcome.FIRED, scheduler.fireTick("report", latest, latest.plusSeconds(60), tickMessage(latest),
                CLAIM_LIFETIME).outcome());
        assertEquals(List.of(latest.toString()), enqueuedTicks(), "only the latest due tick is enqueued");
    }

    @Test
    void aScheduledTrackedJobIsScheduledWithItsDueTime() {
        Message m = trackedMessage("t", 60_000);
        Instant due = Instant.now().plusSeconds(60).truncatedTo(ChronoUnit.MILLIS);
        scheduler.schedule(m, due);

        Map<String, String> record = BrokerCapabilities.jobStore(broker).readJob(queue, m.id()).orElseThrow().fields();
        assertEquals("SCHEDULED", record.get(JobRecords.STATE));
        assertEquals(Long.toString(due.toEpochMilli()), record.get(JobRecords.DUE));

        Message inBulk = trackedMessage("t", 60_000);
        Message untracked = message("t", "{}");
        scheduler.scheduleAll(List.of(inBulk, untracked), due);
        assertEquals("SCHEDULED", BrokerCapabilities.jobStore(broker).readJob(queue, inBulk.id()).orElseThrow().get(JobRecords.STATE), "scheduleAll tracks too");
        assertEquals(Optional.empty(), BrokerCapabilities.jobStore(broker).readJob(queue, untracked.id()));
        assertEquals(3, broker.stats(queue).delayed());
    }
}

package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.QueueLimits;
import io.binomic.api.RateLimit;
import io.binomic.api.spi.Admission.Decision;
import io.binomic.api.spi.Admission;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.FlowLimit;
import io.binomic.api.spi.FlowLimitReadings;
import io.binomic.api.spi.FlowLimitReadings.Reading;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The flow-control behaviour ({@link FlowLimits#admit}) every broker with rate and concurrency limits
 * must have: the in-memory broker in core, the Redis broker in binomic-it. Fresh queue names per
 * test, so a shared server is fine.
 */
public abstract class LimitsContractTest {

    protected LimitsContractTest() {
    }

    /** A new, not yet started broker. */
    protected abstract Broker createBroker();

    /** The scheduler of {@code started}. */
    protected abstract Scheduler createScheduler(Broker started);

    protected Broker broker;
    protected Scheduler scheduler;
    protected String queue;

    private static final FlowLimit TWO_SLOTS = FlowLimit.concurrency("t:work", 2);
    private static final FlowLimit TEN_PER_SECOND = FlowLimit.rate("t:work", RateLimit.perSecond(10));

    @BeforeEach
    void startBroker() {
        queue = "limits-" + UUID.randomUUID().toString().substring(0, 8);
        broker = createBroker();
        broker.start(List.of(queue));
        scheduler = createScheduler(broker);
    }

    @AfterEach
    void closeBroker() {
        scheduler.close();
        broker.close();
    }

    private Message message(int i, Map<String, String> headers) {
        return Message.fromWire(UUID.randomUUID(), "work", queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8), headers);
    }

    private List<Delivery> enqueueAndFetch(int n, String consumer) throws InterruptedException {
        for (int i = 0; i < n; i++) {
            broker.enqueue(message(i, Map.of("codec", "json-jdk")));
        }
        List<Delivery> all = new ArrayList<>();
        for (int round = 0; round < 20 && all.size() < n; round++) {
            all.addAll(broker.fetch(List.of(queue), consumer, n - all.size(), Duration.ofMillis(200)));
        }
        assertEquals(n, all.size());
        return all;
    }

    private List<Admission> admit(String consumer, List<Delivery> deliveries, FlowLimit... limits) {
        return BrokerCapabilities.flowLimits(broker).admit(consumer, deliveries.stream().map(d -> new Admission.Request(d, List.of(limits))).toList());
    }

    private static List<Decision> decisions(List<Admission> admissions) {
        return admissions.stream().map(Admission::decision).toList();
    }

    private List<Delivery> fetchSoon(String consumer, int expected) throws InterruptedException {
        List<Delivery> all = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (all.size() < expected && System.nanoTime() < deadline) {
            scheduler.moveDue(queue, Instant.now(), 100);
            all.addAll(broker.fetch(List.of(queue), consumer, expected - all.size(), Duration.ofMillis(50)));
        }
        return all;
    }

    @Test
    void deliveriesOverAConcurrencyLimitWaitInTheDelayedSetWithoutUsingAnAttempt() throws Exception {
        List<Admission> a = admit("c1", enqueueAndFetch(3, "c1"), TWO_SLOTS);

        assertEquals(List.of(Decision.RUN, Decision.RUN, Decision.WAIT_SLOT), decisions(a));
        assertEquals(2, BrokerCapabilities.flowLimits(broker).slotsHeld(queue, "t:work"));
        assertEquals(2, broker.stats(queue).pending(), "the waiting one was acked");
        assertEquals(1, broker.stats(queue).delayed(), "the waiting one is in the delayed set");
        assertTrue(a.get(2).dueAt().orElseThrow().isAfter(Instant.now().plusSeconds(5)),
                "it waits for a release, not for a short poll: " + a.get(2).dueAt());
    }

    @Test
    void readingsCountTheSlotsHeldAndTheMessagesWaitingForOne() throws Exception {
        List<Delivery> ds = enqueueAndFetch(4, "c1");
        admit("c1", ds, TWO_SLOTS);
        FlowLimitReadings readings = BrokerCapabilities.flowLimitReadings(broker);

        assertEquals(Map.of("t:work", new Reading(2, 2, 0), "t:other", Reading.IDLE), readings.read(queue, List.of("t:work", "t:other")));
        assertEquals(Map.of("t:work", Reading.IDLE), readings.read("limits-never-used", List.of("t:work")));

        assertTrue(broker.settle("c1", List.of(new Settlement.Ack(ds.get(0)))).notApplied().isEmpty());
        assertEquals(new Reading(1, 1, 0), readings.read(queue, List.of("t:work")).get("t:work"), "the release moved the head of the line back");
    }

    @Test
    void readingsCountTheTurnsARateLimitHandedOut() throws Exception {
        FlowLimit onePerTenSeconds = FlowLimit.rate("t:work", RateLimit.of(1, Duration.ofSeconds(10)));
        assertEquals(List.of(Decision.RUN, Decision.RUN, Decision.WAIT_RATE, Decision.WAIT_RATE),
                decisions(admit("c1", enqueueAndFetch(4, "c1"), onePerTenSeconds)));

        assertEquals(new Reading(0, 0, 2), BrokerCapabilities.flowLimitReadings(broker).read(queue, List.of("t:work")).get("t:work"),
                "two turns handed out, 10 and 20 s ahead");
    }

    @Test
    void aWaiterALimitsWorthFurtherBackInTheLineFallsBackLater() throws Exception {
        List<Admission> a = admit("c1", enqueueAndFetch(5, "c1"), TWO_SLOTS);

        assertEquals(List.of(Decision.RUN, Decision.RUN, Decision.WAIT_SLOT, Decision.WAIT_SLOT, Decision.WAIT_SLOT), decisions(a));
        Instant head = a.get(2).dueAt().orElseThrow();
        assertTrue(Duration.between(head, a.get(3).dueAt().orElseThrow()).abs().toMillis() < 1_000,
                "the first two waiters are served by the same round of releases: " + head + ", " + a.get(3).dueAt());
        Duration later = Duration.between(head, a.get(4).dueAt().orElseThrow());
        assertTrue(later.compareTo(Duration.ofSeconds(9)) > 0,
                "the fifth, two slots further back, falls back a fallback later, not with the head: " + later);
    }

    @Test
    void noWaiterFallsBackLaterThanAMinuteHoweverFarBackInTheLine() throws Exception {
        // the fallback is what brings back the jobs of a limit a new release of the code no longer declares
        Instant asked = Instant.now();
        List<Admission> a = admit("c1", enqueueAndFetch(12, "c1"), FlowLimit.concurrency("t:work", 1));

        assertEquals(11, decisions(a).stream().filter(d -> d == Decision.WAIT_SLOT).count());
        Instant last = a.get(11).dueAt().orElseThrow();
        assertTrue(last.isBefore(asked.plusSeconds(62)), "the last of 11 waiters is looked at again within a minute: "
                + Duration.between(asked, last));
        assertTrue(last.isAfter(asked.plusSeconds(50)), "and not with the head: " + Duration.between(asked, last));
    }

    @Test
    void settlingAHolderReleasesItsSlotAndGivesTheOldestWaiterItsTurn() throws Exception {
        List<Delivery> ds = enqueueAndFetch(3, "c1");
        admit("c1", ds, TWO_SLOTS);

        assertTrue(broker.settle("c1", List.of(new Settlement.Ack(ds.get(0)))).notApplied().isEmpty());

        assertEquals(1, BrokerCapabilities.flowLimits(broker).slotsHeld(queue, "t:work"), "the settled delivery's slot is free");
        assertEquals(0, broker.stats(queue).delayed(), "the waiter left the delayed set at once, not at its fallback time");
        Delivery back = broker.fetch(List.of(queue), "c2", 10, Duration.ofMillis(500)).getFirst();
        assertEquals(ds.get(2).message().orElseThrow().id(), back.message().orElseThrow().id());
        assertEquals(1, back.attempt(), "waiting used no attempt");
        assertEquals(List.of(Decision.RUN), decisions(admit("c2", List.of(back), TWO_SLOTS)));
        assertEquals(2, BrokerCapabilities.flowLimits(broker).slotsHeld(queue, "t:work"));
    }

    @Test
    void aFreeSlotGoesToTheBacklogAheadOfTheWaiterMovedBehindItAndThatWaiterKeepsItsPlace() throws Exception {
        FlowLimit oneSlot = FlowLimit.concurrency("t:work", 1);
        List<Delivery> first = enqueueAndFetch(3, "c1");
        assertEquals(List.of(Decision.RUN, Decision.WAIT_SLOT, Decision.WAIT_SLOT), decisions(admit("c1", first, oneSlot)));
        broker.enqueue(message(3, Map.of("codec", "json-jdk")));
        // the holder ends: the oldest waiter is moved back, to the end of the queue, behind the one just enqueued
        broker.settle("c1", List.of(new Settlement.Ack(first.get(0))));

        List<Delivery> backlogHead = fetchSoon("c2", 1);
        assertEquals(List.of(Decision.RUN), decisions(admit("c2", backlogHead, oneSlot)),
                "the free slot is taken by the delivery that finds it, not kept idle for the waiter behind it");
        Delivery turnCame = fetchSoon("c2", 1).getFirst();
        assertEquals(first.get(1).message().orElseThrow().id(), turnCame.message().orElseThrow().id(), "the oldest waiter came back");
        assertEquals(List.of(Decision.WAIT_SLOT), decisions(admit("c2", List.of(turnCame), oneSlot)), "the slot is taken");

        broker.settle("c2", List.of(new Settlement.Ack(backlogHead.getFirst())));
        Delivery next = fetchSoon("c1", 1).getFirst();
        assertEquals(first.get(1).message().orElseThrow().id(), next.message().orElseThrow().id(),
                "the waiter that found its slot taken kept its place ahead of the one behind it in the line");
        assertEquals(List.of(Decision.RUN), decisions(admit("c1", List.of(next), oneSlot)));
    }

    @Test
    void aLimitRaisedWhileJobsWaitFillsItsNewSlotsFromTheLineAtOnce() throws Exception {
        List<Delivery> first = enqueueAndFetch(3, "c1");
        assertEquals(List.of(Decision.RUN, Decision.WAIT_SLOT, Decision.WAIT_SLOT),
                decisions(admit("c1", first, FlowLimit.concurrency("t:work", 1))));

        // the task's limit raised in code: the next admission, with room to spare, brings the line back
        List<Delivery> newcomer = enqueueAndFetch(1, "c2");
        assertEquals(List.of(Decision.RUN), decisions(admit("c2", newcomer, FlowLimit.concurrency("t:work", 5))));
        assertEquals(0, broker.stats(queue).delayed(), "both waiters were moved back, not left to their fallback");
        List<Delivery> back = fetchSoon("c1", 2);
        assertEquals(Set.of(first.get(1).message().orElseThrow().id(), first.get(2).message().orElseThrow().id()),
                Set.of(back.get(0).message().orElseThrow().id(), back.get(1).message().orElseThrow().id()));
        assertEquals(List.of(Decision.RUN, Decision.RUN), decisions(admit("c1", back, FlowLimit.concurrency("t:work", 5))));
        assertEquals(4, BrokerCapabilities.flowLimits(broker).slotsHeld(queue, "t:work"));
    }

    @Test
    void aReclaimedDeliveryKeepsItsSlotAndIsNotCountedTwice() throws Exception {
        List<Delivery> ds = enqueueAndFetch(1, "c1");
        admit("c1", ds, TWO_SLOTS);
        Thread.sleep(150);
        Delivery reclaimed = broker.reclaim(queue, "c2", Duration.ofMillis(100), 10).getFirst();

        assertEquals(List.of(Decision.NOT_PENDING), decisions(admit("c1", ds, TWO_SLOTS)), "c1 no longer holds it");
        assertEquals(List.of(Decision.RUN), decisions(admit("c2", List.of(reclaimed), TWO_SLOTS)));
        assertEquals(1, BrokerCapabilities.flowLimits(broker).slotsHeld(queue, "t:work"), "the slot followed the delivery");
        broker.settle("c1", List.of(new Settlement.Ack(ds.getFirst())));
        assertEquals(1, BrokerCapabilities.flowLimits(broker).slotsHeld(queue, "t:work"), "a stale settlement releases nothing");
        broker.settle("c2", List.of(new Settlement.Ack(reclaimed)));
        assertEquals(0, BrokerCapabilities.flowLimits(broker).slotsHeld(queue, "t:work"), "released by the owner's settlement");
    }

    @Test
    void aConcurrencyLimitHoldsAcrossPriorityLevelsAndAWaiterReturnsToItsOwnLevel() throws Exception {
        // one message on each of three levels; entry ids may repeat across a queue's level streams,
        // so each holder must count once and be released by its own settlement only
        for (int priority : new int[] {9, 5, 2}) {
            broker.enqueue(message(priority, Map.of("codec", "json-jdk", Message.PRIORITY, Integer.toString(priority))));
        }
        List<Delivery> ds = fetchSoon("c1", 3);
        assertEquals(3, ds.size());
        List<Admission> a = admit("c1", ds, TWO_SLOTS);
        assertEquals(List.of(Decision.RUN, Decision.RUN, Decision.WAIT_SLOT), decisions(a));
        assertEquals(2, BrokerCapabilities.flowLimits(broker).slotsHeld(queue, "t:work"));
        int waitingPriority = ds.get(2).message().orElseThrow().priority();

        assertTrue(broker.settle("c1", List.of(new Settlement.Ack(ds.get(0)))).notApplied().isEmpty());
        assertEquals(1, BrokerCapabilities.flowLimits(broker).slotsHeld(queue, "t:work"), "the settled delivery released exactly its own slot");
        Delivery back = fetchSoon("c2", 1).getFirst();
        assertEquals(ds.get(2).message().orElseThrow().id(), back.message().orElseThrow().id());
        assertEquals(waitingPriority, back.message().orElseThrow().priority(), "the waiter kept its priority");
        assertEquals(List.of(Decision.RUN), decisions(admit("c2", List.of(back), TWO_SLOTS)));
        assertEquals(2, BrokerCapabilities.flowLimits(broker).slotsHeld(queue, "t:work"));

        broker.settle("c1", List.of(new Settlement.Ack(ds.get(1))));
        broker.settle("c2", List.of(new Settlement.Ack(back)));
        assertEquals(0, BrokerCapabilities.flowLimits(broker).slotsHeld(queue, "t:work"), "no slot left held on any level");
        assertEquals(0, broker.stats(queue).pending());
    }

    @Test
    void aQueuesLimitsAreStoredReplacedAndRemovedAndOtherQueuesHaveNone() {
        assertEquals(Map.of(), BrokerCapabilities.flowLimits(broker).queueLimits(List.of(queue)), "none set yet");
        io.binomic.api.QueueLimits both = io.binomic.api.QueueLimits.builder()
                .rateLimit(RateLimit.of(120, Duration.ofMinutes(1)).withBurst(5)).concurrencyLimit(3).build();
        BrokerCapabilities.flowLimits(broker).setQueueLimits(queue, both);
        assertEquals(Map.of(queue, both), BrokerCapabilities.flowLimits(broker).queueLimits(List.of(queue, queue + "-other")));

        io.binomic.api.QueueLimits slotsOnly = io.binomic.api.QueueLimits.builder().concurrencyLimit(7).build();
        BrokerCapabilities.flowLimits(broker).setQueueLimits(queue, slotsOnly);
        assertEquals(slotsOnly, BrokerCapabilities.flowLimits(broker).queueLimits(List.of(queue)).get(queue), "replaced, not merged: the rate limit is gone");

        BrokerCapabilities.flowLimits(broker).setQueueLimits(queue, io.binomic.api.QueueLimits.NONE);
        assertEquals(Map.of(), BrokerCapabilities.flowLimits(broker).queueLimits(List.of(queue)));
    }

    /** Whether {@link Broker#settle(String, List, Map)} of this broker hands out deliveries onto the slots it frees. */
    protected boolean handsOffFreedSlots() {
        return false;
    }

    @Test
    void aSettleHandsOutNoMoreThanTheQueueLimitSlotsItFreedAndTheLimitHolds() throws Exception {
        FlowLimit twoSlots = FlowLimit.concurrency(FlowLimit.QUEUE_LIMIT_ID, 2);
        BrokerCapabilities.flowLimits(broker).setQueueLimits(queue, io.binomic.api.QueueLimits.builder().concurrencyLimit(2).build());
        List<Delivery> ds = enqueueAndFetch(3, "c1");
        assertEquals(List.of(Decision.RUN, Decision.RUN, Decision.WAIT_SLOT), decisions(admit("c1", ds, twoSlots)));
        for (int i = 0; i < 3; i++) {
            broker.enqueue(message(10 + i, Map.of("codec", "json-jdk")));
        }

        // a consumer that does not own the delivery settles nothing, and is handed nothing
        var stale = broker.settle("c2", List.of(new Settlement.Ack(ds.get(0))), Map.of(queue, 5));
        assertEquals(1, stale.notApplied().size());
        assertEquals(List.of(), stale.handed());

        var report = broker.settle("c1", List.of(new Settlement.Ack(ds.get(0))), Map.of(queue, 5));
        assertTrue(report.allApplied());
        assertTrue(report.handed().size() <= 1, "no more than the one slot it freed: " + report.handed());
        assertEquals(handsOffFreedSlots() ? 1 : 0, report.handed().size());
        if (report.handed().isEmpty()) {
            return;
        }
        Delivery handed = report.handed().getFirst();
        assertEquals(queue, handed.queue());
        assertEquals(2, BrokerCapabilities.flowLimits(broker).slotsHeld(queue, FlowLimit.QUEUE_LIMIT_ID), "it holds the slot freed");
        // the limit is full: the next job another consumer fetches waits
        List<Delivery> next = fetchSoon("c3", 1);
        assertEquals(List.of(Decision.WAIT_SLOT), decisions(admit("c3", next, twoSlots)));
        // pending under c1 like a fetched one: its settle applies, and frees its slot
        assertTrue(broker.settle("c1", List.of(new Settlement.Ack(handed))).allApplied());
        assertEquals(1, BrokerCapabilities.flowLimits(broker).slotsHeld(queue, FlowLimit.QUEUE_LIMIT_ID));
    }

    @Test
    void changingAQueuesLimitsReleasesWhatTheOldOnesHeldBack() throws Exception {
        FlowLimit oneSlot = FlowLimit.concurrency(FlowLimit.QUEUE_LIMIT_ID, 1);
        BrokerCapabilities.flowLimits(broker).setQueueLimits(queue, io.binomic.api.QueueLimits.builder().concurrencyLimit(1).build());
        List<Delivery> ds = enqueueAndFetch(3, "c1");
        assertEquals(List.of(Decision.RUN, Decision.WAIT_SLOT, Decision.WAIT_SLOT), decisions(admit("c1", ds, oneSlot)));

        BrokerCapabilities.flowLimits(broker).setQueueLimits(queue, io.binomic.api.QueueLimits.NONE);
        assertEquals(0, broker.stats(queue).delayed(), "the waiters left the delayed set at once, not at their 10 s fallback");
        assertEquals(2, broker.fetch(List.of(queue), "c2", 10, Duration.ofMillis(500)).size(), "and are back on the queue");

        FlowLimit onePerMinute = FlowLimit.rate(FlowLimit.QUEUE_LIMIT_ID, RateLimit.of(1, Duration.ofMinutes(1)));
        BrokerCapabilities.flowLimits(broker).setQueueLimits(queue, io.binomic.api.QueueLimits.builder().rateLimit(RateLimit.of(1, Duration.ofMinutes(1))).build());
        List<Delivery> more = enqueueAndFetch(3, "c1");
        assertEquals(List.of(Decision.RUN, Decision.RUN, Decision.WAIT_RATE), decisions(admit("c1", more, onePerMinute)));
        assertEquals(1, broker.stats(queue).delayed(), "pushed back about a minute");

        BrokerCapabilities.flowLimits(broker).setQueueLimits(queue, io.binomic.api.QueueLimits.builder().rateLimit(RateLimit.perSecond(100)).build());
        Delivery back = fetchSoon("c3", 1).getFirst();
        assertEquals(more.get(2).message().orElseThrow().id(), back.message().orElseThrow().id(), "due at once under the new limit");
        assertEquals(List.of(Decision.RUN), decisions(admit("c3", List.of(back), FlowLimit.rate(FlowLimit.QUEUE_LIMIT_ID, RateLimit.perSecond(100)))));
    }

    @Test
    void aRaisedQueueRateLimitMakesDueEveryJobItPushedBackHoweverMany() throws Exception {
        int jobs = 10_500; // over the 10,000 a change of limits once released
        FlowLimit hourly = FlowLimit.rate(FlowLimit.QUEUE_LIMIT_ID, RateLimit.of(1, Duration.ofHours(1)));
        BrokerCapabilities.flowLimits(broker).setQueueLimits(queue, QueueLimits.builder().rateLimit(RateLimit.of(1, Duration.ofHours(1))).build());
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            messages.add(message(i, Map.of("codec", "json-jdk")));
        }
        broker.enqueueAll(messages);
        int seen = 0;
        for (int round = 0; round < 100 && seen < jobs; round++) {
            List<Delivery> ds = broker.fetch(List.of(queue), "c1", 999, Duration.ofMillis(200));
            admit("c1", ds, hourly);
            seen += ds.size();
        }
        assertEquals(jobs, seen);
        assertTrue(broker.stats(queue).delayed() >= jobs - 2, "pushed back an hour apart each");

        BrokerCapabilities.flowLimits(broker).setQueueLimits(queue, QueueLimits.builder().rateLimit(RateLimit.perSecond(1000)).build());
        int moved;
        do {
            moved = scheduler.moveDue(queue, Instant.now(), 1000);
        } while (moved > 0);
        assertEquals(0, broker.stats(queue).delayed(), "every job the hourly limit pushed back was due at once");
    }

    @Test
    void aRaisedQueueRateLimitDecidesTheNextAdmissionsWhateverLimitTheCallerStillPasses() throws Exception {
        // a worker reads its queues' limits once a second: until then it passes the old ones
        FlowLimit stale = FlowLimit.rate(FlowLimit.QUEUE_LIMIT_ID, RateLimit.of(1, Duration.ofMinutes(1)));
        BrokerCapabilities.flowLimits(broker).setQueueLimits(queue, QueueLimits.builder().rateLimit(RateLimit.of(1, Duration.ofMinutes(1))).build());
        assertEquals(List.of(Decision.RUN, Decision.RUN, Decision.WAIT_RATE), decisions(admit("c1", enqueueAndFetch(3, "c1"), stale)));

        BrokerCapabilities.flowLimits(broker).setQueueLimits(queue, QueueLimits.builder().rateLimit(RateLimit.perSecond(100).withBurst(10)).build());
        List<Decision> raised = decisions(admit("c1", enqueueAndFetch(6, "c1"), stale));
        assertEquals(List.of(Decision.RUN, Decision.RUN, Decision.RUN, Decision.RUN, Decision.RUN, Decision.RUN), raised,
                "the queue's limit as set now (100/s, a burst of 10), not the caller's minute-old view of it (1/min)");

        BrokerCapabilities.flowLimits(broker).setQueueLimits(queue, QueueLimits.NONE);
        assertEquals(List.of(Decision.RUN, Decision.RUN, Decision.RUN), decisions(admit("c1", enqueueAndFetch(3, "c1"), stale)),
                "a queue whose limits were removed has none, whatever the caller passes");
    }

    @Test
    void aQueuesLimitsApplyToEveryAdmissionEvenWhenTheCallerPassesOnlyItsTasks() throws Exception {
        BrokerCapabilities.flowLimits(broker).setQueueLimits(queue, QueueLimits.builder().concurrencyLimit(1).build());
        assertEquals(List.of(Decision.RUN, Decision.WAIT_SLOT), decisions(admit("c1", enqueueAndFetch(2, "c1"), TWO_SLOTS)),
                "the task allows two at once, its queue one");
        assertEquals(1, BrokerCapabilities.flowLimits(broker).slotsHeld(queue, FlowLimit.QUEUE_LIMIT_ID));
    }

    @Test
    void aChangedRateLimitRespacesTheStartsAndTurnsItHandedOutAtTheNewInterval() throws Exception {
        // a task's limit changed in code: workers of the new version pass the new one under the same id
        FlowLimit oneEveryTenSeconds = FlowLimit.rate("t:work", RateLimit.of(1, Duration.ofSeconds(10)));
        List<Admission> before = admit("c1", enqueueAndFetch(4, "c1"), oneEveryTenSeconds);
        assertEquals(List.of(Decision.RUN, Decision.RUN, Decision.WAIT_RATE, Decision.WAIT_RATE), decisions(before));

        FlowLimit hundredPerSecond = FlowLimit.rate("t:work", RateLimit.perSecond(100));
        Instant asked = Instant.now();
        Admission next = admit("c1", enqueueAndFetch(1, "c1"), hundredPerSecond).getFirst();
        // the old schedule ran 30 s ahead (two starts and two turns, 10 s apart); at 10 ms apart it is 40 ms
        Instant due = next.dueAt().orElse(asked);
        assertTrue(due.isBefore(asked.plusSeconds(5)), "the next start at the new spacing, not after the old schedule: due "
                + Duration.between(asked, due) + " after the admission (" + next.decision() + ")");
    }

    @Test
    void aHigherPriorityJobWaitingForASlotGetsItBeforeOlderLowerOnes() throws Exception {
        FlowLimit oneSlot = FlowLimit.concurrency("t:work", 1);
        broker.enqueue(message(0, Map.of("codec", "json-jdk", Message.PRIORITY, "1")));
        broker.enqueue(message(1, Map.of("codec", "json-jdk", Message.PRIORITY, "1")));
        List<Delivery> low = fetchSoon("c1", 2);
        assertEquals(List.of(Decision.RUN, Decision.WAIT_SLOT), decisions(admit("c1", low, oneSlot)));
        broker.enqueue(message(2, Map.of("codec", "json-jdk", Message.PRIORITY, "9")));
        List<Delivery> urgent = fetchSoon("c1", 1);
        assertEquals(List.of(Decision.WAIT_SLOT), decisions(admit("c1", urgent, oneSlot)), "the slot is taken");

        broker.settle("c1", List.of(new Settlement.Ack(low.get(0))));
        Delivery next = fetchSoon("c2", 1).getFirst();
        assertEquals(urgent.getFirst().message().orElseThrow().id(), next.message().orElseThrow().id(),
                "the priority-9 job took the freed slot ahead of the older priority-1 one");
    }

    @Test
    void aRetryOrDeadLetterReleasesTheSlotToo() throws Exception {
        List<Delivery> ds = enqueueAndFetch(2, "c1");
        admit("c1", ds, TWO_SLOTS);
        Message m = ds.get(0).message().orElseThrow();
        broker.settle("c1", List.of(new Settlement.RetryLater(ds.get(0), m.withAttempt(2, Instant.now()), Instant.now().plusSeconds(60)),
                new Settlement.DeadLetter(ds.get(1), new io.binomic.api.DeadLetter.Failure(io.binomic.api.DeadLetterReason.NON_RETRYABLE,
                        "E", "boom", "", 1, Instant.now()))));
        assertEquals(0, BrokerCapabilities.flowLimits(broker).slotsHeld(queue, "t:work"));
    }

    @Test
    void aRateLimitRunsWhatItAllowsAndSchedulesTheRestEvenlySpaced() throws Exception {
        List<Admission> a = admit("c1", enqueueAndFetch(5, "c1"), TEN_PER_SECOND);

        // one start now, and one interval of jitter tolerance: two at once, then one every 100 ms
        assertEquals(List.of(Decision.RUN, Decision.RUN, Decision.WAIT_RATE, Decision.WAIT_RATE, Decision.WAIT_RATE), decisions(a));
        for (int i = 3; i < 5; i++) {
            long gap = a.get(i).dueAt().orElseThrow().toEpochMilli() - a.get(i - 1).dueAt().orElseThrow().toEpochMilli();
            assertEquals(100, gap, "one start every 100 ms");
        }
        assertEquals(2, broker.stats(queue).pending());
        assertEquals(3, broker.stats(queue).delayed());

        int ran = 0;
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (ran < 3 && System.nanoTime() < deadline) {
            for (Delivery d : fetchSoon("c1", 1)) {
                assertEquals(1, d.attempt(), "waiting used no attempt");
                if (admit("c1", List.of(d), TEN_PER_SECOND).getFirst().decision() == Decision.RUN) {
                    ran++;
                }
            }
        }
        assertEquals(3, ran, "each came back when its turn was due, and ran");
    }

    @Test
    void aRateLimitWithABurstRunsThatManyAtOnce() throws Exception {
        FlowLimit burst = FlowLimit.rate("t:work", RateLimit.perSecond(10).withBurst(3));
        // the burst, plus one start of jitter tolerance
        assertEquals(List.of(Decision.RUN, Decision.RUN, Decision.RUN, Decision.RUN, Decision.WAIT_RATE),
                decisions(admit("c1", enqueueAndFetch(5, "c1"), burst)));
    }

    @Test
    void limitsOfDifferentKeysAreIndependent() throws Exception {
        List<Delivery> ds = enqueueAndFetch(2, "c1");
        List<Admission> a = BrokerCapabilities.flowLimits(broker).admit("c1", List.of(
                new Admission.Request(ds.get(0), List.of(FlowLimit.concurrency("k:work:acme", 1))),
                new Admission.Request(ds.get(1), List.of(FlowLimit.concurrency("k:work:globex", 1)))));
        assertEquals(List.of(Decision.RUN, Decision.RUN), decisions(a));
    }

    @Test
    void aTrackedJobThatWaitsShowsScheduledWithItsDueTime() throws Exception {
        try {
            BrokerCapabilities.jobStore(broker).readJob(queue, UUID.randomUUID());
        } catch (UnsupportedOperationException e) {
            return; // keeps no job records
        }
        broker.enqueue(message(0, Map.of("codec", "json-jdk", Message.TRACK, "60000")));
        broker.enqueue(message(1, Map.of("codec", "json-jdk", Message.TRACK, "60000")));
        broker.enqueue(message(2, Map.of("codec", "json-jdk", Message.TRACK, "60000")));
        List<Delivery> ds = new ArrayList<>();
        for (int round = 0; round < 10 && ds.size() < 3; round++) {
            ds.addAll(broker.fetch(List.of(queue), "c1", 3 - ds.size(), Duration.ofMillis(500)));
        }
        assertEquals(3, ds.size());
        List<Admission> a = admit("c1", ds, TEN_PER_SECOND);

        assertEquals(Decision.WAIT_RATE, a.get(2).decision());
        Map<String, String> record = BrokerCapabilities.jobStore(broker).readJob(queue, ds.get(2).message().orElseThrow().id()).orElseThrow().fields();
        assertEquals("SCHEDULED", record.get(JobRecords.STATE));
        assertEquals(Long.toString(a.get(2).dueAt().orElseThrow().toEpochMilli()), record.get(JobRecords.DUE));
        assertEquals("rate limit", record.get("waiting"));
    }

    private List<Admission> admitHolding(String consumer, List<Delivery> deliveries, Duration maxHold, FlowLimit... limits) {
        return BrokerCapabilities.flowLimits(broker).admit(consumer,
                deliveries.stream().map(d -> new Admission.Request(d, List.of(limits))).toList(), maxHold);
    }

    @Test
    void aCallerThatHoldsGetsTheStartsWithinItsHoldReservedAndTheRestWaitInTheDelayedSet() throws Exception {
        List<Admission> a = admitHolding("c1", enqueueAndFetch(5, "c1"), Duration.ofMillis(250), TEN_PER_SECOND);

        // two at once (the burst and the jitter allowance), then one start every 100 ms: those within 250 ms are reserved
        assertEquals(List.of(Decision.RUN, Decision.RUN, Decision.HOLD, Decision.HOLD, Decision.WAIT_RATE), decisions(a));
        assertEquals(Duration.ofMillis(100), a.get(2).hold());
        assertEquals(Duration.ofMillis(200), a.get(3).hold());
        assertEquals(100, a.get(3).dueAt().orElseThrow().toEpochMilli() - a.get(2).dueAt().orElseThrow().toEpochMilli());
        assertEquals(Duration.ZERO, a.get(0).hold());
        assertEquals(4, broker.stats(queue).pending(), "a held delivery stays pending under its consumer");
        assertEquals(1, broker.stats(queue).delayed());
        assertTrue(a.get(4).dueAt().orElseThrow().toEpochMilli() - a.get(3).dueAt().orElseThrow().toEpochMilli() >= 100,
                "the one that waits comes after the reserved starts");
    }

    private static long micros(Admission a) {
        Instant t = a.dueAt().orElseThrow();
        return t.getEpochSecond() * 1_000_000 + t.getNano() / 1000;
    }

    @Test
    void reservedStartsOfSeveralConsumersTogetherKeepTheLimit() throws Exception {
        List<Delivery> first = enqueueAndFetch(6, "c1");
        List<Delivery> second = enqueueAndFetch(6, "c2");
        // slow enough that a loaded machine's pauses between the calls do not let the reserved starts fall behind
        FlowLimit everyFiveSeconds = FlowLimit.rate("t:work", RateLimit.of(1, Duration.ofSeconds(5)));
        List<Admission> all = new ArrayList<>();
        for (int round = 0; round < 3; round++) {
            all.addAll(admitHolding("c1", first.subList(2 * round, 2 * round + 2), Duration.ofMinutes(2), everyFiveSeconds));
            all.addAll(admitHolding("c2", second.subList(2 * round, 2 * round + 2), Duration.ofMinutes(2), everyFiveSeconds));
        }
        // two at once, then ten reserved starts exactly one interval apart, whichever consumer asked
        assertEquals(List.of(Decision.RUN, Decision.RUN), decisions(all.subList(0, 2)));
        List<Admission> held = all.subList(2, all.size());
        assertTrue(held.stream().allMatch(a -> a.decision() == Decision.HOLD), "within the hold: " + decisions(held));
        for (int i = 1; i < held.size(); i++) {
            assertEquals(5_000_000, micros(held.get(i)) - micros(held.get(i - 1)), "one start every 5 s");
        }
    }

    @Test
    void aHeldDeliveryHoldsItsSlotAndIsNotCountedTwiceWhenAdmittedAgain() throws Exception {
        FlowLimit slots = FlowLimit.concurrency("t:slots", 3);
        FlowLimit everyFiveSeconds = FlowLimit.rate("t:work", RateLimit.of(1, Duration.ofSeconds(5)));
        List<Delivery> ds = enqueueAndFetch(3, "c1");
        List<Admission> a = admitHolding("c1", ds, Duration.ofMinutes(1), slots, everyFiveSeconds);
        assertEquals(List.of(Decision.RUN, Decision.RUN, Decision.HOLD), decisions(a));
        assertEquals(3, BrokerCapabilities.flowLimits(broker).slotsHeld(queue, "t:slots"), "the held one holds its slot");

        // admitted again (reclaimed): it keeps its admission, and the limit does not count it again
        assertEquals(List.of(Decision.RUN), decisions(admitHolding("c1", List.of(ds.get(2)), Duration.ofMinutes(1), slots, everyFiveSeconds)));
        Admission next = admitHolding("c1", enqueueAndFetch(1, "c1"), Duration.ofMinutes(1), everyFiveSeconds).getFirst();
        assertEquals(Decision.HOLD, next.decision());
        assertEquals(5_000_000, micros(next) - micros(a.get(2)), "the next start is one interval after the held one");

        // a held delivery given back (due again now) releases its slot
        assertTrue(broker.settle("c1", List.of(new Settlement.RetryLater(ds.get(2), ds.get(2).message().orElseThrow(), Instant.now())))
                .notApplied().isEmpty());
        assertEquals(2, BrokerCapabilities.flowLimits(broker).slotsHeld(queue, "t:slots"));
    }
}

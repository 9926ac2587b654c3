package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.QueueLimits;
import io.binomic.api.RateLimit;
import io.binomic.api.spi.Admission;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.FlowLimit;
import io.binomic.api.spi.FlowLimits;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.Settlement;
import io.binomic.core.LimitsContractTest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The flow-limit contract, run against a real Redis. */
class RedisLimitsContractTest extends LimitsContractTest {

    @Override
    protected Broker createBroker() {
        return Brokers.redis(RedisServer.shared());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }

    private int rateKeys() {
        return ((List<?>) RedisServer.shared().call("KEYS", "binomic:{" + queue + "}:rate:*")).size();
    }

    @Test
    void perKeyRateLimitsOfTenThousandKeysEachHoldAndTheirStateExpires() throws Exception {
        int keys = 10_000;
        RateLimit twoPerSecond = RateLimit.of(1, Duration.ofMillis(500));
        List<Message> messages = new ArrayList<>();
        for (int k = 0; k < keys; k++) {
            for (int each = 0; each < 3; each++) { // a key's three together, decided in one script (fetches of 999)
                messages.add(Message.fromWire(UUID.randomUUID(), "work", queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                        ("{\"k\":" + k + "}").getBytes(StandardCharsets.UTF_8), Map.of("codec", "json-jdk")));
            }
        }
        broker.enqueueAll(messages);
        FlowLimits limits = broker.capability(FlowLimits.class).orElseThrow();
        Map<Integer, List<Admission.Decision>> byKey = new HashMap<>();
        int seen = 0;
        for (int round = 0; round < 200 && seen < messages.size(); round++) {
            List<Delivery> ds = broker.fetch(List.of(queue), "c1", 999, Duration.ofMillis(200));
            List<Admission.Request> requests = new ArrayList<>();
            for (Delivery d : ds) {
                int k = keyOf(d);
                requests.add(new Admission.Request(d, List.of(FlowLimit.rate("k:work:" + k, twoPerSecond))));
            }
            for (Admission a : limits.admit("c1", requests, Duration.ofSeconds(1))) {
                byKey.computeIfAbsent(keyOf(a.delivery()), k -> new ArrayList<>()).add(a.decision());
                if (a.decision() == Admission.Decision.HOLD) {
                    assertTrue(a.hold().compareTo(Duration.ofMillis(500)) <= 0, "the third start of a key is one interval later: " + a.hold());
                }
            }
            seen += ds.size();
        }
        assertEquals(messages.size(), seen);
        assertEquals(keys, byKey.size());
        // each key alone: two at once (one start and the jitter allowance), the third reserved an interval later (or run,
        // when a fetch split the key's three and half a second passed between them on a loaded machine)
        int held = 0;
        for (var e : byKey.entrySet()) {
            List<Admission.Decision> d = e.getValue();
            assertEquals(List.of(Admission.Decision.RUN, Admission.Decision.RUN), d.subList(0, 2), "key " + e.getKey());
            assertTrue(d.size() == 3 && (d.get(2) == Admission.Decision.HOLD || d.get(2) == Admission.Decision.RUN), "key " + e.getKey() + ": " + d);
            held += d.get(2) == Admission.Decision.HOLD ? 1 : 0;
        }
        assertTrue(held > keys / 2, "the third of most keys was held, not run at once: " + held);
        int states = rateKeys(); // the first keys' may be gone already on a slow machine: each expires once idle
        assertTrue(states > 0 && states <= keys, "one state per key, while it is in use: " + states);
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (rateKeys() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
        assertEquals(0, rateKeys(), "an idle key's rate state expires");
    }

    @Test
    void aRaisedQueueRateLimitMakesDueEveryJobItPushedBackNotOnlyTheFirstTenThousand() throws Exception {
        int jobs = 12_500; // more than one script's step, and than the 10,000 a change of limits once released
        FlowLimits limits = broker.capability(FlowLimits.class).orElseThrow();
        limits.setQueueLimits(queue, QueueLimits.builder().rateLimit(RateLimit.of(1, Duration.ofHours(1))).build());
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            messages.add(Message.fromWire(UUID.randomUUID(), "work", queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                    ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8), Map.of("codec", "json-jdk")));
        }
        broker.enqueueAll(messages);
        FlowLimit hourly = FlowLimit.rate(FlowLimit.QUEUE_LIMIT_ID, RateLimit.of(1, Duration.ofHours(1)));
        int seen = 0;
        for (int round = 0; round < 100 && seen < jobs; round++) {
            List<Delivery> ds = broker.fetch(List.of(queue), "c1", 999, Duration.ofMillis(200));
            limits.admit("c1", ds.stream().map(d -> new Admission.Request(d, List.of(hourly))).toList());
            seen += ds.size();
        }
        assertEquals(jobs, seen);
        String delayed = "binomic:{" + queue + "}:delayed";
        String inAMinute = Long.toString(System.currentTimeMillis() + 60_000);
        long pushedBack = (Long) RedisServer.shared().call("ZCOUNT", delayed, inAMinute, "(8000000000000000");
        assertTrue(pushedBack >= jobs - 2, "an hour apart each: " + pushedBack);
        RedisServer.shared().call("ZADD", delayed, inAMinute, "{\"not\":\"rate limited\"}");

        limits.setQueueLimits(queue, QueueLimits.builder().rateLimit(RateLimit.perSecond(1000)).build());
        assertEquals(1L, RedisServer.shared().call("ZCOUNT", delayed, inAMinute, "(8000000000000000"),
                "every job the hourly limit pushed back is due now; a delay of another kind keeps its time");
        RedisServer.shared().call("ZREM", delayed, "{\"not\":\"rate limited\"}");
    }

    @Test
    void aQueueLimitThatCannotBindRecordsNothingYetCountsWhatItAdmittedOnceItCan() throws Exception {
        FlowLimits limits = broker.capability(FlowLimits.class).orElseThrow();
        limits.setQueueLimits(queue, QueueLimits.builder().concurrencyLimit(3).build());
        List<Delivery> first = enqueueAndFetch(2, "c1");
        assertEquals(List.of(Admission.Decision.RUN, Admission.Decision.RUN), decisions(limits.admit("c1", requests(first))));
        String key = "binomic:{" + queue + "}:";
        assertEquals(0L, RedisServer.shared().call("EXISTS", key + "held", key + "slots:q"),
                "two pending of three allowed: the limit cannot bind, so no holder and no slot is written");

        List<Delivery> more = enqueueAndFetch(3, "c2");
        assertEquals(List.of(Admission.Decision.RUN, Admission.Decision.WAIT_SLOT, Admission.Decision.WAIT_SLOT),
                decisions(limits.admit("c2", requests(more))), "the two admitted without a record count: one slot is left");
        assertEquals(2L, RedisServer.shared().call("ZCARD", key + "wait:q"));

        assertTrue(broker.settle("c1", List.of(new Settlement.Ack(first.getFirst()))).notApplied().isEmpty());
        assertEquals(1L, RedisServer.shared().call("ZCARD", key + "wait:q"),
                "settling one admitted without a record frees room: the oldest waiter moves back at once, not at its fallback");
    }

    @Test
    void deliveriesOtherWorkersFetchedAndHaveNotHadDecidedDoNotCountAsRunning() throws Exception {
        FlowLimits limits = broker.capability(FlowLimits.class).orElseThrow();
        limits.setQueueLimits(queue, QueueLimits.builder().concurrencyLimit(3).build());
        List<Delivery> first = enqueueAndFetch(4, "c1");
        assertEquals(List.of(Admission.Decision.RUN, Admission.Decision.RUN, Admission.Decision.RUN, Admission.Decision.WAIT_SLOT),
                decisions(limits.admit("c1", requests(first))));
        assertTrue(broker.settle("c1", List.of(new Settlement.Ack(first.getFirst()))).notApplied().isEmpty());

        List<Delivery> fetchedElsewhere = enqueueAndFetch(5, "c2"); // the waiter moved back among them
        List<Delivery> mine = enqueueAndFetch(1, "c3");
        assertEquals(List.of(Admission.Decision.RUN), decisions(limits.admit("c3", requests(mine))),
                "two of three slots are taken; the five another worker fetched and has not had decided are not running");
        List<Admission.Decision> theirs = decisions(limits.admit("c2", requests(fetchedElsewhere)));
        assertEquals(5, theirs.stream().filter(d -> d == Admission.Decision.WAIT_SLOT).count(), "no slot is left: " + theirs);
        assertEquals(3, limits.slotsHeld(queue, FlowLimit.QUEUE_LIMIT_ID));
    }

    private List<Delivery> enqueueAndFetch(int n, String consumer) throws Exception {
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            messages.add(Message.fromWire(UUID.randomUUID(), "work", queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                    ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8), Map.of("codec", "json-jdk")));
        }
        broker.enqueueAll(messages);
        List<Delivery> all = new ArrayList<>();
        for (int round = 0; round < 20 && all.size() < n; round++) {
            all.addAll(broker.fetch(List.of(queue), consumer, n - all.size(), Duration.ofMillis(200)));
        }
        assertEquals(n, all.size());
        return all;
    }

    private static List<Admission.Request> requests(List<Delivery> deliveries) {
        return deliveries.stream().map(d -> new Admission.Request(d, List.of(FlowLimit.concurrency(FlowLimit.QUEUE_LIMIT_ID, 3)))).toList();
    }

    private static List<Admission.Decision> decisions(List<Admission> admissions) {
        return admissions.stream().map(Admission::decision).toList();
    }

    private static int keyOf(Delivery d) {
        String json = new String(d.message().orElseThrow().payload(), StandardCharsets.UTF_8);
        return Integer.parseInt(json.replaceAll("\\D", ""));
    }

    @Override
    protected boolean handsOffFreedSlots() {
        return true;
    }
}

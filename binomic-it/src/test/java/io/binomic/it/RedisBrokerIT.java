package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerException;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.PayloadTooLargeException;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import io.binomic.core.BrokerCapabilities;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Redis-specific behaviour of the broker, checked by looking at Redis itself (with a raw RESP
 * client, not through the broker): key layout, what is left in the stream, the PEL and the
 * delayed set after each step, broken entries, and connection errors.
 */
class RedisBrokerIT {
    private final RedisServer redis = RedisServer.shared();
    private Broker broker;
    private Scheduler scheduler;
    private String queue;

    @BeforeEach
    void start() {
        queue = "it-" + UUID.randomUUID().toString().substring(0, 8);
        broker = Brokers.redis(redis);
        broker.start(List.of(queue));
        scheduler = Brokers.scheduler(broker);
    }

    @AfterEach
    void close() {
        broker.close();
    }

    private String stream() {
        return "binomic:{" + queue + "}:stream";
    }

    private String delayed() {
        return "binomic:{" + queue + "}:delayed";
    }

    private Message message(String payload) {
        return message(queue, payload);
    }

    private static Message message(String onQueue, String payload) {
        return Message.fromWire(UUID.randomUUID(), "t", onQueue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                payload.getBytes(StandardCharsets.UTF_8), Map.of());
    }

    /** Restarts the broker on {@code queue} and a second queue, with one message on each; returns the second. */
    private String oneMessageOnEachOfTwoQueues() {
        String other = queue + "-b";
        broker.close();
        broker = Brokers.redis(redis);
        broker.start(List.of(queue, other));
        broker.enqueue(message("{}"));
        broker.enqueue(message(other, "{}"));
        return other;
    }

    private List<Delivery> fetch(int max) throws InterruptedException {
        return broker.fetch(List.of(queue), "c1", max, Duration.ofMillis(200));
    }

    /** Settles as c1, the consumer {@link #fetch} reads for; returns the stale settlements. */
    private List<Settlement> settle(Broker b, Settlement... settlements) {
        return b.settle("c1", List.of(settlements)).notApplied();
    }

    private List<Settlement> ack(List<Delivery> deliveries) {
        return broker.settle("c1", deliveries.stream().<Settlement>map(Settlement.Ack::new).toList()).notApplied();
    }

    private long pelSize() {
        return (Long) ((List<?>) redis.call("XPENDING", stream(), "binomic")).getFirst();
    }

    @Test
    void keysOfAQueueShareItsHashTagAndTheGroupExistsAfterStart() {
        assertEquals("stream", redis.call("TYPE", stream()));
        List<?> groups = (List<?>) redis.call("XINFO", "GROUPS", stream());
        assertEquals("binomic", ((List<?>) groups.getFirst()).get(1));
    }

    @Test
    void acknowledgedEntriesAreTrimmedFromTheStreamNotOnlyAcknowledged() throws Exception {
        List<Message> sent = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            sent.add(message("{\"i\":" + i + "}"));
        }
        broker.enqueueAll(sent);
        assertEquals(50L, redis.call("XLEN", stream()));

        List<Delivery> got = new ArrayList<>();
        while (got.size() < 50) {
            got.addAll(fetch(20));
        }
        assertEquals(List.of(), ack(got));

        assertEquals(0L, redis.call("XLEN", stream()));
        assertEquals(0L, pelSize());
    }

    /**
     * Acks never XDEL their entries: the stream is trimmed in bulk ({@code XTRIM MINID ~}, the ack
     * path's). The trim must stop at the oldest entry still pending (a reclaim or a dead letter reads
     * it) and at the last delivered one (what follows was never delivered), whatever the stream's nodes.
     */
    @Test
    void trimmingTheAcknowledgedEntriesRemovesNoPendingAndNoUndeliveredEntry() throws Exception {
        List<Message> sent = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            sent.add(message("{\"i\":" + i + "}"));
        }
        broker.enqueueAll(sent);
        List<Delivery> got = new ArrayList<>();
        while (got.size() < 600) {
            got.addAll(fetch(600 - got.size()));
        }
        Delivery early = got.get(250);
        Delivery late = got.get(550);
        List<Delivery> acked = new ArrayList<>(got);
        acked.removeAll(List.of(early, late));

        assertEquals(List.of(), ack(acked)); // the settle pipeline trims too (the queue's first settle)
        BrokerCapabilities.settledCleanup(broker).removeSettled(queue);

        assertTrue((Long) redis.call("XLEN", stream()) < 1000, "acked entries before the oldest pending one are trimmed");
        assertEquals(750, ((List<?>) redis.call("XRANGE", stream(), early.receipt(), "+")).size(),
                "nothing from the oldest pending entry on is removed (pending, acked after it, undelivered)");
        List<Delivery> rest = new ArrayList<>();
        while (rest.size() < 400) {
            rest.addAll(fetch(400 - rest.size()));
        }
        for (int i = 0; i < 400; i++) {
            assertArrayEquals(sent.get(600 + i).payload(), rest.get(i).message().orElseThrow().payload(), "undelivered entry " + (600 + i));
        }
        assertEquals(List.of(), ack(rest));

        List<Delivery> reclaimed = broker.reclaim(queue, "c2", Duration.ZERO, 10);
        assertEquals(List.of(early.receipt(), late.receipt()), reclaimed.stream().map(Delivery::receipt).toList());
        assertArrayEquals(sent.get(250).payload(), reclaimed.get(0).message().orElseThrow().payload());
        assertEquals(List.of(), broker.settle("c2", List.of(new Settlement.DeadLetter(reclaimed.get(0),
                new DeadLetter.Failure(DeadLetterReason.MAX_ATTEMPTS, "E", "", "", 3, Instant.now())))).notApplied());
        assertArrayEquals(sent.get(250).payload(),
                BrokerCapabilities.deadLetterStore(broker).readDeadLetters(queue, Optional.empty(), 10).getFirst().message().orElseThrow().payload());

        BrokerCapabilities.settledCleanup(broker).removeSettled(queue);
        assertEquals(1, ((List<?>) redis.call("XRANGE", stream(), late.receipt(), late.receipt())).size(), "still pending, still there");
        assertEquals(List.of(), broker.settle("c2", List.of(new Settlement.Ack(reclaimed.get(1)))).notApplied());
        BrokerCapabilities.settledCleanup(broker).removeSettled(queue);
        assertEquals(0L, redis.call("XLEN", stream()), "all settled: all trimmed");
    }

    /**
     * Found by an outside tester: after Redis restarted without its data, a worker's outcomes failed
     * with NOGROUP until it gave them up, logging an error that reclaim would run them again, while
     * their entries were gone. The settlement of an entry whose stream lost its group applies to nothing.
     */
    @Test
    void aSettlementOfAnEntryWhoseStreamLostItsDataAppliesToNothing() throws InterruptedException {
        broker.enqueue(message("gone"));
        broker.enqueue(message("gone too"));
        List<Delivery> held = broker.fetch(List.of(queue), "c1", 10, Duration.ofSeconds(1));
        assertEquals(2, held.size());
        redis.call("DEL", stream());

        SettleReport lone = broker.settle("c1", List.of(new Settlement.Ack(held.get(0))));
        SettleReport both = broker.settle("c1", held.stream().<Settlement>map(Settlement.Ack::new).toList());

        assertEquals(1, lone.notPending().size(), "not pending: " + lone);
        assertEquals(2, both.notPending().size(), "listed together, not pending either: " + both);
    }

    /** A group moved back by hand ({@code XGROUP SETID}, to run entries again): what follows its new last-delivered id is not trimmed. */
    @Test
    void trimmingStopsAtTheLastDeliveredIdEvenWhenAnOlderEntryIsStillPending() throws Exception {
        List<Message> sent = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            sent.add(message("{\"i\":" + i + "}"));
        }
        broker.enqueueAll(sent);
        List<Delivery> got = new ArrayList<>();
        while (got.size() < 300) {
            got.addAll(fetch(300 - got.size()));
        }
        redis.call("XGROUP", "SETID", stream(), "binomic", got.getFirst().receipt());

        assertEquals(List.of(), ack(got.subList(0, 299))); // the last one stays pending; the settle pipeline trims too
        BrokerCapabilities.settledCleanup(broker).removeSettled(queue);

        assertEquals(299, ((List<?>) redis.call("XRANGE", stream(), "(" + got.getFirst().receipt(), "+")).size(),
                "the entries after the group's last-delivered id are all still there");
        List<Delivery> again = new ArrayList<>();
        for (List<Delivery> batch = fetch(300); !batch.isEmpty(); batch = fetch(300)) {
            again.addAll(batch);
        }
        assertEquals(299, again.size());
    }

    /** Before: XACK and XDEL were two pipelined commands; a break between them left an acked entry counted as ready forever. */
    @Test
    void anAcknowledgedEntryLeftInTheStreamIsNeverCountedAsReadyAndIsRemovedByTheCleanUp() throws Exception {
        broker.enqueueAll(List.of(message("{}"), message("{}"), message("{}")));
        List<Delivery> got = fetch(3);
        redis.call("XACK", stream(), "binomic", got.get(0).receipt()); // acked by hand, not deleted

        assertEquals(3L, redis.call("XLEN", stream()));
        assertEquals(0, broker.stats(queue).ready(), "an acked entry is not ready: " + broker.stats(queue));
        assertEquals(2, broker.stats(queue).pending());

        assertEquals(List.of(), ack(got.subList(1, 3)));
        BrokerCapabilities.settledCleanup(broker).removeSettled(queue);
        assertEquals(0L, redis.call("XLEN", stream()), "the clean-up removes every acknowledged entry");
        assertEquals(0, broker.stats(queue).ready());
    }

    /**
     * The chaos run (seed 42, long) ended with Redis 7.0 reporting a lag of 92 on an empty stream
     * whose every entry had been delivered: the stats showed 53 ready tick messages that no worker
     * could ever fetch. A read counter that drifted is set here by hand.
     */
    @Test
    void aLagThatRedisMiscountsIsNotReportedAsReadyMessages() throws Exception {
        broker.enqueueAll(List.of(message("{}"), message("{}"), message("{}")));
        List<Delivery> got = fetch(3);
        redis.call("XGROUP", "SETID", stream(), "binomic", "$", "ENTRIESREAD", "0");
        assertEquals(3L, ((List<?>) redis.call("XINFO", "GROUPS", stream())).stream().map(g -> (List<?>) g)
                .map(g -> g.get(g.indexOf("lag") + 1)).findFirst().orElseThrow(), "Redis miscounts the lag");

        assertEquals(0, broker.stats(queue).ready(), "all three were delivered: " + broker.stats(queue));
        assertEquals(List.of(), ack(got));
        assertEquals(0, broker.stats(queue).ready(), "an empty stream has nothing ready: " + broker.stats(queue));

        broker.enqueue(message("{}"));
        assertEquals(1, broker.stats(queue).ready(), "one enqueued after the drift: " + broker.stats(queue));
    }

    @Test
    void entryFieldsAreReadableStringsForOtherTools() throws Exception {
        Message m = message("{\"name\":\"Ada\"}").toBuilder().header("trace", "abc").build();
        broker.enqueue(m);

        List<?> entry = (List<?>) ((List<?>) redis.call("XRANGE", stream(), "-", "+")).getFirst();
        List<?> flat = (List<?>) entry.get(1);
        Map<Object, Object> fields = new java.util.HashMap<>();
        for (int i = 0; i < flat.size(); i += 2) {
            fields.put(flat.get(i), flat.get(i + 1));
        }
        assertEquals(m.id().toString(), fields.get("id"));
        assertEquals("t", fields.get("task"));
        assertEquals(queue, fields.get("queue"));
        assertEquals("1", fields.get("attempt"));
        assertEquals(Long.toString(m.enqueuedAt().toEpochMilli()), fields.get("enqueuedAt"));
        assertEquals("{\"name\":\"Ada\"}", fields.get("payload"));
        assertEquals("{\"trace\":\"abc\"}", fields.get("headers"));
    }

    @Test
    void retryLaterLeavesNothingPendingAndPutsTheNextAttemptInTheDelayedSet() throws Exception {
        broker.enqueue(message("{}"));
        Delivery d = fetch(1).getFirst();
        assertEquals(1L, pelSize());

        Message m = d.message().orElseThrow();
        settle(broker, new Settlement.RetryLater(d, m.withAttempt(m.attempt() + 1, Instant.now()), Instant.now().plusSeconds(30)));

        assertEquals(0L, pelSize());
        assertEquals(0L, redis.call("XLEN", stream()));
        List<?> members = (List<?>) redis.call("ZRANGE", delayed(), "0", "-1");
        assertEquals(1, members.size());
        assertTrue(((String) members.getFirst()).contains("\"attempt\":\"2\""), "delayed member: " + members);
    }

    @Test
    void retryOfAnEntryNoLongerPendingIsNotScheduledTwice() throws Exception {
        broker.enqueue(message("{}"));
        Delivery d = fetch(1).getFirst();
        ack(List.of(d)); // finished already

        Message m = d.message().orElseThrow();
        assertEquals(1, settle(broker, new Settlement.RetryLater(d, m.withAttempt(m.attempt() + 1, Instant.now()), Instant.now())).size());

        assertEquals(0L, redis.call("ZCARD", delayed()));
    }

    @Test
    void moversOnSeparateConnectionsMoveEachEntryOnce() throws Exception {
        int n = 300;
        List<Broker> brokers = new ArrayList<>();
        List<Scheduler> movers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Broker b = Brokers.redis(redis);
            b.start(List.of(queue));
            brokers.add(b);
            movers.add(Brokers.scheduler(b));
        }
        try {
            for (int i = 0; i < n; i++) {
                scheduler.schedule(message("{\"i\":" + i + "}"), Instant.now().minusSeconds(1));
            }
            AtomicInteger moved = new AtomicInteger();
            CountDownLatch go = new CountDownLatch(1);
            try (var pool = Executors.newFixedThreadPool(8)) {
                for (int t = 0; t < 8; t++) {
                    Scheduler mover = movers.get(t % movers.size());
                    pool.submit(() -> {
                        go.await();
                        int got;
                        while ((got = mover.moveDue(queue, Instant.now(), 5)) > 0) {
                            moved.addAndGet(got);
                        }
                        return null;
                    });
                }
                go.countDown();
            }
            assertEquals(n, moved.get());
            assertEquals((long) n, redis.call("XLEN", stream()));
            assertEquals(0L, redis.call("ZCARD", delayed()));
        } finally {
            brokers.forEach(Broker::close);
        }
    }

    /** Due means due by Redis' TIME: a worker whose clock runs 10 minutes ahead moves nothing early. */
    @Test
    void moveDueGoesByRedisTimeNotByTheCallersClock() throws Exception {
        Instant due = Instant.now().plusSeconds(60);
        scheduler.schedule(message("{}"), due);

        assertEquals(0, scheduler.moveDue(queue, Instant.now().plus(Duration.ofMinutes(10)), 10));
        assertEquals(1L, redis.call("ZCARD", delayed()));
        assertEquals(0L, redis.call("XLEN", stream()));

        redis.call("ZADD", delayed(), "XX", Long.toString(Instant.now().minusSeconds(1).toEpochMilli()),
                (String) ((List<?>) redis.call("ZRANGE", delayed(), "0", "0")).getFirst());
        assertEquals(1, scheduler.moveDue(queue, Instant.EPOCH, 10), "due by Redis' clock even when the caller's says 1970");
    }

    /**
     * The claim and the tick's message are one script: after any number of concurrent firings the
     * claim key names a tick whose message is on the stream, and it expires (the claim lifetime).
     */
    @Test
    void aTickClaimExistsOnlyWithItsMessageOnTheStreamAndExpires() throws Exception {
        String claimKey = "binomic:{" + queue + "}:cron:report";
        Instant first = Instant.now().minusSeconds(30).truncatedTo(ChronoUnit.SECONDS);
        List<java.util.concurrent.Future<?>> firers = new ArrayList<>();
        try (var pool = Executors.newFixedThreadPool(4)) {
            for (int t = 0; t < 4; t++) {
                firers.add(pool.submit(() -> {
                    for (int i = 0; i < 20; i++) {
                        Instant tick = first.plusSeconds(i);
                        Message m = Message.fromWire(UUID.randomUUID(), "report", queue, 1, Instant.now(),
                                "null".getBytes(StandardCharsets.UTF_8), Map.of("tick", tick.toString()));
                        scheduler.fireTick("report", tick, tick.plusSeconds(60), m, Duration.ofMinutes(2));
                        String claimed = (String) redis.call("GET", claimKey);
                        String onStream = String.valueOf(redis.call("XRANGE", stream(), "-", "+"));
                        if (!onStream.contains(Instant.ofEpochMilli(Long.parseLong(claimed)).toString())) {
                            throw new AssertionError("claim " + claimed + " without its message: " + onStream);
                        }
                    }
                    return null;
                }));
            }
        }
        for (var firer : firers) {
            firer.get();
        }
        assertEquals(20L, redis.call("XLEN", stream()), "each tick enqueued once");
        long ttl = (Long) redis.call("PTTL", claimKey);
        assertTrue(ttl > 60_000 && ttl <= 120_000, "the claim expires after its lifetime, PTTL " + ttl);
    }

    @Test
    void reclaimCountsEveryEarlierHandOutInTheAttempt() throws Exception {
        Message m = Message.fromWire(UUID.randomUUID(), "t", queue, 2, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                "{}".getBytes(StandardCharsets.UTF_8), Map.of());
        broker.enqueue(m);
        fetch(1);

        Thread.sleep(60);
        Delivery second = broker.reclaim(queue, "c2", Duration.ofMillis(50), 10).getFirst();
        Thread.sleep(60);
        Delivery third = broker.reclaim(queue, "c3", Duration.ofMillis(50), 10).getFirst();

        assertEquals(2, second.deliveryCount());
        assertEquals(3, second.attempt());
        assertEquals(3, third.deliveryCount());
        assertEquals(4, third.attempt());
    }

    /**
     * A reclaimed entry is decoded from its bytes as a fetched one is: a payload that is not UTF-8
     * comes back byte for byte (a string read replaced it with U+FFFD and ran the handler on altered
     * data), a bad priority fails the entry, and a stored attempt at the top of the range reads as a
     * spent budget instead of wrapping to a negative attempt.
     */
    @Test
    void reclaimedEntriesAreDecodedAsFetchedOnesAre() throws Exception {
        byte[] notUtf8Json = {'"', (byte) 0xed, (byte) 0xa0, (byte) 0x80, '"'};
        redis.callBytes(utf8("XADD"), utf8(stream()), utf8("*"), utf8("id"), utf8(UUID.randomUUID().toString()),
                utf8("task"), utf8("t"), utf8("queue"), utf8(queue), utf8("attempt"), utf8("1"), utf8("enqueuedAt"), utf8("1"),
                utf8("payload"), notUtf8Json);
        redis.call("XADD", stream(), "*", "id", UUID.randomUUID().toString(), "task", "t", "queue", queue, "attempt", "1",
                "enqueuedAt", "1", "payload", "{}", "priority", "abc");
        redis.call("XADD", stream(), "*", "id", UUID.randomUUID().toString(), "task", "t", "queue", queue,
                "attempt", Integer.toString(Integer.MAX_VALUE), "enqueuedAt", "1", "payload", "{}");
        List<Delivery> fetched = fetch(10);
        assertEquals(3, fetched.size());

        Thread.sleep(60);
        List<Delivery> reclaimed = broker.reclaim(queue, "c2", Duration.ofMillis(50), 10);

        assertEquals(3, reclaimed.size());
        assertArrayEquals(notUtf8Json, fetched.get(0).message().orElseThrow().payload());
        assertArrayEquals(notUtf8Json, reclaimed.get(0).message().orElseThrow().payload(), "byte for byte after a reclaim too");
        for (Delivery d : List.of(fetched.get(1), reclaimed.get(1))) {
            assertTrue(d.decodeProblem().orElseThrow().endsWith("field 'priority' has a bad value 'abc': "
                    + "a priority is one digit, from 0 (lowest) to 9 (highest)"), d.decodeProblem().orElseThrow());
            assertEquals("abc", d.rawFields().get("priority"), "kept for a replay: " + d.rawFields());
        }
        assertEquals(Integer.MAX_VALUE, fetched.get(2).attempt());
        assertEquals(2, reclaimed.get(2).deliveryCount());
        assertEquals(Integer.MAX_VALUE, reclaimed.get(2).attempt(), "saturates, never wraps to a negative attempt");
    }

    @Test
    void reclaimSkipsEntriesDeletedWhilePendingAndFollowsTheCursorPastThem() throws Exception {
        List<Message> sent = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            sent.add(message("{\"i\":" + i + "}"));
        }
        broker.enqueueAll(sent);
        List<Delivery> got = new ArrayList<>();
        while (got.size() < 30) {
            got.addAll(fetch(30));
        }
        for (int i = 0; i < 30; i += 2) {
            redis.call("XDEL", stream(), got.get(i).receipt()); // damaged by hand: still in the PEL
        }
        Thread.sleep(60);

        List<Delivery> reclaimed = broker.reclaim(queue, "c2", Duration.ofMillis(50), 100);

        assertEquals(15, reclaimed.size());
        reclaimed.forEach(d -> assertEquals(2, d.deliveryCount()));
        assertEquals(15L, pelSize(), "deleted entries leave the PEL");
    }

    @Test
    void renewingLeasesOnSeveralQueuesKeepsEveryOneFromReclaim() throws Exception {
        String other = oneMessageOnEachOfTwoQueues();
        List<Delivery> held = broker.fetch(List.of(queue, other), "c1", 10, Duration.ofMillis(200));
        assertEquals(2, held.size());

        for (int i = 0; i < 3; i++) {
            Thread.sleep(100);
            broker.renewLeases("c1", held);
        }

        assertTrue(broker.reclaim(queue, "c2", Duration.ofMillis(150), 10).isEmpty());
        assertTrue(broker.reclaim(other, "c2", Duration.ofMillis(150), 10).isEmpty());
    }

    @Test
    void reclaimInSmallBatchesFollowsTheCursorAndWrapsAroundToTakeEveryStrandedEntryOnce() throws Exception {
        List<Message> sent = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            sent.add(message("{\"i\":" + i + "}"));
        }
        broker.enqueueAll(sent);
        int fetched = 0;
        while (fetched < 30) {
            fetched += broker.fetch(List.of(queue), "ghost", 30, Duration.ofMillis(100)).size();
        }
        // Idle longer than the loop below takes even on a loaded machine: an entry c2 took must not be idle
        // enough to be taken again before the loop ends.
        Thread.sleep(1100);

        List<String> taken = new ArrayList<>();
        List<Delivery> batch;
        while (!(batch = broker.reclaim(queue, "c2", Duration.ofMillis(1000), 7)).isEmpty()) {
            batch.forEach(d -> taken.add(d.receipt()));
        }
        assertEquals(30, taken.size());
        assertEquals(30, new HashSet<>(taken).size(), "no entry taken twice");

        // The cursor now sits somewhere in the PEL: entries stranded by c2 (ids before it) must still come back.
        Thread.sleep(1100);
        assertEquals(7, broker.reclaim(queue, "c3", Duration.ofMillis(1000), 7).size());
    }

    /**
     * The settle script fences a batch by listing the consumer's pending entries over runs of its ids
     * (LuaScripts.SETTLE): what the listing does not show must still be told apart exactly. Runs of 64,
     * a listing cut at twice the run: 130 of c1's entries around 20 of c2's, some taken over by c2,
     * one re-delivered to c1 itself, one already acked, one settled twice, sent in shuffled order.
     */
    @Test
    void aBatchFencedByRangeAppliesExactlyWhatThisConsumerStillHolds() throws Exception {
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 150; i++) {
            messages.add(message("{\"i\":" + i + "}"));
        }
        broker.enqueueAll(messages);
        List<Delivery> mine = new ArrayList<>(fetch(50));
        List<Delivery> theirs = broker.fetch(List.of(queue), "c2", 20, Duration.ofMillis(200));
        mine.addAll(fetch(80));
        assertEquals(130, mine.size());
        assertEquals(20, theirs.size());
        Set<Delivery> takenOver = Set.of(mine.get(3), mine.get(49), mine.get(50), mine.get(120));
        for (Delivery d : takenOver) {
            redis.call("XCLAIM", stream(), "binomic", "c2", "0", d.receipt());
        }
        Delivery redelivered = mine.get(70);
        redis.call("XCLAIM", stream(), "binomic", "c1", "0", redelivered.receipt());
        Delivery alreadyAcked = mine.get(100);
        assertEquals(List.of(), ack(List.of(alreadyAcked)));

        List<Settlement> batch = new ArrayList<>();
        mine.forEach(d -> batch.add(new Settlement.Ack(d)));
        theirs.forEach(d -> batch.add(new Settlement.Ack(d)));
        Settlement twice = new Settlement.Ack(mine.get(10));
        batch.add(twice);
        java.util.Collections.shuffle(batch, new java.util.Random(14));
        SettleReport report = broker.settle("c1", batch);

        Set<String> refused = new HashSet<>();
        theirs.forEach(d -> refused.add(d.receipt()));
        takenOver.forEach(d -> refused.add(d.receipt()));
        assertEquals(refused, new HashSet<>(report.reclaimed().stream().map(s -> s.delivery().receipt()).toList()),
                "another consumer's entries and the ones taken over are refused as reclaimed");
        assertEquals(24, report.reclaimed().size());
        assertEquals(Set.of(alreadyAcked.receipt(), twice.delivery().receipt()),
                new HashSet<>(report.notPending().stream().map(s -> s.delivery().receipt()).toList()),
                "the acked one and the second settlement of one entry are not pending");
        assertEquals(2, report.notPending().size());
        List<?> pending = (List<?>) redis.call("XPENDING", stream(), "binomic", "-", "+", "1000");
        assertEquals(24, pending.size(), "only c2's entries are left, the re-delivered one is acked");
        for (Object entry : pending) {
            assertEquals("c2", ((List<?>) entry).get(1));
        }
    }

    /** A sparse batch: the listing of the consumer's entries in its range is cut, the rest is fenced entry by entry. */
    @Test
    void aSparseBatchWhoseListingIsCutIsStillSettledInFull() throws Exception {
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            messages.add(message("{}"));
        }
        broker.enqueueAll(messages);
        List<Delivery> mine = fetch(200);
        List<Delivery> everyThird = new ArrayList<>();
        List<Delivery> rest = new ArrayList<>();
        for (int i = 0; i < mine.size(); i++) {
            (i % 3 == 0 ? everyThird : rest).add(mine.get(i));
        }

        assertEquals(List.of(), ack(everyThird));
        assertEquals(rest.size(), pelSize());
        assertEquals(List.of(), ack(rest));
        assertEquals(0, pelSize());
    }

    @Test
    void renewingByAStaleOwnerDoesNotStealAReclaimedEntryBack() throws Exception {
        broker.enqueue(message("{}"));
        Delivery mine = fetch(1).getFirst();
        Thread.sleep(60);
        broker.reclaim(queue, "c2", Duration.ofMillis(50), 1);

        broker.renewLeases("c1", List.of(mine));

        List<?> entry = (List<?>) ((List<?>) redis.call("XPENDING", stream(), "binomic", "-", "+", "10")).getFirst();
        assertEquals("c2", entry.get(1));
    }

    @Test
    void brokenEntriesComeBackAsMalformedDeliveriesAndFetchingGoesOn() throws Exception {
        redis.call("XADD", stream(), "*", "hello", "world");
        redis.call("XADD", stream(), "*", "id", "not-a-uuid", "task", "t", "queue", queue, "attempt", "1",
                "enqueuedAt", "1", "payload", "{}");
        redis.call("XADD", stream(), "*", "id", UUID.randomUUID().toString(), "task", "t", "queue", queue, "attempt", "zero",
                "enqueuedAt", "1", "payload", "{}");
        broker.enqueue(message("{\"ok\":true}"));

        List<Delivery> got = fetch(10);

        assertEquals(4, got.size());
        for (Delivery broken : got.subList(0, 3)) {
            assertTrue(broken.message().isEmpty());
            assertTrue(broken.decodeProblem().orElseThrow().contains(broken.receipt()), broken.decodeProblem().orElseThrow());
            assertFalse(broken.rawFields().isEmpty());
        }
        assertTrue(got.get(0).decodeProblem().orElseThrow().contains("'id' is missing"));
        assertTrue(got.get(1).decodeProblem().orElseThrow().contains("'id' has a bad value 'not-a-uuid'"));
        assertTrue(got.get(2).decodeProblem().orElseThrow().contains("'attempt' has a bad value 'zero'"));
        assertEquals("world", got.get(0).rawFields().get("hello"));
        assertTrue(got.get(3).message().isPresent());
    }

    /**
     * The fetch reads entries as bytes: a non-ASCII payload comes back byte for byte, a
     * hand-written {@code payload64} and an id or attempt in a form Binomic does not write are read
     * as before, and a broken entry with bytes that are not UTF-8 is a malformed delivery whose raw
     * fields are still readable text, down to its dead letter.
     */
    @Test
    void fetchedEntriesKeepTheirBytesAndABrokenOneWithBytesThatAreNotUtf8IsDeadLettered() throws Exception {
        Message accented = message("{\"to\":\"Zoë\",\"city\":\"東京\",\"mood\":\"🚀\"}");
        broker.enqueue(accented);
        byte[] notUtf8 = {(byte) 0xff, (byte) 0xfe, 0, 'x'};
        Message binary = Message.fromWire(UUID.randomUUID(), "t", queue, 2, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                notUtf8, Map.of(Message.CODEC, "jackson"));
        broker.enqueue(binary);
        List<?> storedFields = (List<?>) ((List<?>) ((List<?>) redis.call("XRANGE", stream(), "-", "+")).get(1)).get(1);
        assertEquals("//4AeA==", storedFields.get(storedFields.indexOf("payload64") + 1), "stored as payload64: " + storedFields);
        UUID upper = UUID.randomUUID();
        redis.call("XADD", stream(), "*", "id", upper.toString().toUpperCase(), "task", "t", "queue", queue, "attempt", "+3",
                "enqueuedAt", "1700000000000", "payload64", "//4AeA==", "other", "tool");
        byte[] badTask = {(byte) 0xc3, '(', 'x'};
        String brokenId = (String) redis.callBytes(utf8("XADD"), utf8(stream()), utf8("*"), utf8("id"), utf8(UUID.randomUUID().toString()),
                utf8("task"), badTask, utf8("queue"), utf8(queue), utf8("attempt"), utf8("0x1"), utf8("enqueuedAt"), utf8("1"),
                utf8("payload"), new byte[] {(byte) 0xe9, '}'});

        List<Delivery> got = fetch(10);

        assertEquals(4, got.size());
        assertEquals(accented, got.get(0).message().orElseThrow());
        assertArrayEquals(accented.payload(), got.get(0).message().orElseThrow().payload());
        assertArrayEquals(notUtf8, got.get(1).message().orElseThrow().payload());
        assertEquals(binary, got.get(1).message().orElseThrow());
        Message handWritten = got.get(2).message().orElseThrow();
        assertEquals(upper, handWritten.id());
        assertEquals(3, handWritten.attempt());
        assertEquals(Instant.ofEpochMilli(1_700_000_000_000L), handWritten.enqueuedAt());
        assertArrayEquals(notUtf8, handWritten.payload());
        Delivery broken = got.get(3);
        assertEquals(brokenId, broken.receipt());
        assertTrue(broken.message().isEmpty());
        assertEquals("stream entry " + brokenId + " of queue '" + queue + "' is not a Binomic message: field 'attempt' has a bad value '0x1': "
                + "For input string: \"0x1\"", broken.decodeProblem().orElseThrow());
        assertEquals("\uFFFD(x", broken.rawFields().get("task"));
        assertEquals("\uFFFD}", broken.rawFields().get("payload"));

        settle(broker, new Settlement.DeadLetter(broken, new DeadLetter.Failure(DeadLetterReason.DECODE_ERROR, "decode",
                broken.decodeProblem().orElseThrow(), "", 1, Instant.now())));
        DeadLetter letter = BrokerCapabilities.deadLetterStore(broker).readDeadLetters(queue, Optional.empty(), 10).getFirst();
        assertEquals(broken.rawFields(), letter.rawFields());
        assertEquals("\uFFFD(x", letter.task());
        assertTrue(fetch(10).isEmpty(), "fetching goes on past it");
    }

    /** The same through the priority levels' fetch, a script whose reply's strings the broker reads as bytes. */
    @Test
    void entriesFetchedThroughThePriorityScriptKeepTheirBytesAndABrokenOneIsMalformed() throws Exception {
        Message urgent = Message.fromWire(UUID.randomUUID(), "t", queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                "{\"to\":\"Zoë 東京\"}".getBytes(StandardCharsets.UTF_8), Map.of(Message.PRIORITY, "8"));
        broker.enqueue(urgent);
        byte[] notUtf8 = {(byte) 0xff, (byte) 0xfe, 0, 'x'};
        Message binary = Message.fromWire(UUID.randomUUID(), "t", queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                notUtf8, Map.of());
        broker.enqueue(binary);
        String brokenId = (String) redis.callBytes(utf8("XADD"), utf8(stream()), utf8("*"), utf8("id"), utf8(UUID.randomUUID().toString()),
                utf8("task"), new byte[] {(byte) 0xc3, '(', 'x'}, utf8("queue"), utf8(queue), utf8("attempt"), utf8("0x1"),
                utf8("enqueuedAt"), utf8("1"), utf8("payload"), utf8("{}"), utf8("tool"), new byte[] {(byte) 0xff});

        List<Delivery> got = fetch(10);

        assertEquals(3, got.size(), got.toString());
        assertEquals(urgent, got.get(0).message().orElseThrow(), "the higher level first");
        assertArrayEquals(urgent.payload(), got.get(0).message().orElseThrow().payload());
        assertEquals(binary, got.get(1).message().orElseThrow());
        assertArrayEquals(notUtf8, got.get(1).message().orElseThrow().payload());
        Delivery broken = got.get(2);
        assertTrue(broken.receipt().startsWith(brokenId), broken.receipt());
        assertTrue(broken.decodeProblem().orElseThrow().endsWith("is not a Binomic message: field 'attempt' has a bad value '0x1': "
                + "For input string: \"0x1\""), broken.decodeProblem().orElseThrow());
        assertEquals("\uFFFD(x", broken.rawFields().get("task"));
        assertEquals("\uFFFD", broken.rawFields().get("tool"));
        assertEquals("0x1", broken.rawFields().get("attempt"));
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aBrokenDeadLetterKeepsItsRawFieldsAndCannotBeReplayed() throws Exception {
        redis.call("XADD", stream(), "*", "task", "orphan", "reason", "clash");
        Delivery broken = fetch(1).getFirst();

        settle(broker, new Settlement.DeadLetter(broken, new DeadLetter.Failure(DeadLetterReason.DECODE_ERROR, "decode",
                broken.decodeProblem().orElseThrow(), "", 1, Instant.now())));

        DeadLetter letter = BrokerCapabilities.deadLetterStore(broker).readDeadLetters(queue, Optional.empty(), 10).getFirst();
        assertEquals(Map.of("task", "orphan", "reason", "clash"), letter.rawFields());
        assertEquals("orphan", letter.task());
        assertEquals(DeadLetterReason.DECODE_ERROR, letter.failure().reason());
        assertTrue(letter.message().isEmpty());
        assertEquals(0, BrokerCapabilities.deadLetterStore(broker).replayDeadLetters(queue, List.of(letter.id())));
        assertEquals(1, broker.stats(queue).deadLetters());
    }

    @Test
    void deadLettersAreBoundedByCount() throws Exception {
        try (Broker small = Brokers.redis(redis, b -> b.deadLetterMaxCount(10))) {
            small.start(List.of(queue));
            List<Message> sent = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                sent.add(message("{}"));
            }
            small.enqueueAll(sent);
            List<Delivery> got = new ArrayList<>();
            while (got.size() < 500) {
                got.addAll(small.fetch(List.of(queue), "c1", 500, Duration.ofMillis(100)));
            }
            for (Delivery d : got) {
                settle(small, new Settlement.DeadLetter(d, new DeadLetter.Failure(DeadLetterReason.MAX_ATTEMPTS, "E", "", "", 3, Instant.now())));
            }
            long kept = small.stats(queue).deadLetters();
            // MAXLEN ~ trims whole radix-tree nodes (100 entries by default): approximate, never below the bound.
            assertTrue(kept >= 10 && kept <= 200, "dead letters kept: " + kept);
        }
    }

    @Test
    void deadLettersOlderThanTheMaxAgeAreDropped() throws Exception {
        String dlq = "binomic:{" + queue + "}:dlq";
        long old = System.currentTimeMillis() - Duration.ofDays(30).toMillis();
        redis.call("XADD", dlq, old + "-0", "reason", "MAX_ATTEMPTS", "raw", "{}");
        broker.enqueue(message("{}"));

        settle(broker, new Settlement.DeadLetter(fetch(1).getFirst(),
                new DeadLetter.Failure(DeadLetterReason.MAX_ATTEMPTS, "E", "", "", 3, Instant.now())));

        List<DeadLetter> letters = BrokerCapabilities.deadLetterStore(broker).readDeadLetters(queue, Optional.empty(), 10);
        assertEquals(1, letters.size(), "the 30-day-old letter is gone (default max age 14 days)");
    }

    @Test
    void payloadsThatAreNotUtf8SurviveTheRoundTrip() throws Exception {
        byte[] binary = {(byte) 0xff, 0, (byte) 0xc3, 0x28, 42};
        Message m = Message.fromWire(UUID.randomUUID(), "t", queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS), binary, Map.of());
        broker.enqueue(m);

        assertArrayEquals(binary, fetch(1).getFirst().message().orElseThrow().payload());
    }

    @Test
    void payloadOverTheLimitIsRefusedAndNothingIsEnqueued() {
        try (Broker small = Brokers.redis(redis, b -> b.maxPayloadBytes(16))) {
            small.start(List.of(queue));
            Message big = message("{\"text\":\"" + "x".repeat(100) + "\"}");

            PayloadTooLargeException e = assertThrows(PayloadTooLargeException.class, () -> small.enqueue(big));

            assertTrue(e.getMessage().contains("over the limit of 16 bytes"), e.getMessage());
            assertThrows(PayloadTooLargeException.class, () -> small.enqueueAll(List.of(message("{}"), big)));
            assertEquals(0L, redis.call("XLEN", stream()));
        }
    }

    @Test
    void startFailsFastNamingHostPortAndCauseWhenNothingListens() throws Exception {
        int closedPort;
        try (var socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }
        Broker nowhere = Brokers.redisProvider().create(io.binomic.api.BrokerConfig.builder()
                .url("redis://127.0.0.1:" + closedPort).connectTimeout(Duration.ofSeconds(2)).build());
        long start = System.nanoTime();

        BrokerException e = assertThrows(BrokerException.class, () -> nowhere.start(List.of(queue)));

        assertTrue(Duration.ofNanos(System.nanoTime() - start).toSeconds() < 10, "start must fail fast");
        assertEquals("cannot connect to Redis at 127.0.0.1:" + closedPort
                + ": Connection refused; is redis-server running? check BrokerConfig.url", e.getMessage());
        nowhere.close();
    }

    @Test
    void startFailsNamingTheDatabaseRedisDoesNotHave() {
        // Found by an outside tester: /99 on a running Redis read "...channel: [...] promise: ...; is redis-server running?".
        try (Broker b = Brokers.redisProvider().create(io.binomic.api.BrokerConfig.builder()
                .url("redis://127.0.0.1:" + redis.port() + "/99").build())) {
            BrokerException e = assertThrows(BrokerException.class, () -> b.start(List.of(queue)));
            assertEquals("Redis at 127.0.0.1:" + redis.port() + " refused database 99 (ERR DB index is out of range): it has 16, 0-15;"
                    + " check the /database of BrokerConfig.url (or BrokerConfig.database)", e.getMessage());
        }
    }

    @Test
    void startFailsWithAClearMessageOnMissingOrWrongCredentials() {
        try (RedisServer locked = RedisServer.startNew("--requirepass", "s3cret")) {
            for (var settings : List.<java.util.function.UnaryOperator<io.binomic.api.BrokerConfig.Builder>>of(
                    b -> b, b -> b.password("wrong"))) {
                Broker b = Brokers.redis(locked, settings);
                BrokerException e = assertThrows(BrokerException.class, () -> b.start(List.of(queue)));
                b.close();
                // Redis runs and answered: the message says what it refused, not "cannot connect".
                assertTrue(e.getMessage().startsWith("Redis at 127.0.0.1:" + locked.port() + " needs a password, and none is set"
                        + " (user default): NOAUTH") || e.getMessage().startsWith("Redis at 127.0.0.1:" + locked.port()
                        + " refused the password for user default: WRONGPASS"), e.getMessage());
                assertTrue(e.getMessage().endsWith("check BrokerConfig.password and BrokerConfig.username"
                        + " (or user:password@ in BrokerConfig.url)"), e.getMessage());
            }
            try (Broker ok = Brokers.redisProvider().create(io.binomic.api.BrokerConfig.builder()
                    .url("redis://:s3cret@127.0.0.1:" + locked.port() + "/3").build())) {
                ok.start(List.of(queue));
                ok.enqueue(message("{}"));
                assertEquals(1, ok.stats(queue).ready());
            }
        }
    }

    @Test
    void aRedissonYamlFileConfiguresTheConnectionInsteadOfTheUrl() throws Exception {
        java.nio.file.Path yaml = java.nio.file.Files.createTempFile("redisson-", ".yaml");
        java.nio.file.Files.writeString(yaml, """
                singleServerConfig:
                  address: "redis://127.0.0.1:%d"
                  database: 4
                """.formatted(redis.port()));
        try (Broker fromYaml = Brokers.redisProvider().create(io.binomic.api.BrokerConfig.builder()
                .url("redis://ignored.invalid:1").options(Map.of("redisson.config", yaml.toString())).build())) {
            fromYaml.start(List.of(queue));
            fromYaml.enqueueAll(List.of(message("{}"), message("{}")));

            assertEquals(2, fromYaml.fetch(List.of(queue), "c1", 10, Duration.ofMillis(200)).size());
            assertEquals(0L, redis.call("XLEN", stream()), "database 0 untouched: the YAML chose database 4");
        }
    }

    @Test
    void brokerKeepsWorkingAfterItsConnectionsAreKilled() throws Exception {
        broker.enqueue(message("{}"));
        long connections = binomicConnections();
        assertTrue(redis.killClients() > 0);
        // An enqueue written into a connection whose close the client has not read yet is in flight
        // when it dies: sent at most once, it fails as "may have been enqueued once" (WriteOnce). The
        // claim here is about the broker after a kill it has seen, so wait for its connections to come back.
        Await.until(Duration.ofSeconds(20), () -> binomicConnections() >= connections,
                () -> binomicConnections() + " of the broker's " + connections + " connections back after the kill");

        broker.enqueue(message("{}"));
        List<Delivery> got = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (got.size() < 2 && System.nanoTime() < deadline) {
            got.addAll(fetch(10));
        }
        assertEquals(2, got.size());
        assertEquals(List.of(), ack(got));
        assertEquals(0L, redis.call("XLEN", stream()));
    }

    private long binomicConnections() {
        return ((String) redis.call("CLIENT", "LIST", "TYPE", "normal")).lines()
                .filter(line -> line.contains(" name=binomic ")).count();
    }

    @Test
    void consumersIdleWithNothingPendingAreRemovedButOwnersStay() throws Exception {
        broker.enqueue(message("{}"));
        broker.fetch(List.of(queue), "busy", 1, Duration.ofMillis(50));
        broker.fetch(List.of(queue), "idle", 1, Duration.ofMillis(50));
        assertEquals(2, broker.stats(queue).consumers());
        Thread.sleep(150);

        assertEquals(0, broker.removeIdleConsumers(queue, "busy", Duration.ofMinutes(1)), "not idle long enough");
        assertEquals(1, broker.removeIdleConsumers(queue, "busy", Duration.ofMillis(100)));
        assertEquals(1, broker.stats(queue).consumers());
    }

    @Test
    void fetchAcrossQueuesIsOneReadThatServesEveryQueue() throws Exception {
        String other = oneMessageOnEachOfTwoQueues();

        Set<String> queues = new HashSet<>();
        broker.fetch(List.of(queue, other), "c1", 10, Duration.ofMillis(200)).forEach(d -> queues.add(d.queue()));

        assertEquals(Set.of(queue, other), queues);
    }

    @Test
    void bulkEnqueueThatRedisRefusesFailsLoudlyInsteadOfLosingMessages() {
        // Redis refuses every XADD to a key of the wrong type, as it refuses writes when out of memory.
        String refused = "refused-" + queue;
        redis.call("SET", "binomic:{" + refused + "}:stream", "not a stream");
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            batch.add(message(refused, "{}"));
        }

        var e = assertThrows(BrokerException.class, () -> broker.enqueueAll(batch));
        assertTrue(e.getMessage().contains("WRONGTYPE"), e.getMessage());
    }
}

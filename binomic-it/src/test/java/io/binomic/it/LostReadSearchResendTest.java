package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.PendingDeliveries;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The reads of a worker's search for lost reads, and the read of a queue's levels its reclaim makes,
 * are sent again as soon as Redis answers on another connection: one connection that does not answer
 * (a reply a reset cut off, which Redisson neither gets nor fails until its command timeout) must not
 * hold the search until then. The search runs on the reclaim's thread, so a search held past the lease
 * leaves lost reads to the reclaim, which runs them as their next attempt ({@link NetworkFaultIT}).
 *
 * <p>A {@link FaultProxy} holds the reply to one read for longer than the command timeout, and the
 * call must return well within that timeout, with its right answer.
 */
class LostReadSearchResendTest {
    /** Longer than any wait here: a read that waits for it fails the bound. */
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration REPLY_HELD = Duration.ofSeconds(12);
    /** What must never happen: the call held this long by one unanswered read (it is sent again after about 1 s). */
    private static final Duration HELD_AT_MOST = Duration.ofSeconds(4);

    private final RedisServer redis = RedisServer.shared();
    private final String queue = "lost-search-" + UUID.randomUUID().toString().substring(0, 8);
    private final String consumer = "searcher-" + UUID.randomUUID().toString().substring(0, 8);
    private final String stream = "binomic:{" + queue + "}:stream";

    /**
     * {@code pendingOf} with its XPENDING script's reply held, {@code pendingOf} and {@code reclaim} with
     * their read of the queue's levels held (the first request naming the stream key followed by the
     * script's one-character argument: the other scripts give the group's name next).
     */
    @ParameterizedTest
    @ValueSource(strings = {"pendingOf:pending", "pendingOf:levels", "reclaim:levels"})
    void aReadOfTheSearchOrTheReclaimIsSentAgainRatherThanHeldByAConnectionThatDoesNotAnswer(String call) throws Exception {
        List<Delivery> fetched = pendingUnderTheConsumer(3);
        FaultProxy proxy = FaultProxy.to(redis.host(), redis.port(), Duration.ofMinutes(1));
        Broker broker = null;
        try {
            broker = Brokers.redisProvider().create(BrokerConfig.builder().url("redis://127.0.0.1:" + proxy.port())
                    .commandTimeout(COMMAND_TIMEOUT).build());
            broker.start(List.of(queue));
            proxy.holdReplyToNext(call.endsWith(":pending") ? consumer : stream + "\r\n$1\r\n", REPLY_HELD);
            Broker b = broker;
            CompletableFuture<List<Delivery>> reply = CompletableFuture.supplyAsync(() -> call.startsWith("pendingOf")
                    ? b.capability(PendingDeliveries.class).orElseThrow().pendingOf(queue, consumer, 100)
                    : b.reclaim(queue, consumer, Duration.ofHours(1), 100));
            List<Delivery> got;
            try {
                got = reply.get(HELD_AT_MOST.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                fail(call + " was held more than " + HELD_AT_MOST.toMillis() + " ms by one read whose reply did not come (the command"
                        + " timeout is " + COMMAND_TIMEOUT.toMillis() + " ms): it was not sent again");
                return;
            }
            assertFalse(proxy.replyHoldWaiting(), call + " sent the read whose reply is held");
            List<String> expected = call.startsWith("pendingOf") ? fetched.stream().map(Delivery::receipt).toList() : List.of();
            assertEquals(expected, got.stream().map(Delivery::receipt).toList(),
                    "the answer of the read sent again: the deliveries pending under the consumer, none idle for an hour");
        } finally {
            proxy.releaseHeldReplies(); // the broker's close waits for every try it sent, the one held too
            if (broker != null) {
                broker.close();
            }
            proxy.close();
        }
    }

    /** {@code n} deliveries fetched as {@link #consumer} over a direct connection, pending under it. */
    private List<Delivery> pendingUnderTheConsumer(int n) throws InterruptedException {
        try (Broker direct = Brokers.redis(redis)) {
            direct.start(List.of(queue));
            direct.enqueueAll(IntStream.range(0, n).mapToObj(i -> Message.fromWire(UUID.randomUUID(), "t", queue, 1,
                    Instant.now().truncatedTo(ChronoUnit.MILLIS), "{}".getBytes(StandardCharsets.UTF_8), Map.of())).toList());
            List<Delivery> fetched = direct.fetch(List.of(queue), consumer, n, Duration.ofMillis(200));
            assertEquals(n, fetched.size(), "fetched: " + fetched);
            return fetched;
        }
    }
}

package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A fetch over several empty queues with fewer free slots than queues waits for an entry on any of them, not on one
 * queue at a time: a job that arrives during the wait on a queue the read did not happen to wait on (a waiter that a
 * release of its queue's concurrency slot moved back to the stream) is handed out by that fetch, not left with the slot
 * free until the wait ends. And it never hands out more than it was asked for, even when entries land on several
 * queues as it begins.
 */
class BlockingReadOverSeveralQueuesTest {
    private static final Duration WAIT = Duration.ofSeconds(6);

    @Test
    void aJobArrivingOnAnyQueueEndsTheWait() throws Exception {
        try (RedisServer redis = RedisServer.startNew()) {
            Broker broker = Brokers.redis(redis);
            List<String> queues = List.of("several-a", "several-b", "several-c");
            try {
                broker.start(queues);
                // each fetch starts its round at the next queue: the job arrives on the queue it starts at, on the one
                // after it, and on the last, three times each
                for (int round = 0; round < 3 * queues.size(); round++) {
                    String on = queues.get((round + round / queues.size()) % queues.size());
                    CompletableFuture<List<Delivery>> fetch = new CompletableFuture<>();
                    Thread.ofPlatform().daemon().start(() -> {
                        try {
                            fetch.complete(broker.fetch(queues, "c1", 1, WAIT));
                        } catch (Throwable e) {
                            fetch.completeExceptionally(e);
                        }
                    });
                    Thread.sleep(300); // the non-blocking reads found every queue empty; the fetch waits
                    broker.enqueue(message(on));
                    List<Delivery> got = fetch.get(30, TimeUnit.SECONDS);
                    assertEquals(1, got.size(), "round " + round + ": the job on '" + on + "' was not handed out by the fetch "
                            + "that waited while it arrived: " + got);
                    assertEquals(on, got.getFirst().queue());
                    broker.settle("c1", List.of(new io.binomic.api.spi.Settlement.Ack(got.getFirst())));
                }
            } finally {
                broker.close();
            }
        }
    }

    @Test
    void entriesOnSeveralQueuesAsTheWaitBeginsAreHandedOutNoMoreThanAsked() throws Exception {
        try (RedisServer redis = RedisServer.startNew()) {
            Broker broker = Brokers.redis(redis);
            List<String> queues = List.of("burst-a", "burst-b", "burst-c");
            try {
                broker.start(queues);
                List<Delivery> all = new ArrayList<>();
                for (int round = 0; round < 20; round++) {
                    CompletableFuture<List<Delivery>> fetch = new CompletableFuture<>();
                    Thread.ofPlatform().daemon().start(() -> {
                        try {
                            fetch.complete(broker.fetch(queues, "c1", 1, WAIT));
                        } catch (Throwable e) {
                            fetch.completeExceptionally(e);
                        }
                    });
                    // lands on every queue about when the fetch turns from its reads to its wait
                    Thread.sleep(round % 4);
                    for (String q : queues) {
                        broker.enqueue(message(q));
                    }
                    List<Delivery> got = fetch.get(30, TimeUnit.SECONDS);
                    assertEquals(1, got.size(), "round " + round + ": handed out " + got);
                    all.addAll(got);
                    // the rest, read one at a time: every entry is handed out once, nothing is lost
                    for (int left = queues.size() - 1; left > 0; ) {
                        List<Delivery> more = broker.fetch(queues, "c1", 1, Duration.ofMillis(500));
                        all.addAll(more);
                        left -= more.size();
                    }
                }
                assertEquals(20 * queues.size(), all.stream().map(d -> d.message().orElseThrow().id()).distinct().count(), "each job handed out once");
                assertEquals(20 * queues.size(), all.size(), "no job handed out twice");
            } finally {
                broker.close();
            }
        }
    }

    private static Message message(String queue) {
        return Message.fromWire(UUID.randomUUID(), "t", queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                "x".getBytes(StandardCharsets.UTF_8), Map.of());
    }
}

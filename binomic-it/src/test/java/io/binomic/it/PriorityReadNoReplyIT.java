package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerException;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A blocking read over a queue's priority levels that Redis never answers (the server frozen with SIGSTOP under it)
 * fails, as the read of a queue without levels does ({@link IdleWorkerHealthOnShutdownIT}): the Redis client ends it
 * itself 3 s past its wait with nothing read, and returned empty it would pass for a fetch that worked, ending the
 * worker's account of the outage.
 */
class PriorityReadNoReplyIT {
    private static final Duration WAIT = Duration.ofSeconds(3);

    @Test
    void aBlockingReadOverPriorityLevelsThatRedisNeverAnswersFails() throws Exception {
        try (RedisServer redis = RedisServer.startNew()) {
            Broker broker = Brokers.redis(redis);
            String queue = "levels";
            try {
                broker.start(List.of(queue));
                broker.enqueue(message(queue, 9));
                broker.enqueue(message(queue, 1));
                List<Delivery> both = broker.fetch(List.of(queue), "c1", 10, Duration.ofMillis(200));
                assertEquals(2, both.size(), "both levels read");

                CompletableFuture<List<Delivery>> blocking = new CompletableFuture<>();
                Thread.ofPlatform().daemon().start(() -> {
                    try {
                        blocking.complete(broker.fetch(List.of(queue), "c1", 10, WAIT));
                    } catch (Throwable e) {
                        blocking.completeExceptionally(e);
                    }
                });
                Thread.sleep(1000); // the levels' scripts answered; the blocking read over them waits
                redis.freeze();
                try {
                    ExecutionException failed = assertThrows(ExecutionException.class, () -> blocking.get(60, TimeUnit.SECONDS),
                            () -> "the read Redis never answered returned " + blocking.getNow(null));
                    assertInstanceOf(BrokerException.class, failed.getCause());
                    assertTrue(failed.getCause().getMessage().contains("did not answer a read"), failed.getCause().getMessage());
                } finally {
                    redis.thaw();
                }
            } finally {
                broker.close();
            }
        }
    }

    private static Message message(String queue, int priority) {
        return Message.fromWire(UUID.randomUUID(), "t", queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                "x".getBytes(StandardCharsets.UTF_8), Map.of(Message.PRIORITY, Integer.toString(priority)));
    }
}

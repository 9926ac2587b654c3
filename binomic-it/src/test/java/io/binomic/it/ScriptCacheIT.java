package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Redisson remembers, for the whole JVM and by address, which scripts it loaded, and then sends a
 * pipelined script by SHA alone. A server that restarted on the same host and port has none of them;
 * a broker started against it must still settle on its first try.
 */
class ScriptCacheIT {
    private final RedisServer redis = RedisServer.startNew();
    private final String queue = "scripts-" + UUID.randomUUID().toString().substring(0, 8);

    @AfterEach
    void stop() {
        redis.close();
    }

    @Test
    void aBrokerStartedAfterRedisRestartedOnTheSamePortSettlesOnItsFirstTry() throws Exception {
        enqueueFetchAndAck("before the restart");

        redis.call("SCRIPT", "FLUSH"); // what a restart without persistence leaves: the data may stay, the scripts do not
        redis.stop();
        redis.start();
        assertEquals(0L, ((List<?>) redis.call("SCRIPT", "EXISTS", "0000000000000000000000000000000000000000")).getFirst());

        enqueueFetchAndAck("after the restart");
    }

    private void enqueueFetchAndAck(String when) throws InterruptedException {
        try (Broker broker = Brokers.redis(redis)) {
            broker.start(List.of(queue));
            broker.enqueue(Message.fromWire(UUID.randomUUID(), "t", queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                    "{}".getBytes(StandardCharsets.UTF_8), Map.of()));
            List<Delivery> got = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (got.isEmpty() && System.nanoTime() < deadline) {
                got.addAll(broker.fetch(List.of(queue), "c1", 10, Duration.ofMillis(200)));
            }
            assertEquals(1, got.size(), when);
            assertEquals(List.of(), broker.settle("c1", List.of(new Settlement.Ack(got.getFirst()))).notApplied(), when);
        }
    }
}

package io.binomic.it.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.BrokerProvider;
import io.binomic.api.spi.Delivery;
import io.binomic.it.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.ServiceLoader;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** {@code binomic job submit --priority} as an operator types it, against real Redis. */
class PriorityCliOnRedisTest {
    private final RedisServer redis = RedisServer.shared();
    private final String queue = "priocli-" + UUID.randomUUID().toString().substring(0, 8);

    @Test
    void aJobSubmittedWithAHigherPriorityIsFetchedBeforeEarlierOnes() throws Exception {
        CliRun plain = CliRun.of("job", "submit", "--broker", redis.url(), "--task", "greet", "--queue", queue, "--json", "{}",
                "--create");
        CliRun urgent = CliRun.of("job", "submit", "--broker", redis.url(), "--task", "greet", "--queue", queue, "--json", "{}",
                "--priority", "9", "--create");
        assertEquals(0, plain.exit(), plain.toString());
        assertEquals(0, urgent.exit(), urgent.toString());

        BrokerProvider redisProvider = ServiceLoader.load(BrokerProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(p -> p.id().equals("redis")).findFirst().orElseThrow();
        try (Broker broker = redisProvider.create(BrokerConfig.builder().url(redis.url()).build())) {
            broker.start(List.of(queue));
            List<Delivery> got = broker.fetch(List.of(queue), "c1", 2, Duration.ofSeconds(1));
            assertEquals(List.of(UUID.fromString(urgent.out().strip()), UUID.fromString(plain.out().strip())),
                    got.stream().map(d -> d.message().orElseThrow().id()).toList(), "the urgent job first");
            assertEquals(9, got.getFirst().message().orElseThrow().priority());
        }
    }

    @Test
    void aPriorityOutOfRangeIsAUsageErrorThatNamesTheRange() {
        CliRun run = CliRun.of("job", "submit", "--broker", redis.url(), "--task", "greet", "--queue", queue, "--priority", "10");

        assertEquals(2, run.exit(), run.toString());
        assertTrue(run.err().contains("--priority must be from 0 (lowest) to 9 (highest), was 10"), run.toString());
    }
}

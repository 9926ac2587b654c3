package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.BrokerProvider;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.SchedulerContractTest;
import java.util.List;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/** The scheduler contract every implementation must pass, run against a real Redis: delayed sets and tick claims. */
class RedisSchedulerContractTest extends SchedulerContractTest {

    @Override
    protected Broker createBroker() {
        return Brokers.redis(RedisServer.shared());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }

    /** Redis judges due times by its own {@code TIME}: the tests wait for it. */
    @Override
    protected boolean judgesDueTimesByCallersClock() {
        return false;
    }

    /** A retry is stored by the broker's settle in its delayed set: a scheduler over another broker's storage would never see it. */
    @Test
    void theRedisSchedulerServesOnlyARedisBroker() {
        BrokerProvider memoryProvider = ServiceLoader.load(BrokerProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(p -> p.id().equals("memory")).findFirst().orElseThrow();
        try (Broker memory = memoryProvider.create(BrokerConfig.defaults())) {
            memory.start(List.of());
            var e = assertThrows(IllegalArgumentException.class, () -> Brokers.scheduler(memory));
            assertTrue(e.getMessage().startsWith("the redis scheduler keeps its deferred messages in the store of a"
                    + " io.binomic.redis.internal.RedisBroker, so it cannot serve the broker "),
                    e.getMessage());
        }
    }
}

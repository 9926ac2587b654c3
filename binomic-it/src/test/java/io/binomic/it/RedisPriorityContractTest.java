package io.binomic.it;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.PriorityContractTest;
import java.util.Map;

/** The priority contract, run against a real Redis. */
class RedisPriorityContractTest extends PriorityContractTest {

    @Override
    protected Broker createBroker(Map<String, String> options) {
        return Brokers.redis(RedisServer.shared(), b -> b.options(options));
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }
}

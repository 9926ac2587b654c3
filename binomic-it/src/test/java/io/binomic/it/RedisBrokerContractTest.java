package io.binomic.it;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.BrokerContractTest;

/** The broker contract every implementation must pass, run against a real Redis. */
class RedisBrokerContractTest extends BrokerContractTest {

    @Override
    protected Broker createBroker() {
        return Brokers.redis(RedisServer.shared());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }
}

package io.binomic.it;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.JobStoreContractTest;

/** The job-record contract, run against a real Redis. */
class RedisJobStoreContractTest extends JobStoreContractTest {

    @Override
    protected Broker createBroker() {
        return Brokers.redis(RedisServer.shared());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }
}

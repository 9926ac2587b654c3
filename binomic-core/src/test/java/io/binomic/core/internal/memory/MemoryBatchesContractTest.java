package io.binomic.core.internal.memory;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.BatchesContractTest;

class MemoryBatchesContractTest extends BatchesContractTest {
    @Override
    protected Broker createBroker() {
        return new MemoryBroker(BrokerConfig.defaults());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return new MemorySchedulerProvider().create(started);
    }
}

package io.binomic.core.internal.memory;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.WorkflowsContractTest;

class MemoryWorkflowsContractTest extends WorkflowsContractTest {
    @Override
    protected Broker createBroker() {
        return new MemoryBroker(BrokerConfig.defaults());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return new MemorySchedulerProvider().create(started);
    }
}

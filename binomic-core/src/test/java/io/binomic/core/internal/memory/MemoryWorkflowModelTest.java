package io.binomic.core.internal.memory;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.WorkflowModelProperties;

/** The model-based test of workflow bookkeeping on the memory broker. */
class MemoryWorkflowModelTest extends WorkflowModelProperties {
    @Override
    protected Broker createBroker() {
        return new MemoryBroker(BrokerConfig.defaults());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return new MemorySchedulerProvider().create(started);
    }
}

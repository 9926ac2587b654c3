package io.binomic.core.internal.memory;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.Workflows;
import io.binomic.core.BrokerCapabilities;
import io.binomic.core.WorkflowsContractTest;
import java.util.UUID;

class MemoryWorkflowsContractTest extends WorkflowsContractTest {
    @Override
    protected Broker createBroker() {
        return new MemoryBroker(BrokerConfig.defaults());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return new MemorySchedulerProvider().create(started);
    }

    @Override
    protected boolean readsDependencyCounts() {
        return true;
    }

    @Override
    protected int[] dependencyCounts(UUID workflow, String name) {
        return ((MemoryWorkflows) BrokerCapabilities.of(broker, Workflows.class)).dependencyCounts(workflow, name);
    }
}

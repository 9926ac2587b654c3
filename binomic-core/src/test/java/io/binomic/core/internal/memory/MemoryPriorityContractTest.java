package io.binomic.core.internal.memory;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.PriorityContractTest;
import java.util.Map;

class MemoryPriorityContractTest extends PriorityContractTest {
    @Override
    protected Broker createBroker(Map<String, String> options) {
        return new MemoryBroker(BrokerConfig.defaults().toBuilder().options(options).build());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return new MemorySchedulerProvider().create(started);
    }
}

package io.binomic.core.internal.memory;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.BrokerModelProperties;

/** The model-based test on {@code memory://}, so the embedded broker cannot drift from Redis. */
class MemoryBrokerModelTest extends BrokerModelProperties {
    @Override
    protected Broker createBroker() {
        return new MemoryBroker(BrokerConfig.defaults());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return new MemorySchedulerProvider().create(started);
    }

    @Override
    protected int examples() {
        return 300;
    }
}

package io.binomic.core.internal.memory;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SchedulerProvider;
import java.util.Set;

/** Provides the in-JVM {@link MemoryScheduler} of a {@code memory://} broker. */
public final class MemorySchedulerProvider implements SchedulerProvider {
    @Override
    public String id() { return "memory"; }

    @Override
    public Set<String> schemes() { return Set.of("memory"); }

    @Override
    public Class<MemoryBroker> brokerType() { return MemoryBroker.class; }

    @Override
    public Scheduler create(Broker broker) { return new MemoryScheduler((MemoryBroker) broker); }
}

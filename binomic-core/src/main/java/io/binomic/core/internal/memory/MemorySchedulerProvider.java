package io.binomic.core.internal.memory;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SchedulerProvider;
import java.util.Set;

/** Provides the in-JVM {@link MemoryScheduler} of a {@code memory://} broker. */
public final class MemorySchedulerProvider implements SchedulerProvider {
    @Override
    public String id() {
        return "memory";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("memory");
    }

    @Override
    public Scheduler create(Broker broker) {
        if (broker instanceof MemoryBroker memory) {
            return new MemoryScheduler(memory);
        }
        throw new IllegalArgumentException("the memory scheduler keeps its messages in the memory broker's own store, so it"
                + " serves only a MemoryBroker, not " + broker.getClass().getName() + ": use the scheduler provider of that"
                + " broker's kind, or give Binomic.Builder.scheduler(...) the scheduler that belongs with it");
    }
}

package io.binomic.core.internal.memory;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.BrokerProvider;
import java.util.Optional;
import java.util.Set;

/** Provides the embedded in-memory broker for {@code memory://}. */
public final class MemoryBrokerProvider implements BrokerProvider {
    @Override
    public String id() { return "memory"; }

    @Override
    public Set<String> schemes() { return Set.of("memory"); }

    @Override
    public Broker create(BrokerConfig config) { return new MemoryBroker(config); }

    /** None of its own: the options every broker reads only. */
    @Override
    public Optional<Set<String>> optionNames() { return Optional.of(Set.of()); }
}

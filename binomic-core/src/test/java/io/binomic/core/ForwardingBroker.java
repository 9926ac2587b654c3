package io.binomic.core;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.internal.memory.MemorySchedulerProvider;
import java.util.Optional;

/**
 * The shared forwarding broker (binomic-test-support, which needs no module but the API) with what only core's tests
 * use, as it needs the core's memory scheduler: {@link #scheduler()}. It offers none of the delegate's other SPI
 * capabilities (partitions, flow limits, batches, ...), whose calls would bypass the overrides of a test; a test
 * that needs one offers it itself.
 */
// Its superclass is on the tests' class path, not in a module: javac's exports lint would fail the build (-Werror).
@SuppressWarnings("exports")
public class ForwardingBroker extends io.binomic.testsupport.ForwardingBroker {

    public ForwardingBroker(Broker delegate) {
        super(delegate);
    }

    /**
     * The scheduler of the memory broker this one forwards to, for {@link Binomic.Builder#scheduler}: a
     * scheduler shares its broker's store, and the memory scheduler serves only the memory broker itself.
     */
    public Scheduler scheduler() {
        return delegate instanceof ForwardingBroker forwarding ? forwarding.scheduler() : new MemorySchedulerProvider().create(delegate);
    }

    /** A type of the delegate's own (what a scheduler provider asks for) is the delegate's; no other SPI capability is offered. */
    @Override
    protected <T> Optional<T> otherCapability(Class<T> type) {
        return type.getPackage() == Broker.class.getPackage() ? Optional.empty() : delegate.capability(type);
    }
}

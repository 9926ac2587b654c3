package io.binomic.api.spi;

import java.util.Set;

/**
 * Creates {@link Scheduler}s; found with {@link java.util.ServiceLoader} and selected like
 * {@link BrokerProvider}s: by the broker's id when one is configured, otherwise by the broker
 * URL's scheme.
 */
public interface SchedulerProvider {

    /** A short unique id, the id of the {@link BrokerProvider} whose brokers it serves ({@code memory}, {@code redis}). */
    String id();

    /** URL schemes this provider serves, lower case, the same as its broker provider's. */
    Set<String> schemes();

    /**
     * The scheduler of {@code broker}, which is started. A scheduler shares its broker's storage
     * (a retry is scheduled atomically with the ack, inside the broker's settle), so a provider
     * accepts only the brokers of its own kind.
     *
     * @throws IllegalArgumentException when {@code broker} is not a broker this provider's scheduler can share storage with
     */
    Scheduler create(Broker broker);
}

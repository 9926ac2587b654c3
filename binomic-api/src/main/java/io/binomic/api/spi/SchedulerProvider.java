package io.binomic.api.spi;

import java.util.ServiceLoader;
import java.util.Set;

/**
 * Creates {@link Scheduler}s; found with {@link ServiceLoader} and selected like
 * {@link BrokerProvider}s: by the broker's id when one is configured, otherwise by the broker
 * URL's scheme.
 */
public interface SchedulerProvider {

    /** A short unique id, the id of the {@link BrokerProvider} whose brokers it serves ({@code memory}, {@code redis}). */
    String id();

    /** URL schemes this provider serves, lower case, the same as its broker provider's. */
    Set<String> schemes();

    /**
     * The kind of broker whose storage this provider's scheduler shares (a retry is scheduled
     * atomically with the ack, inside the broker's settle): the core creates a scheduler only for a
     * broker that is, or offers as its {@linkplain Broker#capability capability}, this type, and
     * refuses any other broker with a message naming both.
     */
    Class<? extends Broker> brokerType();

    /**
     * The scheduler of {@code broker}, which is started and is an instance of {@link #brokerType()}
     * (the core checks it before calling).
     */
    Scheduler create(Broker broker);
}

package io.binomic.api.spi;

import io.binomic.api.BrokerConfig;
import java.util.ServiceLoader;
import java.util.Set;

/** Creates {@link Broker}s; found with {@link ServiceLoader}. */
public interface BrokerProvider {

    /** A short unique id such as {@code memory} or {@code redis}. */
    String id();

    /** URL schemes this provider serves, lower case, e.g. {@code redis} and {@code rediss}. */
    Set<String> schemes();

    /** A new, not yet started broker for {@code config}. */
    Broker create(BrokerConfig config);
}

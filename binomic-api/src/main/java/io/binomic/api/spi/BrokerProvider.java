package io.binomic.api.spi;

import io.binomic.api.BrokerConfig;
import java.util.Optional;
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

    /**
     * The names of the {@link BrokerConfig#options()} this provider reads, besides those every
     * broker reads ({@code priority.fairness}): an option of another name is then refused before the
     * broker is created, naming the closest one, so that a mistyped option is not silently ignored.
     * Empty (the default) when the provider does not say; its options are then not checked.
     */
    default Optional<Set<String>> optionNames() { return Optional.empty(); }
}

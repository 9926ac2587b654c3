package io.binomic.spring.boot.autoconfigure;

import io.binomic.core.Binomic;

/**
 * Changes the auto-configured client's builder before it is built: a codec or broker instance, a
 * clock, a trace-context provider. Beans of this type are applied in their {@code @Order}.
 */
@FunctionalInterface
public interface BinomicBuilderCustomizer {

    /** Customizes {@code builder}, which holds the configuration and the handlers already. */
    void customize(Binomic.Builder builder);
}

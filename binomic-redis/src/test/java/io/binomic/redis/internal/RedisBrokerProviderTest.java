package io.binomic.redis.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Locale;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The broker options Redis reads, as the settings file and the environment can spell them. */
class RedisBrokerProviderTest {

    /**
     * {@code BINOMIC_BROKER_OPTION_<NAME>} becomes the option {@code <name>} lower-cased with every
     * {@code _} read as {@code .}, so a name with an upper-case letter or another separator could
     * be set in code and in a settings file but never from the environment.
     */
    @Test
    void everyOptionCanBeSetFromAnEnvironmentVariable() {
        Set<String> names = new RedisBrokerProvider().optionNames().orElseThrow();
        assertTrue(names.contains("tls.truststore.password"), names::toString);
        for (String name : names) {
            String variable = "BINOMIC_BROKER_OPTION_" + name.toUpperCase(Locale.ROOT).replace('.', '_');
            String read = variable.substring("BINOMIC_BROKER_OPTION_".length()).toLowerCase(Locale.ROOT).replace('_', '.');
            assertTrue(read.equals(name), () -> "option '" + name + "' cannot be set from the environment: " + variable + " reads as '" + read + "'");
        }
    }
}

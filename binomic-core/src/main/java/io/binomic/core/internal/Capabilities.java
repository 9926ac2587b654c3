package io.binomic.core.internal;

import io.binomic.api.spi.Broker;

/** How the core names a {@linkplain Broker#capability capability} a broker does not have. */
public final class Capabilities {

    private Capabilities() {
    }

    /** "the broker MemoryBroker[memory://] (io.binomic...MemoryBroker) has no FlowLimits capability: {@code consequence}". */
    public static String missing(Broker broker, Class<?> capability, String consequence) {
        return "the broker " + broker + " (" + broker.getClass().getName() + ") has no " + capability.getSimpleName()
                + " capability: " + consequence;
    }

    /**
     * The capability {@code type} of {@code broker}, for a call that cannot do without it.
     *
     * @throws UnsupportedOperationException naming the capability and the broker, when it has none
     */
    public static <T> T require(Broker broker, Class<T> type, String consequence) {
        return broker.capability(type).orElseThrow(() -> new UnsupportedOperationException(missing(broker, type, consequence)));
    }
}

package io.binomic.core.internal.web;

import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Workflows;
import io.binomic.core.Binomic;
import io.binomic.core.internal.CoreAccess;

/**
 * Whether a started client's broker keeps batches and workflows, asked of the broker's declared
 * capabilities without a broker call: a meter binder registers their gauges when it binds, so the
 * first scrape already has them.
 */
public final class FlowCapabilities {
    private FlowCapabilities() { }

    /** True when {@code binomic} is started and its broker has batches. */
    public static boolean batches(Binomic binomic) { return has(binomic, Batches.class); }

    /** True when {@code binomic} is started and its broker has workflows. */
    public static boolean workflows(Binomic binomic) { return has(binomic, Workflows.class); }

    private static boolean has(Binomic binomic, Class<?> capability) {
        try {
            return CoreAccess.get().broker(binomic).capability(capability).isPresent();
        } catch (IllegalStateException notStarted) {
            // Not started (or closed): the first reading that finds them binds them.
            return false;
        }
    }
}

package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * For a test class on the shared Redis Cluster: no command of the whole class was refused with
 * {@code CROSSSLOT} (counted in {@code INFO errorstats} of every node before and after).
 */
final class NoCrossSlotErrors implements BeforeAllCallback, AfterAllCallback {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(NoCrossSlotErrors.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getStore(NAMESPACE).put("before", RedisClusterSet.shared().errors("CROSSSLOT"));
    }

    @Override
    public void afterAll(ExtensionContext context) {
        long before = context.getStore(NAMESPACE).get("before", Long.class);
        assertEquals(before, RedisClusterSet.shared().errors("CROSSSLOT"), "CROSSSLOT errors on the cluster");
    }
}

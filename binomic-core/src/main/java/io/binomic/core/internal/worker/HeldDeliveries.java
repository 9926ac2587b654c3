package io.binomic.core.internal.worker;

import io.binomic.api.spi.Delivery;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every delivery a worker holds, running or finished and not yet settled, by receipt: the leases
 * it renews. Separate from the running ones, because a delivery stays held after its handler ends,
 * until its outcome is written.
 */
final class HeldDeliveries {
    private final Map<String, Delivery> byReceipt = new ConcurrentHashMap<>();

    void put(Delivery d) {
        byReceipt.put(d.receipt(), d);
    }

    Delivery get(String receipt) {
        return byReceipt.get(receipt);
    }

    /** The delivery held under {@code d}'s receipt, else {@code d}. */
    Delivery currentOf(Delivery d) {
        return byReceipt.getOrDefault(d.receipt(), d);
    }

    void remove(String receipt) {
        byReceipt.remove(receipt);
    }

    boolean contains(String receipt) {
        return byReceipt.containsKey(receipt);
    }

    /** Replaces the delivery held under {@code d}'s receipt by {@code d}; false when none is held. */
    boolean replaceIfHeld(Delivery d) {
        return byReceipt.computeIfPresent(d.receipt(), (receipt, before) -> d) != null;
    }

    boolean isEmpty() {
        return byReceipt.isEmpty();
    }

    List<Delivery> snapshot() {
        return List.copyOf(byReceipt.values());
    }
}

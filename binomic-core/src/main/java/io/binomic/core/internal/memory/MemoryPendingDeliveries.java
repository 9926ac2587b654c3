package io.binomic.core.internal.memory;

import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.PendingDeliveries;
import java.util.List;

/** What a consumer of the memory broker holds, read under its lock without counting a delivery. */
final class MemoryPendingDeliveries implements PendingDeliveries {

    private final MemoryState state;

    MemoryPendingDeliveries(MemoryState state) {
        this.state = state;
    }

    @Override
    public List<Delivery> pendingOf(String name, String consumer, int max) {
        return state.locked(() -> state.queue(name).pending.values().stream().filter(p -> p.owner.equals(consumer)).limit(max)
                .map(p -> p.delivery(name)).toList());
    }
}

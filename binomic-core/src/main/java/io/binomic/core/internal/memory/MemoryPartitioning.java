package io.binomic.core.internal.memory;

import io.binomic.api.spi.Partitioning;
import io.binomic.api.spi.QueuePartitions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** The partition counts of the memory broker's queues, under its lock; each partition is a queue of its own. */
final class MemoryPartitioning implements Partitioning {

    private final MemoryState state;
    private final Map<String, QueuePartitions> partitions = new HashMap<>();

    MemoryPartitioning(MemoryState state) {
        this.state = state;
    }

    @Override
    public Map<String, QueuePartitions> partitions(List<String> names) {
        return state.locked(() -> MemoryState.present(partitions, names));
    }

    @Override
    public void setPartitions(String queue, QueuePartitions set) {
        Objects.requireNonNull(set, "partitions must not be null");
        state.locked(() -> {
            MemoryState.setOrClear(partitions, queue, set, set.equals(QueuePartitions.ONE));
            set.all(queue).forEach(state::queue);
        });
    }
}

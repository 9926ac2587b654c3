package io.binomic.core.internal.worker;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The running workers of this JVM, whatever instance started them, so that a pause made here holds
 * for them when it returns: {@link #written} makes each worker that reads a paused queue read the
 * paused state again before it starts anything more. Workers in other processes learn of it at
 * their next read, at most {@value FlowGate#REFRESH_MILLIS} ms later.
 */
public final class LocalPauses {
    private static final Set<FlowGate> RUNNING = ConcurrentHashMap.newKeySet();

    private LocalPauses() { }

    static void add(FlowGate gate) { RUNNING.add(gate); }

    static void remove(FlowGate gate) { RUNNING.remove(gate); }

    /**
     * A pause of {@code task} of the {@code queues} (their partitions), or of the whole queues when
     * empty, was written to the broker: returns once no worker of this JVM starts what it pauses.
     */
    public static void written(List<String> queues, Optional<String> task) {
        RUNNING.forEach(gate -> gate.pauseWritten(queues, task));
    }
}

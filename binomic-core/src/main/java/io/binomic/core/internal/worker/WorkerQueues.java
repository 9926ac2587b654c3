package io.binomic.core.internal.worker;

import io.binomic.core.internal.PartitionRouter;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * The physical queues a worker reads: every partition of each queue it is configured with, read
 * again about once a second, so a partition added while it runs is read from then on. A partition
 * is never dropped while the worker runs: lowering a queue's count leaves its highest partitions
 * to be drained.
 */
final class WorkerQueues {
    private static final System.Logger LOG = System.getLogger(WorkerQueues.class.getName());

    private final PartitionRouter partitions;
    private final List<String> logicalQueues;
    private final String consumerName;
    private final Consumer<List<String>> onAdded;
    private volatile List<String> queues;
    private long partitionsReadNanos;

    /** @param onAdded told the partitions added by a refresh, after they are read */
    WorkerQueues(PartitionRouter partitions, List<String> logicalQueues, String consumerName, Consumer<List<String>> onAdded) {
        this.partitions = partitions;
        this.logicalQueues = List.copyOf(logicalQueues);
        this.consumerName = consumerName;
        this.onAdded = onAdded;
        this.queues = partitions.physical(this.logicalQueues);
        this.partitionsReadNanos = System.nanoTime();
    }

    List<String> all() { return queues; }

    List<String> logical() { return logicalQueues; }

    /** Reads the partitions again when a second has passed since the last read; called by the {@link Housekeeper} only. */
    void refresh() {
        long now = System.nanoTime();
        if (now - partitionsReadNanos < PartitionRouter.REFRESH_MILLIS * 1_000_000) {
            return;
        }
        partitionsReadNanos = now;
        List<String> was = queues;
        List<String> added = partitions.physical(logicalQueues).stream().filter(q -> !was.contains(q)).toList();
        if (added.isEmpty()) {
            return;
        }
        queues = Stream.concat(was.stream(), added.stream()).toList();
        LOG.log(Level.INFO, "worker {0}: now reads partitions {1} too", consumerName, added);
        onAdded.accept(added);
    }

    @Override
    public String toString() { return queues.toString(); }
}

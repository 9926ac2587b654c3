package io.binomic.api.spi;

import java.util.List;
import java.util.Map;

/**
 * A {@link Broker} capability: logical queues split into physical partitions. Without it every
 * queue is one physical queue and splitting one is refused.
 */
public interface Partitioning {

    /**
     * The partitions of each of {@code queues} (logical queues) that has been split with
     * {@link #setPartitions}, one round trip for all on Redis; an unpartitioned queue is left out.
     * Producers and workers read them at most every second.
     */
    Map<String, QueuePartitions> partitions(List<String> queues);

    /**
     * Stores the partitions of logical queue {@code queue}, durably (the core decides them: see
     * {@code Queues.setPartitions}), and prepares the physical queues of
     * {@link QueuePartitions#all} (streams, consumer groups). Every producer and worker applies
     * them at its next read (within about a second).
     */
    void setPartitions(String queue, QueuePartitions partitions);
}

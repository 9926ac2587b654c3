package io.binomic.api.spi;

import java.util.List;

/**
 * A {@link Broker} capability of a broker that can name the queues it holds. A process with no tasks of its own (an
 * admin tool, the CLI without the application's modules) knows no queue names otherwise, and could not say which
 * queue a mistyped name most likely meant.
 */
public interface QueueNames {

    /**
     * Up to {@code max} names of the queues the broker holds a stream of (written to, or read by a worker), sorted,
     * each partitioned queue once under its own name ({@link QueuePartitions#logical}).
     */
    List<String> queueNames(int max);
}

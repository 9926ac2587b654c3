package io.binomic.api.spi;

import java.util.List;
import java.util.stream.IntStream;

/**
 * How one logical queue is split into partitions: physical queues, each with its own hash tag, so
 * that on Redis Cluster one busy queue spreads over several masters. Partition 0 is the logical
 * queue itself (a queue of one partition is exactly an unpartitioned queue); partition {@code i > 0}
 * is the physical queue {@code queue@i}, a name no user queue can have ({@code @} is not allowed in
 * queue names). Producers write to partitions {@code 0..count-1}; workers read {@code 0..highest-1},
 * so partitions left behind when the count is lowered are drained, never stranded.
 *
 * @param count the partitions producers write to, 1 to {@value #MAX}
 * @param highest the highest count ever set: the partitions workers read ({@code >= count})
 */
public record QueuePartitions(int count, int highest) {
    /** The most partitions a queue may have. */
    public static final int MAX = 64;
    /** The separator between a logical queue's name and a partition's index in a physical queue's name. */
    public static final char SEPARATOR = '@';
    /** An unpartitioned queue. */
    public static final QueuePartitions ONE = new QueuePartitions(1, 1);

    public QueuePartitions {
        requireCount(count);
        if (highest < count || highest > MAX) {
            throw new IllegalArgumentException("highest partition count must be " + count + " to " + MAX + ", was " + highest);
        }
    }

    /**
     * Checks a partition count.
     *
     * @throws IllegalArgumentException when it is not 1 to {@value #MAX}
     */
    public static int requireCount(int count) {
        if (count < 1 || count > MAX) {
            throw new IllegalArgumentException("partition count must be 1 to " + MAX + ", was " + count
                    + "; give about one partition per Redis master (1 means not partitioned)");
        }
        return count;
    }

    /** The physical queue of partition {@code index} of {@code queue}: the queue itself for 0, else {@code queue@index}. */
    public static String physical(String queue, int index) {
        if (index < 0 || index >= MAX) {
            throw new IllegalArgumentException("partition index must be 0 to " + (MAX - 1) + ", was " + index);
        }
        return index == 0 ? queue : queue + SEPARATOR + index;
    }

    /** The logical queue of a physical queue: {@code q} for {@code q@3} and for {@code q}. */
    public static String logical(String physicalQueue) {
        int at = physicalQueue.lastIndexOf(SEPARATOR);
        return at < 0 ? physicalQueue : physicalQueue.substring(0, at);
    }

    /** The partition index of a physical queue: 3 for {@code q@3}, 0 for {@code q}. */
    public static int index(String physicalQueue) {
        int at = physicalQueue.lastIndexOf(SEPARATOR);
        return at < 0 ? 0 : Integer.parseInt(physicalQueue.substring(at + 1));
    }

    /** True when the queue is split (or was, and may still hold messages in its higher partitions). */
    public boolean partitioned() { return highest > 1; }

    /** The physical queues workers read: partitions {@code 0..highest-1} of {@code queue}. */
    public List<String> all(String queue) {
        return IntStream.range(0, highest).mapToObj(i -> physical(queue, i)).toList();
    }
}

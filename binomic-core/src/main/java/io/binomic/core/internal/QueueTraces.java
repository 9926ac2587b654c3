package io.binomic.core.internal;

import io.binomic.api.QueueStats;
import io.binomic.api.spi.Activity;
import io.binomic.api.spi.ActivityBucket;
import io.binomic.api.spi.Broker;
import io.binomic.core.Queues;
import java.time.Instant;

/**
 * Whether the broker holds anything of a queue. The broker cannot list its queues, so this is how the CLI
 * ({@code --create}) and {@link Queues#setLimits} tell a queue that exists from a mistyped name.
 */
public final class QueueTraces {
    private QueueTraces() { }

    /**
     * Whether the broker holds a job, consumer, consumer group, dead letter, pause, limit, partitioning or
     * recent activity of {@code queue}: a worker that stopped cleanly leaves no consumer, but its group.
     */
    public static boolean inBroker(Broker broker, Queues queues, String queue) {
        QueueStats s = queues.stats(queue);
        return s.ready() + s.pending() + s.delayed() + s.deadLetters() + s.consumers() > 0
                || broker.hasBeenRead(queue)
                || queues.isPaused(queue) || !queues.pausedTasks(queue).isEmpty() || !queues.limits(queue).isEmpty()
                || queues.partitions(queue).partitioned()
                || broker.capability(Activity.class)
                        .map(a -> !a.activity(queue, Instant.now().minus(ActivityBucket.KEPT)).isEmpty()).orElse(false);
    }
}

package io.binomic.core.internal;

import io.binomic.api.QueueStats;
import io.binomic.api.spi.Activity;
import io.binomic.api.spi.ActivityBucket;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.QueueNames;
import io.binomic.core.Queues;
import io.binomic.core.internal.cli.ClosestName;
import java.lang.System.Logger.Level;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Whether the broker holds anything of a queue, and which known queue a mistyped name most likely meant: how the
 * CLI ({@code --create}, its warnings) and {@link Queues#setLimits} tell a queue that exists from a mistyped name.
 */
public final class QueueTraces {
    private static final System.Logger LOG = System.getLogger(QueueTraces.class.getName());
    /** How many of the broker's queue names a suggestion looks through. */
    private static final int BROKER_NAMES = 10_000;

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

    /**
     * The known queue a mistyped {@code queue} most likely meant: the closest of {@code local} (the queues the process's
     * tasks and {@code worker.queues} name), else the closest of the queues the broker holds ({@link QueueNames}), which
     * is all a process without tasks (an admin tool, the CLI without the application's modules) has to go by. Empty when
     * none is close. The broker is asked only when no local name is close: naming its queues scans its keys.
     */
    public static Optional<String> likelyMeant(Broker broker, String queue, Collection<String> local) {
        Optional<String> closest = ClosestName.to(queue, local);
        if (closest.isPresent()) {
            return closest;
        }
        return ClosestName.to(queue, brokerQueues(broker).stream().filter(name -> !name.equals(queue)).toList());
    }

    /** The queues the broker names; none when it cannot, or fails to (a suggestion is not worth failing the call for). */
    private static List<String> brokerQueues(Broker broker) {
        try {
            return broker.capability(QueueNames.class).map(names -> names.queueNames(BROKER_NAMES)).orElse(List.of());
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "the broker did not name its queues: {0}", e.getMessage());
            return List.of();
        }
    }
}

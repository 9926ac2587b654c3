package io.binomic.core.internal.cli;

import io.binomic.api.QueueStats;
import io.binomic.api.spi.Activity;
import io.binomic.api.spi.ActivityBucket;
import io.binomic.core.Binomic;
import io.binomic.core.Queues;
import io.binomic.core.internal.CoreAccess;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Refuses a change to a queue nothing knows: a mistyped name ({@code queue pause nc-mian}) would
 * otherwise create keys of a new queue and report success while the real one runs on. The broker
 * cannot list its queues, so a queue counts as known when a task on the module path or the
 * {@code worker.queues} setting names it, or the broker holds anything of it.
 */
final class KnownQueues {
    static final Option CREATE = Option.flag("create",
            "use a queue nothing knows yet (no task, job, consumer, pause or limit of it); without it, one is refused as a typo");

    private KnownQueues() { }

    /** Returns when {@code --create} is given or {@code queue} is known; else says so, with the closest known name. */
    static void require(Arguments args, Command.Context cx, Binomic binomic, String queue) throws UsageException {
        if (args.has(CREATE.name())) {
            return;
        }
        Set<String> named = new LinkedHashSet<>(binomic.tasks().queues());
        named.addAll(cx.settings().get().worker().queues());
        if (named.contains(queue) || inBroker(binomic, queue)) {
            return;
        }
        String hint = ClosestName.hint(queue, named);
        throw new UsageException("queue '" + queue + "' is not known: no task on the module path or worker.queues setting names it,"
                + " and the broker holds no job, consumer, dead letter, pause, limit or recent activity of it"
                + (hint.isEmpty() ? "; check the name, or add --create for a new queue" : hint + " Else add --create for a new queue"));
    }

    private static boolean inBroker(Binomic binomic, String queue) {
        QueueStats s = binomic.queueStats(queue);
        Queues queues = binomic.queues();
        return s.ready() + s.pending() + s.delayed() + s.deadLetters() + s.consumers() > 0
                || queues.isPaused(queue) || !queues.pausedTasks(queue).isEmpty() || !queues.limits(queue).isEmpty()
                || queues.partitions(queue).partitioned()
                || CoreAccess.get().broker(binomic).capability(Activity.class)
                        .map(a -> !a.activity(queue, Instant.now().minus(ActivityBucket.KEPT)).isEmpty()).orElse(false);
    }
}

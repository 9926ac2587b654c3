package io.binomic.core.internal.worker;

import io.binomic.api.spi.SettledCleanup;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.core.internal.RepeatedErrorLog;
import io.binomic.core.internal.StatsRecorder;
import java.lang.System.Logger.Level;
import java.util.List;

/**
 * Takes over deliveries stranded by a worker that died or stalled (their lease lapsed), every
 * {@link WorkerConfig#reclaimInterval()}, and clears idle consumers and settled entries as it goes.
 * Run by the fetcher, which owns the free slots: stranded messages are taken before new ones, and
 * never beyond this worker's capacity.
 */
final class Reclaimer {
    private static final System.Logger LOG = System.getLogger(Reclaimer.class.getName());

    private final WorkerConfig config;
    private final String consumerName;
    private final Broker broker;
    private final StatsRecorder stats;
    private final Dispatcher dispatcher;
    private final Settler settler;
    private final FlowLimiter limiter;
    private long nextReclaimNanos = System.nanoTime();

    Reclaimer(WorkerContext context, Dispatcher dispatcher, Settler settler, FlowLimiter limiter) {
        this.config = context.config();
        this.consumerName = context.consumerName();
        this.broker = context.broker();
        this.stats = context.stats();
        this.dispatcher = dispatcher;
        this.settler = settler;
        this.limiter = limiter;
    }

    /** When a reclaim is due, takes over up to {@code free} stranded deliveries of {@code queues}; returns how many slots that used. */
    int reclaimIfDue(int free, List<String> queues) {
        if (free <= 0 || System.nanoTime() - nextReclaimNanos < 0) {
            return 0;
        }
        nextReclaimNanos = System.nanoTime() + config.reclaimInterval().toNanos();
        return reclaimStranded(Math.min(free, Fetcher.FETCH_BATCH), queues);
    }

    /** Takes over up to {@code free} stranded deliveries and runs them; returns how many slots that used. */
    private int reclaimStranded(int free, List<String> queues) {
        HeldDeliveries held = dispatcher.held();
        int taken = 0;
        for (String queue : queues) {
            if (taken == free) {
                break;
            }
            try {
                for (Delivery d : limiter.admit(broker.reclaim(queue, consumerName, config.leaseTimeout(), free - taken))) {
                    settler.reclaimed(d.receipt());
                    if (held.replaceIfHeld(d)) {
                        // Still ours in this JVM (running, or its outcome not yet written): our lease
                        // lapsed, so reclaim raised its count. Hold it at the new count; never run it twice.
                        LOG.log(Level.WARNING, "worker {0}: its lease on entry {1} of queue {2} had lapsed; took it back without running it again",
                                consumerName, d.receipt(), queue);
                        continue;
                    }
                    if (settler.forgetSettled(d.receipt())) {
                        // Read as pending just before this worker's own outcome for it was written: skip it
                        // once. Reclaimed again a lease later, the outcome did not stick (a failover lost
                        // it with the old primary): then it runs again, rather than staying pending forever.
                        continue;
                    }
                    LOG.log(Level.WARNING, "worker {0} reclaimed stranded entry {1} of queue {2} as attempt {3}",
                            consumerName, d.receipt(), queue, d.attempt());
                    stats.reclaimed(queue);
                    dispatcher.dispatch(d);
                    taken++;
                }
                broker.removeIdleConsumers(queue, config.leaseTimeout().multipliedBy(10));
                broker.capability(SettledCleanup.class).ifPresent(cleanup -> cleanup.removeSettled(queue));
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "worker {0}: reclaim on queue {1} failed: {2}", consumerName, queue,
                        RepeatedErrorLog.brief(e));
            }
        }
        return taken;
    }
}

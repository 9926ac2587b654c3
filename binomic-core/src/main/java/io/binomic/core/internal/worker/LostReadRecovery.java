package io.binomic.core.internal.worker;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.PendingDeliveries;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;

/**
 * Finds the deliveries a read handed to this worker whose reply it never received (a timeout
 * while Redis hung, a read the client retried): pending under its name, unknown to it. They never
 * ran, so they run with the attempt they were handed out as, instead of waiting out a lease and
 * spending an attempt in reclaim (a task of one attempt would be dead-lettered without having run).
 * Run by the fetcher, within its free slots.
 *
 * <p>A fetch that failed or was slow schedules two searches, a second apart. A reply lost to a
 * connection reset leaves no such trace: the client retries the read on a new connection at once,
 * and the fetch returns in time with other entries. So the worker also searches once every
 * {@link #period}: the reclaim interval, at most a quarter of the lease, so that a lost delivery is
 * found before its lease lapses and reclaim counts an attempt.
 */
final class LostReadRecovery {
    private static final System.Logger LOG = System.getLogger(LostReadRecovery.class.getName());

    private final String consumerName;
    private final Broker broker;
    private final Dispatcher dispatcher;
    private final Settler settler;
    private final long periodNanos;
    private int recoverRoundsLeft;
    private long nextRecoverNanos;
    private long nextPeriodicNanos;

    LostReadRecovery(WorkerContext context, Dispatcher dispatcher, Settler settler) {
        this.consumerName = context.consumerName();
        this.broker = context.broker();
        this.dispatcher = dispatcher;
        this.settler = settler;
        this.periodNanos = period(context.config().reclaimInterval(), context.config().leaseTimeout()).toNanos();
        this.nextPeriodicNanos = System.nanoTime() + periodNanos;
    }

    /** How often the worker searches without a sign of a lost read: the reclaim interval, at most a quarter of the lease. */
    static Duration period(Duration reclaimInterval, Duration leaseTimeout) {
        Duration quarter = leaseTimeout.dividedBy(4);
        return reclaimInterval.compareTo(quarter) < 0 ? reclaimInterval : quarter;
    }

    /**
     * A read whose reply was lost may still have handed entries to this consumer: once fetching
     * works, look for them, twice, a second apart.
     */
    void schedule() {
        recoverRoundsLeft = 2;
        nextRecoverNanos = System.nanoTime();
    }

    /** When a search is due, runs what it finds on up to {@code free} slots (holding the rest); returns how many slots that used. */
    int recoverIfDue(int free, List<String> queues) {
        if (free <= 0) {
            return 0;
        }
        long now = System.nanoTime();
        if (recoverRoundsLeft <= 0 && now - nextPeriodicNanos >= 0) {
            recoverRoundsLeft = 1;
            nextRecoverNanos = now;
        }
        if (recoverRoundsLeft <= 0 || now - nextRecoverNanos < 0) {
            return 0;
        }
        nextPeriodicNanos = now + periodNanos;
        return recoverOwn(free, queues);
    }

    /**
     * Runs (up to {@code free}, holding the rest) the deliveries pending under this consumer that it
     * does not know: handed out by a read whose reply was lost. Returns how many slots that used.
     */
    private int recoverOwn(int free, List<String> queues) {
        recoverRoundsLeft--;
        nextRecoverNanos = System.nanoTime() + Duration.ofSeconds(1).toNanos();
        HeldDeliveries held = dispatcher.held();
        int started = 0;
        boolean lookAgain = false;
        for (String queue : queues) {
            List<Delivery> pending;
            try {
                pending = broker.capability(PendingDeliveries.class).map(r -> r.pendingOf(queue, consumerName, Fetcher.FETCH_BATCH)).orElse(List.of());
            } catch (RuntimeException e) {
                // one broken queue must not keep the others' lost deliveries waiting a lease (and an attempt)
                LOG.log(Level.WARNING, "worker {0}: could not look for deliveries of queue {1} it never received: {2}",
                        consumerName, queue, e.getMessage());
                lookAgain = true;
                continue;
            }
            for (Delivery d : pending) {
                if (held.contains(d.receipt()) || settler.settledRecently(d.receipt()) || settler.gaveUp(d.receipt())) {
                    continue; // running, written, or left on purpose for reclaim (at its next delivery count)
                }
                LOG.log(Level.WARNING, "worker {0}: entry {1} of queue {2} was handed to it by a read whose reply was lost; running it now",
                        consumerName, d.receipt(), queue);
                if (started < free) {
                    dispatcher.dispatch(d);
                    started++;
                } else {
                    dispatcher.hold(d);
                }
            }
        }
        if (lookAgain) {
            recoverRoundsLeft++;
        }
        return started;
    }
}

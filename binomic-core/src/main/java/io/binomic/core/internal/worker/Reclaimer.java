package io.binomic.core.internal.worker;

import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.PendingDeliveries;
import io.binomic.api.spi.SettledCleanup;
import io.binomic.core.internal.RepeatedErrorLog;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Takes back the pending deliveries nobody runs, run by the fetcher, which owns the free slots:
 * they are taken before new ones, and never beyond this worker's capacity.
 *
 * <p>Reclaim takes over deliveries stranded by a worker that died or stalled (their lease lapsed),
 * every {@link WorkerConfig#reclaimInterval()}, and clears settled entries as it goes; it removes
 * the consumers of workers that stopped (see {@link #keepConsumersIfDue}).
 *
 * <p>The recovery of lost reads finds the deliveries a read handed to this worker whose reply it
 * never received (a timeout while Redis hung, a read the client retried): pending under its name,
 * unknown to it. They never ran, so they run with the attempt they were handed out as, instead of
 * waiting out a lease and spending an attempt in reclaim (a task of one attempt would be
 * dead-lettered without having run). A fetch that failed or was slow schedules two searches, a
 * second apart. A reply lost to a connection reset leaves no such trace: the client retries the
 * read on a new connection at once, and the fetch returns in time with other entries. So the worker
 * also searches once every {@link #period}: the reclaim interval, at most a quarter of the lease, so
 * that a lost delivery is found before its lease lapses and reclaim counts an attempt.
 */
final class Reclaimer {
    private static final System.Logger LOG = System.getLogger(Reclaimer.class.getName());
    /** How many lease timeouts a consumer's worker stays silent before its consumer is removed. */
    static final int IDLE_CONSUMER_LEASES = 10;

    private final WorkerContext context;
    private final WorkerConfig config;
    private final Dispatcher dispatcher;
    private final Settler settler;
    private final FlowLimiter limiter;
    private final long periodNanos;
    private long nextReclaimNanos = System.nanoTime();
    private int recoverRoundsLeft;
    private long nextRecoverNanos;
    private long nextPeriodicNanos;
    private long nextKeepNanos = System.nanoTime();

    Reclaimer(WorkerContext context, Dispatcher dispatcher, Settler settler, FlowLimiter limiter) {
        this.context = context;
        this.config = context.config();
        this.dispatcher = dispatcher;
        this.settler = settler;
        this.limiter = limiter;
        this.periodNanos = period(config.reclaimInterval(), config.leaseTimeout()).toNanos();
        this.nextPeriodicNanos = System.nanoTime() + periodNanos;
    }

    /** When a reclaim is due, takes over and runs up to {@code free} stranded deliveries of {@code queues}; returns the slots used. */
    int reclaimIfDue(int free, List<String> queues) {
        if (free <= 0 || System.nanoTime() - nextReclaimNanos < 0) {
            return 0;
        }
        nextReclaimNanos = System.nanoTime() + config.reclaimInterval().toNanos();
        int most = Math.min(free, Fetcher.FETCH_BATCH);
        Broker broker = context.broker();
        String consumerName = context.consumerName();
        int taken = 0;
        for (String queue : queues) {
            if (taken == most) {
                break;
            }
            try {
                List<Delivery> reclaimed = broker.reclaim(queue, consumerName, config.leaseTimeout(), most - taken);
                for (Delivery d : limiter.admit(reclaimed, dispatcher::holdUntil)) {
                    settler.reclaimed(d.key());
                    if (dispatcher.held().computeIfPresent(d.key(), (key, before) -> d) != null) {
                        // Still ours in this JVM (running, or its outcome not yet written): our lease
                        // lapsed, so reclaim raised its count. Hold it at the new count; never run it twice.
                        LOG.log(Level.WARNING, "worker {0}: its lease on entry {1} of queue {2} had lapsed; took it back without running it again",
                                consumerName, d.receipt(), queue);
                        continue;
                    }
                    if (settler.forgetSettled(d.key())) {
                        // Read as pending just before this worker's own outcome for it was written: skip it
                        // once. Reclaimed again a lease later, the outcome did not stick (a failover lost
                        // it with the old primary): then it runs again, rather than staying pending forever.
                        continue;
                    }
                    LOG.log(Level.WARNING, "worker {0} reclaimed stranded entry {1} of queue {2} as attempt {3}",
                            consumerName, d.receipt(), queue, d.attempt());
                    context.stats().reclaimed(queue);
                    dispatcher.dispatch(d);
                    taken++;
                }
                broker.capability(SettledCleanup.class).ifPresent(cleanup -> cleanup.removeSettled(queue));
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "worker {0}: reclaim on queue {1} failed: {2}", consumerName, queue,
                        RepeatedErrorLog.brief(e));
            }
        }
        return taken;
    }

    /**
     * Once every {@link #period}, whether or not a slot is free: says on every queue that this
     * worker is alive, and removes the consumers of workers that stopped saying so for ten lease
     * timeouts. A worker waiting on an empty queue must call this itself: its reads do not keep its
     * consumer fresh in Redis before 7.2, and another worker would remove it, leaving the queue with
     * 0 consumers while its workers run.
     */
    void keepConsumersIfDue(List<String> queues) {
        if (System.nanoTime() - nextKeepNanos < 0) {
            return;
        }
        nextKeepNanos = System.nanoTime() + periodNanos;
        for (String queue : queues) {
            try {
                context.broker().removeIdleConsumers(queue, context.consumerName(), config.leaseTimeout().multipliedBy(IDLE_CONSUMER_LEASES));
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "worker {0}: removing idle consumers of queue {1} failed: {2}", context.consumerName(), queue,
                        RepeatedErrorLog.brief(e));
            }
        }
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
    void scheduleRecovery() {
        recoverRoundsLeft = 2;
        nextRecoverNanos = System.nanoTime();
    }

    /**
     * When a search for lost reads is due, runs the deliveries pending under this consumer that it
     * does not know on up to {@code free} slots (holding the rest); returns how many slots that used.
     */
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
        recoverRoundsLeft--;
        nextRecoverNanos = System.nanoTime() + Duration.ofSeconds(1).toNanos();
        int started = 0;
        boolean lookAgain = false;
        for (String queue : queues) {
            List<Delivery> pending;
            try {
                pending = context.broker().capability(PendingDeliveries.class)
                        .map(r -> r.pendingOf(queue, context.consumerName(), Fetcher.FETCH_BATCH)).orElse(List.of());
            } catch (RuntimeException e) {
                // one broken queue must not keep the others' lost deliveries waiting a lease (and an attempt)
                LOG.log(Level.WARNING, "worker {0}: could not look for deliveries of queue {1} it never received: {2}",
                        context.consumerName(), queue, e.getMessage());
                lookAgain = true;
                continue;
            }
            List<Delivery> lost = new ArrayList<>();
            for (Delivery d : pending) {
                String key = d.key();
                if (dispatcher.held().containsKey(key) || settler.settledRecently(key) || settler.gaveUp(key)) {
                    continue; // running, written, or left on purpose for reclaim (at its next delivery count)
                }
                LOG.log(Level.WARNING, "worker {0}: entry {1} of queue {2} was handed to it by a read whose reply was lost; running it now",
                        context.consumerName(), d.receipt(), queue);
                lost.add(d);
            }
            // they pass their limits like any fetch: one admitted before its reply was lost keeps its admission
            started += dispatcher.dispatchOrHold(lost.isEmpty() ? lost : limiter.admit(lost, dispatcher::holdUntil), free - started);
        }
        if (lookAgain) {
            recoverRoundsLeft++;
        }
        return started;
    }
}

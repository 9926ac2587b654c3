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
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Takes back the pending deliveries nobody runs. The fetcher starts a reclaim when one is due, on a
 * thread of its own (so the fetch rounds do not wait for its round trips), asking for no more than
 * the slots free then: each delivery it takes runs on a free slot, or is held for the fetcher, which
 * runs held deliveries before it fetches new ones. What takes no slot (clearing settled entries,
 * keeping consumers) runs on the {@link Housekeeper}'s thread.
 *
 * <p>Reclaim takes over deliveries stranded by a worker that died or stalled (their lease lapsed),
 * every {@link WorkerConfig#reclaimInterval()}, and clears settled entries as often; it removes
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
    /** A failed call that waited longer than this stops a pass over the queues ({@link #failedSlowly}). */
    private static final Duration SLOW_FAILURE = Duration.ofSeconds(1);

    private final WorkerContext context;
    private final WorkerConfig config;
    private final Dispatcher dispatcher;
    private final Settler settler;
    private final FlowLimiter limiter;
    private final Semaphore slots;
    /** Where a reclaim or a search that failed marks the outage it met, as a failed fetch does, for the worker's health. */
    private final TakeFailures failures;
    /**
     * The leases of this worker's own runs it took back: while Redis refuses their renewal (an ACL rule), each reclaim
     * takes the same ones back, and would say so every reclaim interval.
     */
    private final RepeatedErrorLog tookBackLog = new RepeatedErrorLog();
    private final long periodNanos;
    private long nextReclaimNanos = System.nanoTime();
    private int recoverRoundsLeft;
    /** Set by the fetcher when a read failed or was slow; taken up by the next search. */
    private final AtomicBoolean recoveryAsked = new AtomicBoolean();
    private long nextRecoverNanos;
    private long nextPeriodicNanos;
    // The next two are the housekeeping thread's; the others the reclaim thread's (one at a time).
    private long nextKeepNanos = System.nanoTime();
    private long nextCleanupNanos = System.nanoTime();

    Reclaimer(WorkerContext context, Dispatcher dispatcher, Settler settler, FlowLimiter limiter, TakeFailures failures) {
        this.context = context;
        this.failures = failures;
        this.config = context.config();
        this.dispatcher = dispatcher;
        this.settler = settler;
        this.limiter = limiter;
        this.slots = dispatcher.slots();
        this.periodNanos = period(config.reclaimInterval(), config.leaseTimeout()).toNanos();
        this.nextPeriodicNanos = System.nanoTime() + periodNanos;
    }

    /**
     * Whether a reclaim, or with {@code recovering} a search for lost reads, is due; asked by the
     * fetcher while no reclaim runs (the end of the last one's thread publishes its state).
     */
    boolean due(boolean recovering) {
        long now = System.nanoTime();
        if (now - nextReclaimNanos >= 0) {
            return true;
        }
        return recovering && (recoveryAsked.get() || (recoverRoundsLeft > 0 && now - nextRecoverNanos >= 0) || now - nextPeriodicNanos >= 0);
    }

    /**
     * Runs {@code taken} (their leases known to be ours since {@code leasedSinceNanos}) on the slots
     * free now, once past their limits, and holds the rest (their leases renewed) for the fetcher, which
     * runs held deliveries before it fetches new ones as slots free. Only those with a slot are put
     * to the limits here: a start reserved for a delivery that waits for a slot passes while it waits
     * (a search can find a whole fetch of lost reads while every slot is busy), and one taken too late
     * is given back, its reservation wasted. The held ones are put to them as a slot frees.
     */
    private void admitAndRunOrHold(List<Delivery> taken, long leasedSinceNanos) {
        if (taken.isEmpty()) {
            return;
        }
        if (!context.active().getAsBoolean()) {
            // Stopping: what a reclaim or a search in flight when the stop came returns goes back for a live worker, as
            // the attempt it is, not run past the grace (and cut off) by this one.
            dispatcher.giveBackUnstarted(taken, "a reclaim in flight at the stop took");
            return;
        }
        int free = 0;
        while (free < taken.size() && slots.tryAcquire()) {
            free++;
        }
        long outcomesBefore = settler.handedOver(); // of the jobs whose slots were just taken
        List<Delivery> admitted = limiter.admit(taken.subList(0, free), dispatcher::holdUntil, dispatcher::startsAt,
                () -> settler.awaitBeforeAdmission(outcomesBefore), n -> { });
        for (Delivery d : admitted) {
            dispatcher.dispatch(d, leasedSinceNanos);
        }
        slots.release(free - admitted.size());
        for (Delivery d : taken.subList(free, taken.size())) {
            dispatcher.holdForAdmission(d, leasedSinceNanos);
        }
    }

    /**
     * When the reclaim's broker call under way began ({@link System#nanoTime()}), 0 between calls: a call caught on a
     * stalled or reset connection shows in the health like a fetch that hangs. Only the calls: the search for lost reads
     * also waits its turn behind the fetch under way, a blocking read of up to the poll timeout per queue, which says
     * nothing of the broker.
     */
    volatile long callSinceNanos;

    private <T> T timed(java.util.function.Supplier<T> call) {
        callSinceNanos = System.nanoTime();
        try {
            return call.get();
        } finally {
            callSinceNanos = 0;
        }
    }

    /**
     * When a reclaim is due, takes over up to {@code free} stranded deliveries of {@code queues} (the
     * slots free when the fetcher found it due) and runs each on a free slot or holds it for the next.
     */
    void reclaimIfDue(int free, List<String> queues) {
        if (free <= 0 || System.nanoTime() - nextReclaimNanos < 0) {
            return;
        }
        nextReclaimNanos = System.nanoTime() + config.reclaimInterval().toNanos();
        int most = Math.min(free, Fetcher.FETCH_BATCH);
        Broker broker = context.broker();
        String consumerName = context.consumerName();
        int taken = 0;
        for (String queue : queues) {
            // A stop can come while a reclaim waits on Redis: a stopping worker takes over nothing
            // more, or it would run stranded work past its grace and spend an attempt of each.
            if (taken == most || !context.active().getAsBoolean()) {
                break;
            }
            long callStarted = System.nanoTime();
            try {
                int ask = most - taken;
                List<Delivery> reclaimed = timed(() -> broker.reclaim(queue, consumerName, config.leaseTimeout(), ask));
                failures.answered(callStarted, false);
                Dispatcher.Taken ours = dispatcher.stillOurs(reclaimed, callStarted);
                List<Delivery> toRun = new ArrayList<>();
                List<String> tookBack = new ArrayList<>();
                for (Delivery d : ours.deliveries()) {
                    settler.reclaimed(d.key());
                    if (dispatcher.held().computeIfPresent(d.key(), (key, before) -> d) != null) {
                        // Still ours in this JVM (running, or its outcome not yet written): our lease
                        // lapsed, so reclaim raised its count. Hold it at the new count; never run it twice.
                        tookBack.add(d.receipt());
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
                    toRun.add(d);
                    taken++;
                }
                if (!tookBack.isEmpty()) {
                    String entries = (tookBack.size() == 1 ? "its lease on entry " : "its leases on entries ")
                            + String.join(", ", tookBack) + " of queue " + queue;
                    LOG.log(tookBackLog.shouldLog(entries) ? Level.WARNING : Level.DEBUG,
                            "worker {0}: {1} had lapsed; took {2} back without running {2} again", consumerName, entries,
                            tookBack.size() == 1 ? "it" : "them");
                }
                admitAndRunOrHold(toRun, ours.leasedSinceNanos());
            } catch (RuntimeException e) {
                LOG.log(failureLevel(e), "worker {0}: reclaim on queue {1} failed: {2}", consumerName, queue,
                        RepeatedErrorLog.brief(e));
                markFailed(callStarted, "reclaiming has failed", e);
                if (failedSlowly(callStarted)) {
                    break;
                }
            }
        }
    }

    /**
     * Marks the outage a call begun at {@code callStarted} met, for the worker's health, unless the worker is
     * stopping: a call the stop cut off says nothing of the broker.
     */
    private void markFailed(long callStarted, String what, RuntimeException e) {
        if (context.active().getAsBoolean()) {
            failures.failed(callStarted, what, String.valueOf(e.getMessage()));
        }
    }

    /**
     * The level of a broker call's failure: DEBUG once the worker is stopping, whatever the failure (a call in flight
     * when the stop began fails when the client closes, after the stop's last line), else {@link ControlLoop#failureLevel}.
     */
    private Level failureLevel(RuntimeException e) {
        return context.active().getAsBoolean() ? ControlLoop.failureLevel(e) : Level.DEBUG;
    }

    /**
     * Whether a call that began at {@code startedNanos} failed after waiting more than {@link #SLOW_FAILURE}:
     * the broker is most likely away, and a call for each of the other queues would fail too, each
     * after its own timeout. A pass over many queues then took minutes in a long outage (the
     * worker's health took its loop for stuck) and logged a line per queue; it stops there, and the
     * queues left out are served by the next pass. A failure that comes at once (a refused
     * connection, a permission one queue lacks) costs the others nothing, and they are still called.
     */
    private static boolean failedSlowly(long startedNanos) {
        return System.nanoTime() - startedNanos > SLOW_FAILURE.toNanos();
    }

    /**
     * Once every {@link WorkerConfig#reclaimInterval()}, clears the settled entries of each queue. It
     * takes no slot, so the housekeeping thread runs it, not the fetcher.
     */
    void removeSettledIfDue(List<String> queues) {
        if (System.nanoTime() - nextCleanupNanos < 0) {
            return;
        }
        nextCleanupNanos = System.nanoTime() + config.reclaimInterval().toNanos();
        context.broker().capability(SettledCleanup.class).ifPresent(cleanup -> {
            for (String queue : queues) {
                long started = System.nanoTime();
                try {
                    cleanup.removeSettled(queue);
                } catch (RuntimeException e) {
                    LOG.log(failureLevel(e), "worker {0}: clearing the settled entries of queue {1} failed: {2}", context.consumerName(),
                            queue, RepeatedErrorLog.brief(e));
                    if (failedSlowly(started)) {
                        return;
                    }
                }
            }
        });
    }

    /**
     * Once every {@link #period}, whether or not a slot is free (run by the housekeeping thread, as
     * it takes no slot): says on every queue that this
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
            long started = System.nanoTime();
            try {
                context.broker().removeIdleConsumers(queue, context.consumerName(), config.leaseTimeout().multipliedBy(IDLE_CONSUMER_LEASES));
            } catch (RuntimeException e) {
                LOG.log(failureLevel(e), "worker {0}: removing idle consumers of queue {1} failed: {2}", context.consumerName(), queue,
                        RepeatedErrorLog.brief(e));
                if (failedSlowly(started)) {
                    break;
                }
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
        recoveryAsked.set(true); // the fetcher asks; the reclaim thread takes it up
    }

    /**
     * When a search for lost reads is due, runs the deliveries pending under this consumer that it
     * does not know, each on a free slot or held for the next.
     */
    void recoverIfDue(List<String> queues) {
        if (!context.active().getAsBoolean()) {
            return; // its interrupted runs are left pending on purpose, not lost reads to run again
        }
        long now = System.nanoTime();
        if (recoveryAsked.getAndSet(false)) {
            recoverRoundsLeft = 2;
            nextRecoverNanos = now;
        }
        if (recoverRoundsLeft <= 0 && now - nextPeriodicNanos >= 0) {
            recoverRoundsLeft = 1;
            nextRecoverNanos = now;
        }
        if (recoverRoundsLeft <= 0 || now - nextRecoverNanos < 0) {
            return;
        }
        nextPeriodicNanos = now + periodNanos;
        recoverRoundsLeft--;
        nextRecoverNanos = System.nanoTime() + Duration.ofSeconds(1).toNanos();
        boolean lookAgain = false;
        for (String queue : queues) {
            List<Delivery> pending;
            long searchBegan = System.nanoTime();
            try {
                pending = timed(() -> context.broker().capability(PendingDeliveries.class)
                        .map(r -> r.pendingOf(queue, context.consumerName(), Fetcher.FETCH_BATCH)).orElse(List.of()));
            } catch (RuntimeException e) {
                // one broken queue must not keep the others' lost deliveries waiting a lease (and an attempt)
                LOG.log(failureLevel(e), "worker {0}: could not look for deliveries of queue {1} it never received: {2}",
                        context.consumerName(), queue, e.getMessage());
                markFailed(searchBegan, "looking for lost reads has failed", e);
                lookAgain = true;
                continue;
            }
            // A fetch under way may have been handed entries of this reply that it does not hold yet.
            dispatcher.intake().lock();
            try {
                if (!recoverLost(queue, pending, searchBegan)) {
                    lookAgain = true;
                }
            } finally {
                dispatcher.intake().unlock();
            }
        }
        if (lookAgain) {
            recoverRoundsLeft++;
        }
    }

    /**
     * Runs (or holds) the deliveries of {@code pending} this worker does not know: handed out by reads
     * whose reply was lost, found by a search that began at {@code searchBegan}. Called with the intake
     * held; false when it could not tell which are still pending (look again).
     */
    private boolean recoverLost(String queue, List<Delivery> pending, long searchBegan) {
        List<Delivery> unknown = unknown(pending);
        if (unknown.isEmpty()) {
            return true;
        }
        // The search read the pending entries before it held the intake: a fetch under way then has since
        // parked some of them (a rate or concurrency limit's wait, a paused task), acknowledged and no
        // longer pending, neither held nor settled. Only what is still pending now, with no fetch under
        // way, was handed out by a lost read. Trusting the first reading would run a parked job while it
        // waits, and log a whole fetch as lost whenever a search meets a fetch that parks a backlog; the
        // second reading holds the fetcher up for a round trip, and only when the first found any.
        Set<String> unknownKeys = new HashSet<>();
        unknown.forEach(d -> unknownKeys.add(d.key()));
        List<Delivery> still;
        try {
            still = timed(() -> context.broker().capability(PendingDeliveries.class)
                    .map(r -> r.pendingOf(queue, context.consumerName(), Fetcher.FETCH_BATCH)).orElse(List.of()));
        } catch (RuntimeException e) {
            LOG.log(failureLevel(e), "worker {0}: could not look again for deliveries of queue {1} it never received: {2}",
                    context.consumerName(), queue, e.getMessage());
            return false;
        }
        List<Delivery> lost = new ArrayList<>();
        for (Delivery d : unknown(still)) {
            if (!unknownKeys.contains(d.key())) {
                continue; // handed out since the first reading: a fetch's own, or the next search's
            }
            LOG.log(Level.WARNING, "worker {0}: entry {1} of queue {2} was handed to it by a read whose reply was lost; running it now",
                    context.consumerName(), d.receipt(), queue);
            lost.add(d);
        }
        // they pass their limits like any fetch: one admitted before its reply was lost keeps its admission
        if (!lost.isEmpty()) {
            // Pending under this worker when the search began: held up past half a lease from then on
            // their way to the handler, each is renewed first, like what a fetch took.
            admitAndRunOrHold(lost, searchBegan);
        }
        return true;
    }

    /** The deliveries of {@code pending} this worker neither runs, nor wrote, nor left on purpose for reclaim. */
    private List<Delivery> unknown(List<Delivery> pending) {
        List<Delivery> unknown = new ArrayList<>();
        for (Delivery d : pending) {
            String key = d.key();
            if (dispatcher.held().containsKey(key) || settler.settledRecently(key) || settler.gaveUp(key) || settler.handedNotTaken(key)) {
                continue; // running, written, left on purpose for reclaim (at its next delivery count), or handed with a settle
            }
            unknown.add(d);
        }
        return unknown;
    }
}

package io.binomic.core.internal.worker;

import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Settlement;
import io.binomic.core.internal.jobs.JobRecordFormat;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.UnaryOperator;

/**
 * Runs a worker's deliveries, each on a virtual thread of its own, within its slots: it owns the
 * slots, the deliveries running, those handed out beyond the free slots (run as slots free, never
 * at once), those admitted for a start a rate limit reserved (each waits for it on a slot, with its
 * lease renewed) and the parking of deliveries of paused queues. Every path that takes a delivery (fetch,
 * reclaim, recovery of lost reads) ends here, so each is held, run and released the same way. It
 * also listens for cancels of the jobs it may run, one subscription per queue, on the broker's
 * listener threads: a running job asked to cancel is interrupted here, whichever process asked.
 */
final class Dispatcher implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Dispatcher.class.getName());

    private record Running(Delivery delivery, Thread thread) { }

    private final WorkerContext context;
    private final Semaphore slots;
    private final DeliveryProcessor processor;
    private final Settler settler;
    private final FlowGate flow;
    /**
     * Every delivery the worker holds, by {@link Delivery#key()}: the leases it renews. Not only the running ones:
     * a delivery stays held after its handler ends, until its outcome is written.
     */
    private final Map<String, Delivery> held;
    private final TrackedJobs tracked;
    /** Deliveries whose handler is running, by key. */
    private final Map<String, Running> running = new ConcurrentHashMap<>();
    /** Deliveries a broker handed out beyond the free slots: run as slots free, never at once. */
    private final Deque<Delivery> overflow = new ConcurrentLinkedDeque<>();
    /**
     * Keys of the held deliveries not yet past their limits: admitted only once a slot is theirs, since a
     * start reserved for one still waiting for a slot is most often missed and given back.
     */
    private final Set<String> unadmitted = ConcurrentHashMap.newKeySet();
    private final CancelListener cancels;
    /** The start a rate limit reserved for a delivery about to be dispatched ({@link System#nanoTime()}), by key. */
    private final Map<String, Long> reservedStarts = new ConcurrentHashMap<>();
    /**
     * The latest a start a rate limit admitted each delivery for may still be taken ({@link System#nanoTime()}:
     * its reserved start, or the admission's answer for one to run at once, plus its allowance), by key,
     * until its handler is about to be called ({@link #lateForItsStart}).
     */
    private final Map<String, Long> rateStarts = new ConcurrentHashMap<>();
    /**
     * Held by the fetcher from a read until the deliveries it handed out are held, and by the search
     * for lost reads while it tells its finds from those: fair, so the search is not kept out by
     * the fetcher's next read.
     */
    private final ReentrantLock intake = new ReentrantLock(true);
    /** Deliveries waiting on a slot for their reserved start, by key. */
    private final Map<String, Thread> waiting = new ConcurrentHashMap<>();
    /**
     * For each delivery handed to this dispatcher whose handler has not been called yet, by key: since
     * when its lease is known to be this worker's ({@link System#nanoTime()}: when the call that took
     * it, found it pending under this worker or renewed it before it was handed over began). Read once,
     * as its handler is about to be called ({@link #stillOursToRun}).
     */
    private final Map<String, Long> leasedSince = new ConcurrentHashMap<>();
    /**
     * How late a start a rate limit admitted may still be taken: this, or half the limit's interval when
     * that is longer ({@link FlowLimiter#lateAllowanceNanos}). A delivery that wakes later, or reaches its
     * handler later, gives its start back (it is put back, due now, and admitted again ahead of the
     * jobs waiting for their turns): a worker that stalled, or waited on a broker that did not answer,
     * must not start what it held all at once, on top of the starts other workers take on time. Half an
     * interval late moves a start at most half a start into the next window; 20 ms alone would give back
     * most starts of a slow limit on a loaded machine, each one a turn no job takes.
     */
    static final long LATE_START_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /**
     * How old a lease may be when its delivery is about to run without a renewal first: half the
     * lease. Once held, a delivery's lease is renewed within one renewal period (a quarter lease)
     * and a round trip, so a younger one cannot lapse before that; an older one may already have
     * lapsed, been reclaimed and be running elsewhere.
     */
    private final long renewBeforeRunNanos;

    Dispatcher(WorkerContext context, DeliveryProcessor processor, Settler settler, FlowGate flow, Map<String, Delivery> held,
               TrackedJobs tracked) {
        this.context = context;
        this.slots = new Semaphore(context.config().concurrency());
        this.processor = processor;
        this.settler = settler;
        this.flow = flow;
        this.held = held;
        this.tracked = tracked;
        this.cancels = new CancelListener(context, tracked, this::runningOf);
        this.renewBeforeRunNanos = context.config().leaseTimeout().toNanos() / 2;
    }

    ReentrantLock intake() { return intake; }

    /** The free slots: a delivery is run only with one taken, which it gives back when it ends. */
    Semaphore slots() { return slots; }

    Map<String, Delivery> held() { return held; }

    TrackedJobs tracked() { return tracked; }

    /**
     * Says that {@code d}, about to be dispatched, may start at {@code startNanos} ({@link System#nanoTime()})
     * and not before, nor more than {@code allowedLateNanos} after.
     */
    void holdUntil(Delivery d, long startNanos, long allowedLateNanos) {
        reservedStarts.put(d.key(), startNanos);
        rateStarts.put(d.key(), startNanos + allowedLateNanos);
    }

    /**
     * Says that a rate limit admitted {@code d}, about to be dispatched, to start at once, as of {@code startNanos}
     * ({@link System#nanoTime()}), and not more than {@code allowedLateNanos} after.
     */
    void startsAt(Delivery d, long startNanos, long allowedLateNanos) {
        rateStarts.put(d.key(), startNanos + allowedLateNanos);
    }

    /**
     * Whether {@code d}, whose handler is about to be called, is past the latest start a rate limit
     * admitted it for ({@link #LATE_START_NANOS}); false for one no rate limit decided on. Read once,
     * after every step on its way to the handler (a wait for a slot or the paused state, its start
     * mark): a start mark held up by an outage, or a JVM that stalled past the check at the end of
     * its wait, would otherwise start it, and every other one held up with it, at once.
     */
    boolean lateForItsStart(Delivery d) {
        Long latest = rateStarts.remove(d.key());
        long late = latest == null ? 0 : System.nanoTime() - latest;
        if (late <= 0) {
            return false;
        }
        LOG.log(Level.DEBUG, "worker {0}: reached the handler of {1} {2} ms after the latest start its rate limit admitted, too late;"
                + " putting it back", context.consumerName(), d.receipt(), TimeUnit.NANOSECONDS.toMillis(late));
        return true;
    }

    /** Forgets what was kept of {@code d} for the call of its handler: it is not to be called, or it was. */
    private void forgetStart(Delivery d) {
        leasedSince.remove(d.key());
        rateStarts.remove(d.key());
    }

    /** Whether {@code d} waits for a reserved start: it is not running yet, and its job must not say so. */
    boolean hasReservedStart(Delivery d) { return reservedStarts.containsKey(d.key()); }

    /** Deliveries this worker took, and since when their leases are known to be its own ({@link System#nanoTime()}). */
    record Taken(List<Delivery> deliveries, long leasedSinceNanos) { }

    /**
     * Runs {@code d}, whose lease is known to be this worker's since {@code leasedSinceNanos}, on its
     * own virtual thread, with a slot taken by the caller (at its reserved start if it has one); the
     * slot is released when it ends.
     */
    void dispatch(Delivery d, long leasedSinceNanos) {
        leasedSince.put(d.key(), leasedSinceNanos);
        dispatch(d);
    }

    /** {@link #dispatch(Delivery, long)} of a delivery handed over before (held, or waiting for its reserved start). */
    private void dispatch(Delivery d) {
        Long start = reservedStarts.remove(d.key());
        if (start != null) {
            waitThenStart(d, start);
        } else if (!flow.startUnlessPaused(d, this::start)) {
            park(d); // handed out by a reclaim, held since before the pause, or paused since the fetch
            slots.release();
        }
    }

    /**
     * Keeps {@code d} (its slot taken, its lease renewed) until its reserved start, then starts it,
     * unless the queue was paused meanwhile (parked), the worker is stopping (left pending: its admission
     * stands, so the worker that reclaims it runs it without counting it again), or it woke too late
     * (given back).
     */
    private void waitThenStart(Delivery d, long startNanos) {
        held.put(d.key(), d);
        Thread thread = Thread.ofVirtual().name("binomic-wait-" + d.key()).unstarted(() -> {
            try {
                long wait = startNanos - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
                if (!context.active().getAsBoolean()) {
                    held.remove(d.key());
                    forgetStart(d);
                    slots.release();
                } else if (System.nanoTime() - rateStarts.getOrDefault(d.key(), startNanos + LATE_START_NANOS) > 0) {
                    forgetStart(d);
                    giveBack(d);
                    slots.release();
                } else {
                    dispatch(d);
                }
            } catch (InterruptedException e) {
                held.remove(d.key()); // stopping: left pending for reclaim
                forgetStart(d);
                slots.release();
            } finally {
                waiting.remove(d.key());
            }
        });
        waiting.put(d.key(), thread);
        thread.start();
    }

    /**
     * Gives back the start reserved for {@code d}: due again now, attempt unchanged, marked as admitted by
     * its rate limits so that it takes the next start free rather than queue behind the jobs that came
     * after it; its settlement releases what it holds.
     */
    private void giveBack(Delivery d) throws InterruptedException {
        LOG.log(Level.DEBUG, "worker {0}: woke too late for the reserved start of {1}; putting it back", context.consumerName(), d.receipt());
        settler.submit(new Settlement.RetryLater(d, d.message().orElseThrow().withRateAdmitted(), context.clock().instant()));
    }

    /**
     * Gives back deliveries a stopping worker holds but will not start (read, reclaimed or held for a slot when the stop
     * began), {@code what} saying which in the log: each due again now, its attempt unchanged, for a live worker to run at
     * once rather than after this one's lease, and as the same attempt (a reclaim would count one). Held (their leases
     * renewed) until written; one that is not a message, or cannot be queued for writing, stays pending for reclaim.
     */
    void giveBackUnstarted(List<Delivery> deliveries, String what) {
        int given = 0;
        for (Delivery d : deliveries) {
            given += putBackUnstarted(d) ? 1 : 0;
        }
        if (given > 0) {
            LOG.log(Level.INFO, "worker {0}: stopping; {1} job(s) {2} are given back unstarted", context.consumerName(), given, what);
        }
    }

    private boolean putBackUnstarted(Delivery d) {
        if (d.message().isEmpty()) {
            return false;
        }
        Message m = d.message().orElseThrow();
        Message next = m.attempt() == d.attempt() ? m : m.withAttempt(d.attempt(), m.enqueuedAt());
        Instant now = context.clock().instant();
        // a record marked running by the fetch says it is scheduled again
        JobUpdate job = m.isTracked() ? JobRecordFormat.givenBack(m, d.queue(), now) : null;
        held.put(d.key(), d);
        // The stop interrupts a reclaim in flight: what it took still goes back (a put into the outcomes' buffer, which
        // the stop keeps draining), the interrupt kept for the caller.
        boolean interrupted = Thread.interrupted();
        try {
            settler.submit(new Settlement.RetryLater(d, next, now, job));
            return true;
        } catch (InterruptedException e) {
            held.remove(d.key()); // left pending, for reclaim
            interrupted = true;
            return false;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void start(Delivery d) {
        if (!context.active().getAsBoolean()) {
            // The one place every start goes through: a stopping worker starts nothing (a read, a reclaim or a slot's
            // wait that ended after its stop began), or the grace's end would cut it off and it would run twice.
            forgetStart(d);
            tracked.forget(d);
            giveBackUnstarted(List.of(d), "that would have started after the stop began");
            slots.release();
            return;
        }
        held.put(d.key(), d);
        Thread thread = Thread.ofVirtual().name("binomic-run-" + d.key()).unstarted(() -> {
            Outcome outcome = null;
            try {
                try {
                    outcome = processor.process(d);
                } catch (RuntimeException | Error e) {
                    // The processor records every task fault itself; reaching here is a bug. Left
                    // unsettled, the worker would go on as if it were done while the delivery waited out
                    // its lease to run again, its cause nowhere but this log: it is a failed attempt.
                    LOG.log(Level.ERROR, "worker " + context.consumerName() + ": unexpected failure processing " + d.receipt()
                            + "; recording it as a failed attempt", e);
                    outcome = processor.unexpectedFailure(d, e);
                }
                if (tracked.leaseLost(d.key())) {
                    // Another worker took it over and settles it: this outcome would be refused anyway.
                    LOG.log(Level.WARNING, "worker {0}: the run of {1} of queue {2} ended after its lease was lost; its outcome "
                            + "is dropped, the worker that took it over settles it", context.consumerName(), d.receipt(), d.queue());
                    Thread.interrupted();
                    outcome = null;
                } else if (outcome instanceof Outcome.Settle(var settlement)) {
                    settler.submit(settlement);
                }
            } catch (InterruptedException e) {
                LOG.log(Level.WARNING, "worker {0}: interrupted before the outcome of {1} was queued; it stays pending for reclaim",
                        context.consumerName(), d.receipt());
                outcome = null;
            } catch (RuntimeException | Error e) {
                LOG.log(Level.ERROR, "worker " + context.consumerName() + ": unexpected failure queueing the outcome of " + d.receipt()
                        + "; it stays pending for reclaim", e);
                outcome = null;
            } finally {
                running.remove(d.key());
                forgetStart(d); // its processing may have ended before the handler (a dead letter)
                tracked.forget(d);
                if (!(outcome instanceof Outcome.Settle)) {
                    held.remove(d.key()); // left pending: stop renewing, so reclaim brings it back
                }
                slots.release();
            }
        });
        running.put(d.key(), new Running(d, thread));
        thread.start();
    }

    /**
     * Parks a delivery of a paused queue or task: settled as due when it is resumed, attempt
     * unchanged. Until written, it is held (its lease renewed) like any other.
     */
    void park(Delivery d) {
        // Its start mark from the fetch must not stand in for the start check of a later delivery of the same job.
        tracked.forget(d);
        forgetStart(d);
        held.put(d.key(), d);
        try {
            settler.submit(FlowGate.park(d));
        } catch (InterruptedException e) {
            held.remove(d.key()); // stopping: left pending, reclaim brings it back
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Runs the deliveries {@code taken} on up to {@code free} slots the caller took; the others, handed
     * out beyond the free slots, are held (their leases renewed) until a slot frees. Returns how many
     * slots it used.
     */
    int dispatchOrHold(Taken taken, int free) {
        int used = 0;
        for (Delivery d : taken.deliveries()) {
            if (used < free) {
                dispatch(d, taken.leasedSinceNanos());
                used++;
            } else {
                hold(d, taken.leasedSinceNanos());
            }
        }
        return used;
    }

    /**
     * The deliveries of {@code taken} (read or reclaimed by a call that began at {@code leasedSinceNanos},
     * {@link System#nanoTime()}) this worker may run. Those taken less than {@link #renewBeforeRunNanos}
     * ago are all returned at no cost. Past it (a slow round trip, admissions that waited, a pause of
     * the JVM), some leases may have lapsed and another worker reclaimed them: all are renewed first
     * in one call, and those the broker says are no longer ours are dropped, left to their new owner.
     * If the renewal fails, all are kept: another worker cannot reclaim through a broker this one
     * cannot reach either, and the lease keeper stops any it finds taken once the broker answers.
     * Says since when the leases of those returned are known to be ours: the renewal's start, or
     * {@code leasedSinceNanos} when none landed.
     */
    Taken stillOurs(List<Delivery> taken, long leasedSinceNanos) {
        long age = System.nanoTime() - leasedSinceNanos;
        if (taken.isEmpty() || age <= renewBeforeRunNanos) {
            return new Taken(taken, leasedSinceNanos);
        }
        long renewalBegan = System.nanoTime();
        List<Delivery> lost;
        try {
            lost = context.broker().renewLeasesReportingLost(context.consumerName(), taken);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "worker {0}: could not renew the leases of {1} deliveries taken {2} ms ago ({3}); running them",
                    context.consumerName(), taken.size(), TimeUnit.NANOSECONDS.toMillis(age), e.getMessage());
            return new Taken(taken, leasedSinceNanos);
        }
        if (lost.isEmpty()) {
            return new Taken(taken, renewalBegan);
        }
        LOG.log(Level.WARNING, "worker {0}: {1} of the {2} deliveries it took {3} ms ago, more than half the lease, were taken over "
                + "by another worker before they ran; dropping them", context.consumerName(), lost.size(), taken.size(),
                TimeUnit.NANOSECONDS.toMillis(age));
        Set<String> lostKeys = new HashSet<>();
        for (Delivery d : lost) {
            lostKeys.add(d.key());
            reservedStarts.remove(d.key());
            rateStarts.remove(d.key());
            tracked.forget(d);
            recordLost(d, "dropped before running");
        }
        return new Taken(taken.stream().filter(d -> !lostKeys.contains(d.key())).toList(), renewalBegan);
    }

    /**
     * Whether {@code d}, whose handler is about to be called, is still this worker's to run. Its lease
     * was checked when it was taken ({@link #stillOurs}), but not renewed since unless it was held: a
     * broker call on its way here (a start mark, a read of the paused queues) caught by an outage
     * longer than the lease lands as the broker comes back, after another worker may have reclaimed
     * it. So one whose lease is known to be ours since more than half a lease is renewed first, and
     * not run when the broker says another worker has it; a younger one makes no call.
     */
    boolean stillOursToRun(Delivery d) {
        Long since = leasedSince.remove(d.key());
        return since == null || !stillOurs(List.of(d), since).deliveries().isEmpty();
    }

    /**
     * Stops what this worker does with {@code lost}, deliveries it held whose renewal the broker
     * refused (another worker took them over): a running handler is interrupted and its outcome
     * dropped; one waiting for a slot or its reserved start is let go. One that finished is left to
     * its settlement, which the broker refuses as stale (or was settled already: not pending is lost
     * too); one this worker took back itself since (a higher delivery count) is still its own.
     * Returns how many it stopped.
     */
    int leasesLost(List<Delivery> lost) {
        int stopped = 0;
        for (Delivery d : lost) {
            Delivery now = held.get(d.key());
            if (now == null || now.deliveryCount() > d.deliveryCount()) {
                continue;
            }
            Running r = running.get(d.key());
            if (r != null) {
                if (tracked.markLeaseLost(d.key())) {
                    LOG.log(Level.WARNING, "worker {0}: another worker took over {1} of queue {2} while its handler ran here (its lease "
                            + "lapsed); interrupting the handler", context.consumerName(), d.receipt(), d.queue());
                    recordLost(d, "handler interrupted");
                    stopped++;
                    r.thread().interrupt();
                    if (!running.containsKey(d.key())) {
                        tracked.forget(d); // it ended meanwhile: nothing left to stop
                    }
                }
            } else if (overflow.removeIf(o -> o.key().equals(d.key()))) {
                unadmitted.remove(d.key());
                held.remove(d.key());
                forgetStart(d);
                tracked.forget(d);
                recordLost(d, "not started");
                stopped++;
            } else {
                Thread wait = waiting.get(d.key());
                if (wait != null) {
                    recordLost(d, "not started");
                    stopped++;
                    wait.interrupt(); // let go, as when stopping
                }
            }
        }
        return stopped;
    }

    private void recordLost(Delivery d, String action) {
        LeaseLostEvent event = new LeaseLostEvent();
        if (event.shouldCommit()) {
            event.worker = context.consumerName();
            event.queue = d.queue();
            event.receipt = d.receipt();
            event.attempt = d.attempt();
            event.action = action;
            event.commit();
        }
    }

    /**
     * Holds {@code d}, whose lease is known to be ours since {@code leasedSinceNanos}, until a slot
     * frees (its lease renewed meanwhile): the fetcher runs it before it fetches new ones.
     */
    void hold(Delivery d, long leasedSinceNanos) {
        leasedSince.put(d.key(), leasedSinceNanos);
        held.put(d.key(), d);
        overflow.addLast(d);
    }

    /**
     * Holds {@code d} like {@link #hold} before it passed its limits: {@code admit} decides on it once
     * a slot is free for it ({@link #runOverflow}).
     */
    void holdForAdmission(Delivery d, long leasedSinceNanos) {
        unadmitted.add(d.key());
        hold(d, leasedSinceNanos);
    }

    /**
     * Runs held deliveries, oldest first, on up to {@code free} slots the caller took; those held before
     * they passed their limits are decided on first, all in one call of {@code admit}, and one that is
     * not to run now (it waits in the delayed set, or is no longer ours) is let go. Returns how many
     * slots it used.
     */
    int runOverflow(int free, UnaryOperator<List<Delivery>> admit) {
        int started = 0;
        List<Delivery> toAdmit = new ArrayList<>();
        Delivery d;
        while (started + toAdmit.size() < free && (d = overflow.pollFirst()) != null) {
            Delivery now = held.getOrDefault(d.key(), d);
            if (unadmitted.remove(d.key())) {
                toAdmit.add(now);
            } else {
                dispatch(now);
                started++;
            }
        }
        if (toAdmit.isEmpty()) {
            return started;
        }
        Set<String> admitted = new HashSet<>();
        for (Delivery a : admit.apply(toAdmit)) {
            admitted.add(a.key());
            dispatch(a);
            started++;
        }
        for (Delivery a : toAdmit) {
            if (!admitted.contains(a.key())) {
                held.remove(a.key());
                forgetStart(a);
                tracked.forget(a);
            }
        }
        return started;
    }

    /**
     * Gives back the deliveries not started, those waiting for a slot or for their admission; those waiting for their
     * reserved start are left pending for reclaim (their admission stands).
     */
    void dropOverflow() {
        List<Delivery> notStarted = new ArrayList<>();
        overflow.forEach(d -> {
            unadmitted.remove(d.key());
            forgetStart(d);
            tracked.forget(d);
            notStarted.add(held.getOrDefault(d.key(), d));
        });
        overflow.clear();
        giveBackUnstarted(notStarted, "held for a free slot");
        waiting.values().forEach(Thread::interrupt);
    }

    /** Listens for cancels of the jobs of {@code queues}, when the worker runs tracked jobs and the broker keeps records. */
    void listenForCancels(List<String> queues) { cancels.listen(queues); }

    /** The keys of the running deliveries of job {@code id}. */
    private List<String> runningOf(java.util.UUID id) {
        return running.values().stream().filter(r -> r.delivery().message().map(m -> m.id().equals(id)).orElse(false))
                .map(r -> r.delivery().key()).toList();
    }

    /** Stops listening for cancels. */
    @Override
    public void close() { cancels.close(); }

    int runningCount() { return running.size(); }

    void awaitIdle(Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        while ((!running.isEmpty() || !waiting.isEmpty()) && System.nanoTime() < deadline) {
            ControlLoop.pause(Duration.ofMillis(10));
        }
    }

    void interruptAll() { running.values().forEach(r -> r.thread().interrupt()); }
}

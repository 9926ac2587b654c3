package io.binomic.core.internal.worker;

import io.binomic.api.BrokerPermissionException;
import io.binomic.api.spi.Delivery;
import io.binomic.core.internal.RepeatedErrorLog;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The fetch loop of a worker: reads at most as many messages as there are free slots and hands
 * each to the {@link Dispatcher}. It owns the free slots while it runs, so it also runs what else
 * takes slots (held deliveries first; it starts {@link Reclaimer reclaim and the recovery of lost
 * reads} on a thread of their own, each delivery they take run on a free slot or held), and it
 * holds back while outcomes are not being written ({@link Settler#stuck}). What it keeps of its
 * calls (the last round, a call under way, failures) is what the worker's health reads. The
 * periodic calls that take no slot are the {@link Housekeeper}'s: a round here makes no broker
 * call but the read (unless a view the housekeeper keeps is stale), so over a slow link a freed
 * slot waits about one round trip for its next job.
 */
final class Fetcher implements ControlLoop.Round {
    private static final System.Logger LOG = System.getLogger(Fetcher.class.getName());
    /**
     * Most messages asked for in one fetch (or reclaim), however many slots are free. A reply of
     * 100k entries (~15 MB) takes longer to decode than a command timeout: the client then
     * retries the read, and the first read's entries sit pending until reclaim.
     */
    static final int FETCH_BATCH = 1000;
    private static final Duration BROKER_ERROR_PAUSE = Duration.ofMillis(500);
    /** Pause before fetching again after Redis refused the fetch to the worker's ACL user (NOPERM). */
    static final Duration REFUSED_PAUSE = Duration.ofSeconds(2);
    /** What the health says while Redis refuses the fetches to the worker's ACL user. */
    static final String REFUSED = "Redis refuses fetching (NOPERM)";
    /** A broker call this much slower than its own wait was likely retried by the client. */
    private static final Duration SLOW_CALL = Duration.ofSeconds(1);
    private static final Duration OUTCOMES_STUCK_PAUSE = Duration.ofMillis(50);
    private static final Duration SLOTS_FULL_FOR = Duration.ofSeconds(1);

    private final WorkerContext context;
    private final Duration pollTimeout;
    private final Dispatcher dispatcher;
    private final Semaphore slots;
    private final Settler settler;
    private final WorkerQueues queues;
    private final FlowGate flow;
    private final FlowLimiter limiter;
    private final Reclaimer reclaimer;
    private final RepeatedErrorLog fetchFailureLog = new RepeatedErrorLog();
    // What the worker's health reads; written by this loop alone.
    /** When a fetch round last completed, or found nothing it should fetch (every slot busy, every queue paused). */
    volatile long lastRoundNanos = System.nanoTime();
    /** Since when the calls that take work fail: these fetches, and the reclaims, which mark it from their own thread. */
    final TakeFailures failures;
    /** Since when this loop's fetches fail, for its own log lines; 0 while they work. */
    private long fetchFailingSinceNanos;
    /** Since when the fetch under way waits; 0 when none is. */
    volatile long callSinceNanos;
    /** The thread of the last reclaim started; one runs at a time. */
    private volatile Thread reclaiming;
    /**
     * When an admission last parked a delivery for a slot of its queue's own concurrency limit, its only one. For a
     * second after, the worker fetches about as many as it could start: the jobs that ended since its last fetch (the slots it
     * freed; the other workers take theirs), waiting for one to end first (at most a poll timeout,
     * as a read that finds nothing waits). Fetching every free slot's worth instead had each worker
     * fetch a queue's whole backlog and park it (a script, a move back and a second fetch and
     * admission per job) while the limit let only a few of them start. A second without a park
     * (the limit raised or gone, the backlog run out) ends it. Only while it fetches one queue: a
     * cap on a fetch of several would hold back the queues whose limits do not bind.
     */
    private long slotWaitNanos = System.nanoTime() - 2 * SLOTS_FULL_FOR.toNanos();
    private long endedAtLastFetch;
    /** Deliveries handed with settles ({@link Settler#pollHanded}) since the last fetch: slots of ended jobs already taken again. */
    private long handedSinceFetch;

    Fetcher(WorkerContext context, Dispatcher dispatcher, Settler settler, WorkerQueues queues, FlowGate flow, FlowLimiter limiter,
            Reclaimer reclaimer, TakeFailures failures) {
        this.context = context;
        this.failures = failures;
        this.pollTimeout = context.config().pollTimeout();
        this.dispatcher = dispatcher;
        this.slots = dispatcher.slots();
        this.settler = settler;
        this.queues = queues;
        this.flow = flow;
        this.limiter = limiter;
        this.reclaimer = reclaimer;
    }

    @Override
    public boolean run() throws InterruptedException {
        if (!context.active().getAsBoolean()) {
            awaitReclaim();
            return false;
        }
        if (!slots.tryAcquire(pollTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
            lastRoundNanos = System.nanoTime(); // every slot busy: nothing to fetch, and that is healthy
            return true;
        }
        int free = 1 + slots.drainPermits();
        try {
            if (!context.active().getAsBoolean()) {
                awaitReclaim();
                return false;
            }
            if (settler.stuck()) {
                // Outcomes this worker cannot write yet (a settle call hanging on a killed connection,
                // Redis restarting) would run again elsewhere if this JVM died now: take no new work
                // until they are written, so a crash then costs the few it holds, not seconds of work.
                lastRoundNanos = System.nanoTime();
                slots.release(free);
                free = 0;
                settler.probe(queues.all());
                Thread.sleep(OUTCOMES_STUCK_PAUSE.toMillis());
                return true;
            }
            free -= dispatcher.runOverflow(free, held -> limiter.admit(held, dispatcher::holdUntil, dispatcher::startsAt));
            startReclaimIfDue(free);
            List<String> fetchQueues = flow.fetchable();
            if (free > 0 && fetchQueues.isEmpty()) {
                lastRoundNanos = System.nanoTime(); // every queue paused: healthy, and nothing to fetch
                Thread.sleep(Math.min(pollTimeout.toMillis(), FlowGate.REFRESH_MILLIS));
            } else if (free > 0) {
                // Held from the read until its deliveries are held: a search for lost reads, on the
                // reclaim thread, must not take what this read handed out for lost.
                dispatcher.intake().lock();
                try {
                    free -= fetchAndDispatch(fetchQueues, free);
                } finally {
                    dispatcher.intake().unlock();
                }
            } else {
                lastRoundNanos = System.nanoTime();
            }
            return true;
        } finally {
            slots.release(free);
        }
    }

    /** Reads up to {@code free} deliveries of {@code fetchQueues} and runs or holds them; returns the slots used. */
    private int fetchAndDispatch(List<String> fetchQueues, int free) throws InterruptedException {
        List<Delivery> deliveries;
        // the outcomes of the jobs whose slots this round took are handed over by now
        long ended = settler.handedOver();
        boolean capped = System.nanoTime() - slotWaitNanos < SLOTS_FULL_FOR.toNanos() && fetchQueues.size() == 1;
        // While the queue's own limit binds, a settle of its jobs asks the broker to fill the slots it frees at once
        settler.handOff(capped && limiter.onlyQueueConcurrency(fetchQueues.getFirst()) ? fetchQueues.getFirst() : null);
        int used = 0;
        if (capped) {
            if (ended == endedAtLastFetch) {
                settler.awaitWritten(ended + 1, pollTimeout);
                ended = settler.handedOver();
            }
            // the slots of the jobs that ended went to the deliveries handed with their settles: those run first,
            // and the fetch asks only for the ended jobs' slots no hand-off took
            if (settler.handsOff()) {
                settler.awaitWritten(ended, pollTimeout);
            }
        }
        used = runHanded(free);
        free -= used;
        int most = Math.min(free, FETCH_BATCH);
        int ask = most;
        if (capped) {
            long owed = ended - endedAtLastFetch - handedSinceFetch;
            // hand-offs past the ended jobs counted here (their outcomes written since) are owed nothing later
            endedAtLastFetch = ended;
            handedSinceFetch = Math.max(0, -owed);
            if (owed <= 0 && used > 0 && System.nanoTime() - slotWaitNanos < SLOTS_FULL_FOR.toNanos() / 2) {
                return used;
            }
            ask = (int) Math.min(most, Math.max(1, owed));
        } else {
            endedAtLastFetch = ended;
            handedSinceFetch = 0;
        }
        if (ask <= 0) {
            return used;
        }
        long outcomesBefore = ended;
        long callStarted = System.nanoTime();
        callSinceNanos = callStarted;
        try {
            deliveries = context.broker().fetch(fetchQueues, context.consumerName(), ask, pollTimeout);
        } catch (RuntimeException e) {
            fetchFailed(e, callStarted);
            return used;
        } finally {
            callSinceNanos = 0;
        }
        if (System.nanoTime() - callStarted > pollTimeout.plus(SLOW_CALL).toNanos()) {
            // The client may have retried a read whose first reply was lost (Redis hung):
            // that read handed entries to this consumer that it never received.
            reclaimer.scheduleRecovery();
        }
        fetchSucceeded(callStarted);
        if (!context.active().getAsBoolean()) {
            // The stop began while this read waited (the broker frozen, a worker stopped as it came up): a draining
            // worker starts nothing new, or the grace's end would cut off what it started and it would run twice.
            dispatcher.giveBackUnstarted(deliveries, "its last read returned");
            return used;
        }
        deliveries = flow.admit(deliveries, dispatcher::park);
        // the ones over a rate or concurrency limit wait
        int[] waitedForSlot = {0};
        deliveries = limiter.admit(deliveries, dispatcher::holdUntil, dispatcher::startsAt,
                () -> settler.awaitBeforeAdmission(outcomesBefore), n -> waitedForSlot[0] = n);
        // Only a job parked for its queue's own slots, its only limit of the kind, says the queue's backlog waits for
        // them. Where a task's or a key's limit parks some (beside jobs it does not hold back), fetching only what ended
        // would not refill the slots the parked jobs left, and the worker would run fewer and fewer of those that could start.
        if (waitedForSlot[0] > 0) {
            slotWaitNanos = System.nanoTime();
        }
        // Their leases began with the call: a round held up past half a lease renews them before they run.
        Dispatcher.Taken ours = dispatcher.stillOurs(deliveries, callStarted);
        dispatcher.tracked().startInBulk(ours.deliveries(), dispatcher::hasReservedStart);
        used += dispatcher.dispatchOrHold(ours, free);
        if (ours.deliveries().size() > Math.min(context.config().concurrency(), FETCH_BATCH)) {
            LOG.log(Level.ERROR, "worker {0}: the broker handed out {1} deliveries for a fetch of at most {2}; the extra ones "
                    + "wait for a free slot (a broker bug)", context.consumerName(), ours.deliveries().size(),
                    context.config().concurrency());
        }
        return used;
    }

    /**
     * Runs the deliveries handed with settles ({@link Settler#pollHanded}) on up to {@code free} slots the caller took, the
     * others held; returns the slots used. Admitted by the settle already (each holds a slot of its queue's limit), they
     * pass only the pauses.
     */
    private int runHanded(int free) throws InterruptedException {
        int used = 0;
        Settler.Handed h;
        while ((h = settler.pollHanded()) != null) {
            handedSinceFetch += h.deliveries().size();
            // one the search for lost reads found first (it runs it) is not run again: both decide under the intake lock
            List<Delivery> unknown = h.deliveries().stream()
                    .filter(d -> !dispatcher.held().containsKey(d.key()) && !settler.settledRecently(d.key())).toList();
            List<Delivery> handed = flow.admit(unknown, dispatcher::park);
            Dispatcher.Taken ours = dispatcher.stillOurs(handed, h.leasedSinceNanos());
            dispatcher.tracked().startInBulk(ours.deliveries(), dispatcher::hasReservedStart);
            used += dispatcher.dispatchOrHold(ours, free - used);
        }
        return used;
    }

    /**
     * Starts the reclaim and the search for lost reads when one is due and none runs, on a thread of
     * their own: over a slow link their round trips would otherwise hold up every fetch round they
     * fall in. They ask for no more than the {@code free} slots; what they take runs on a slot then
     * free, or is held and run first by a later round.
     */
    private void startReclaimIfDue(int free) {
        Thread last = reclaiming;
        boolean recovering = !failures.isFailing();
        if ((last != null && last.isAlive()) || !reclaimer.due(recovering)) {
            return;
        }
        List<String> of = queues.all();
        reclaiming = Thread.ofPlatform().daemon().name("binomic-reclaim-" + context.consumerName()).start(() -> {
            try {
                if (recovering) {
                    reclaimer.recoverIfDue(of);
                }
                reclaimer.reclaimIfDue(free, of);
            } catch (RuntimeException e) {
                LOG.log(Level.ERROR, "worker " + context.consumerName() + ": unexpected failure reclaiming; tried again when next due", e);
            }
        });
    }

    /**
     * Cuts off the reclaim under way, if any, as the worker's stop begins: what it would take is left pending for a
     * live worker anyway ({@link Reclaimer}), and against a broker that does not answer it would outlast the stop
     * and fail when the client closes.
     */
    void interruptReclaim() {
        Thread last = reclaiming;
        if (last != null) {
            last.interrupt();
        }
    }

    /** Since when the broker call of the reclaim (or search for lost reads) under way waits; 0 when none is. */
    long reclaimCallSinceNanos() { return reclaimer.callSinceNanos; }

    /** Waits for the reclaim under way, if any: a stopping worker starts nothing after its fetcher ended. */
    private void awaitReclaim() throws InterruptedException {
        Thread last = reclaiming;
        if (last != null) {
            last.join();
        }
    }

    private void fetchSucceeded(long callStarted) {
        lastRoundNanos = System.nanoTime();
        settler.brokerAnswered(callStarted);
        failures.answered(callStarted, true);
        if (fetchFailingSinceNanos != 0) {
            LOG.log(Level.INFO, "worker {0}: fetching again after {1} ms", context.consumerName(),
                    String.valueOf(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - fetchFailingSinceNanos)));
            fetchFailingSinceNanos = 0;
            fetchFailureLog.reset();
        }
    }

    /** A fetch begun at {@code callStarted} failed: the fetches fail since then, the start of the first that failed. */
    private void fetchFailed(RuntimeException e, long callStarted) {
        BrokerPermissionException refused = ControlLoop.refusal(e);
        if (refused == null) {
            failures.failed(callStarted, "fetching has failed", String.valueOf(e.getMessage()));
        } else {
            // Redis answers, and refuses until an operator grants the command: say so, and the grant first, as a refused settle does.
            failures.failed(callStarted, REFUSED, "grant " + refused.grant() + "; " + e.getMessage());
        }
        reclaimer.scheduleRecovery();
        if (fetchFailingSinceNanos == 0) {
            fetchFailingSinceNanos = callStarted;
        }
        String error = RepeatedErrorLog.brief(e);
        if (fetchFailureLog.shouldLog(error)) { // a worker whose every queue is refused fails twice a second
            LOG.log(ControlLoop.failureLevel(e), refused == null ? "worker {0}: fetching failed ({1}); retrying every {2} ms"
                    : "worker {0}: fetching refused ({1}); retrying every {2} ms until it is granted", context.consumerName(), error,
                    String.valueOf((refused == null ? BROKER_ERROR_PAUSE : REFUSED_PAUSE).toMillis()));
        }
        // A refusal lasts until an operator acts: retrying it as often as an outage only repeats the same answer.
        ControlLoop.pause(refused == null ? BROKER_ERROR_PAUSE : REFUSED_PAUSE);
    }
}

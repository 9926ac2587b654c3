package io.binomic.core.internal.worker;

import io.binomic.api.TaskBinding;
import io.binomic.api.TaskDefaults;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobEvent;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.LostReadRecovery;
import io.binomic.api.spi.PayloadCodec;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SettledCleanup;
import io.binomic.core.Worker;
import io.binomic.core.WorkerCounters;
import io.binomic.core.WorkerHealth;
import io.binomic.core.internal.Capabilities;
import io.binomic.core.internal.StatsRecorder;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A worker in this JVM. Its control loops run on platform threads, so handlers that keep the
 * virtual-thread carriers busy (CPU-bound tasks are not time-sliced) cannot starve them: the
 * fetcher reads at most as many messages as there are free slots and starts one virtual thread per
 * message (it also reclaims stranded deliveries); the settler writes every outcome, fenced and in
 * batches ({@link Settler}); the keeper renews the leases of what this worker holds, running or
 * not yet settled; the mover puts due delayed messages (DELAY submissions, retry backoffs) on
 * their queues. Each loop survives any {@code Throwable} (logged with its stack, then a pause), and
 * {@link #health()} says whether the worker is still consuming.
 */
public final class WorkerRuntime implements Worker {
    private static final System.Logger LOG = System.getLogger(WorkerRuntime.class.getName());
    /**
     * Most messages asked for in one fetch (or reclaim), however many slots are free. A reply of
     * 100k entries (~15 MB) takes longer to decode than a command timeout: the client then
     * retries the read, and the first read's entries sit pending until reclaim.
     */
    private static final int FETCH_BATCH = 1000;
    private static final int MOVE_BATCH = 1000;
    /** Outcomes held while the broker is unreachable before finishing handlers wait. */
    private static final int SETTLEMENT_BUFFER = 100_000;
    private static final Duration MOVER_MAX_SLEEP = Duration.ofMillis(250);
    private static final Duration BROKER_ERROR_PAUSE = Duration.ofMillis(500);
    /** How long outcomes still unwritten at stop are tried before they are left to reclaim. */
    private static final Duration FLUSH_AT_STOP = Duration.ofSeconds(10);
    /** A loop that completes no round (success or failure) for this long past its own wait is stuck. */
    private static final Duration STALL_LIMIT = Duration.ofSeconds(60);
    /** Fetch failing for this long (past the poll timeout) makes the broker count as unreachable. */
    private static final Duration UNREACHABLE_AFTER = Duration.ofSeconds(5);
    /** A broker call this much slower than its own wait was likely retried by the client. */
    private static final Duration SLOW_CALL = Duration.ofSeconds(1);

    private final WorkerConfig config;
    /** The queues configured (logical). */
    private final List<String> logicalQueues;
    /** The physical queues read: every partition of each logical queue, refreshed about once a second. */
    private volatile List<String> queues;
    private final io.binomic.core.internal.PartitionRouter partitions;
    private long partitionsReadNanos;
    private final Broker broker;
    private final Scheduler scheduler;
    private final Clock clock;
    private final String consumerName;
    private final Semaphore slots;
    private final DeliveryProcessor processor;
    private final Settler settler;
    private final FlowLimiter limiter;
    /** Deliveries whose handler is running, by receipt. */
    private final Map<String, Running> running = new ConcurrentHashMap<>();
    /** Every delivery this worker holds (running, or finished and not yet settled), by receipt: the leases it renews. */
    private final Map<String, Delivery> held = new ConcurrentHashMap<>();
    /** Deliveries a broker handed out beyond the free slots: run as slots free, never at once. */
    private final Deque<Delivery> overflow = new ConcurrentLinkedDeque<>();
    private final List<Thread> loops = new ArrayList<>();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean active;
    private volatile boolean settling = true;
    private volatile long lastFetchRoundNanos = System.nanoTime();
    private volatile long fetchFailingSinceNanos;
    private volatile String lastFetchError = "";
    private final Map<String, Long> loopRoundNanos = new ConcurrentHashMap<>();

    private record Running(Delivery delivery, Thread thread) { }

    /** A settle call this slow means outcomes are not being written: stop taking new work until they are. */
    private static final Duration OUTCOMES_STUCK_AFTER = Duration.ofSeconds(1);
    private static final Duration OUTCOMES_STUCK_PAUSE = Duration.ofMillis(50);

    /** Receipts of running deliveries whose submitter asked to cancel them. */
    private final java.util.Set<String> cancelRequested = ConcurrentHashMap.newKeySet();
    /** Tracked jobs of the last fetches, marked started in one round trip: whether each may run. */
    private final Map<java.util.UUID, Boolean> startedInBulk = new ConcurrentHashMap<>();
    /** Threads running a handler, by receipt: the only ones a cancel interrupts (not one recording its outcome). */
    private final Map<String, Thread> inHandler = new ConcurrentHashMap<>();
    private final List<AutoCloseable> jobEventSubscriptions = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final boolean tracksJobs;
    /** Pause and unique jobs: which queues to fetch, which deliveries to park. */
    private final FlowGate flow;
    private final StatsRecorder stats;

    /**
     * @param maxResultBytes the largest encoded result a tracked job's record keeps (the broker's payload limit)
     */
    public WorkerRuntime(WorkerConfig config, List<String> queues, TaskDefaults defaults, Map<String, TaskBinding<?, ?>> handlers,
                         Broker broker, Scheduler scheduler, PayloadCodec codec, Clock clock, StatsRecorder stats,
                         int maxResultBytes, io.binomic.core.internal.PartitionRouter partitions) {
        this(config, queues, defaults, handlers, broker, scheduler, codec, clock, stats, TaskInvokers.forWorkers(), maxResultBytes, partitions);
    }

    WorkerRuntime(WorkerConfig config, List<String> queues, TaskDefaults defaults, Map<String, TaskBinding<?, ?>> handlers,
                  Broker broker, Scheduler scheduler, PayloadCodec codec, Clock clock, StatsRecorder stats, TaskInvoker invoker,
                  int maxResultBytes, io.binomic.core.internal.PartitionRouter partitions) {
        this.config = config;
        this.stats = stats;
        this.logicalQueues = List.copyOf(queues);
        this.partitions = partitions != null ? partitions : new io.binomic.core.internal.PartitionRouter(broker);
        this.queues = this.partitions.physical(this.logicalQueues);
        this.partitionsReadNanos = System.nanoTime();
        this.broker = broker;
        this.scheduler = scheduler;
        this.clock = clock;
        this.consumerName = config.consumerName().orElseGet(WorkerRuntime::defaultConsumerName);
        this.slots = new Semaphore(config.concurrency());
        this.processor = new DeliveryProcessor(handlers, defaults, codec, invoker, clock, stats, ThreadLocalRandom.current(),
                JobTracking.through(broker, consumerName, cancelRequested::contains, new JobTracking.WorkerHooks() {
                    @Override
                    public void started(String receipt, Thread thread) {
                        inHandler.put(receipt, thread);
                    }

                    @Override
                    public void ended(String receipt) {
                        inHandler.remove(receipt);
                    }

                    @Override
                    public Boolean startedWithItsFetch(java.util.UUID id) {
                        return startedInBulk.remove(id);
                    }

                    @Override
                    public boolean stopping() {
                        return !active;
                    }
                }, maxResultBytes));
        this.tracksJobs = handlers.values().stream().anyMatch(b -> b.task().isTracked());
        this.settler = new Settler(broker, consumerName, SETTLEMENT_BUFFER, held::get, d -> held.remove(d.receipt()));
        this.flow = new FlowGate(broker, this.queues, consumerName);
        this.limiter = new FlowLimiter(handlers, broker, consumerName, codec, this.logicalQueues);
        LOG.log(Level.DEBUG, "worker {0} uses the {1} task invoker", consumerName, invoker.name());
    }

    private static String defaultConsumerName() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            host = "host";
        }
        byte[] random = new byte[3];
        ThreadLocalRandom.current().nextBytes(random);
        return host.replaceAll("[^A-Za-z0-9_.-]", "_") + "-" + ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(random);
    }

    /** Starts the loops. */
    public synchronized void start() {
        if (active || stopped.getCount() == 0) {
            throw new IllegalStateException("a worker starts once");
        }
        active = true;
        if (tracksJobs) {
            subscribeToCancels();
        }
        loops.add(loop("fetch", this::fetchRound));
        loops.add(loop("settle", () -> settler.sendOnce(config.pollTimeout()) || settling));
        loops.add(loop("lease", this::leaseRound));
        loops.add(loop("move", this::moveRound));
        LOG.log(Level.INFO, "worker {0} started on queues {1} with concurrency {2}", consumerName, queues, config.concurrency());
    }

    /**
     * Reads the partitions of this worker's queues about once a second: a partition added while it
     * runs is read from then on (and listened to for cancels). A partition is never dropped while
     * the worker runs: lowering a queue's count leaves its highest partitions to be drained.
     */
    private void refreshPartitions() {
        long now = System.nanoTime();
        if (now - partitionsReadNanos < io.binomic.core.internal.PartitionRouter.REFRESH_MILLIS * 1_000_000) {
            return;
        }
        partitionsReadNanos = now;
        List<String> read = partitions.physical(logicalQueues);
        List<String> was = queues;
        if (read.equals(was) || was.containsAll(read)) {
            return;
        }
        List<String> grown = new java.util.ArrayList<>(was);
        List<String> added = read.stream().filter(q -> !was.contains(q)).toList();
        grown.addAll(added);
        queues = List.copyOf(grown);
        flow.queues(queues);
        LOG.log(Level.INFO, "worker {0}: now reads partitions {1} too", consumerName, added);
        if (tracksJobs) {
            subscribeToCancels(added);
        }
    }

    /** One round of a control loop; may block and may throw anything. Returns false when the loop is done. */
    private interface Round {
        boolean run() throws Exception;
    }

    /**
     * A control loop on a platform thread: rounds until interrupted or done. Any other throwable is
     * logged with its stack and the loop goes on after a pause; a loop that dies anyway shows as
     * {@link WorkerHealth.State#STALLED} in {@link #health()}.
     */
    private Thread loop(String name, Round round) {
        loopRoundNanos.put(name, System.nanoTime());
        return Thread.ofPlatform().daemon().name("binomic-" + name + "-" + consumerName).start(() -> {
            while (true) {
                try {
                    if (!round.run()) {
                        return;
                    }
                    loopRoundNanos.put(name, System.nanoTime());
                } catch (InterruptedException e) {
                    return;
                } catch (Throwable e) {
                    loopRoundNanos.put(name, System.nanoTime());
                    LOG.log(Level.ERROR, "worker " + consumerName + ": unexpected failure in the " + name
                            + " loop; it goes on in " + BROKER_ERROR_PAUSE.toMillis() + " ms", e);
                    if (!pause(BROKER_ERROR_PAUSE)) {
                        return;
                    }
                }
            }
        });
    }

    private boolean fetchRound() throws InterruptedException {
        if (!active) {
            return false;
        }
        if (!slots.tryAcquire(config.pollTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
            lastFetchRoundNanos = System.nanoTime(); // every slot busy: nothing to fetch, and that is healthy
            return true;
        }
        int free = 1 + slots.drainPermits();
        try {
            if (!active) {
                return false;
            }
            if (outcomesStuck()) {
                // Outcomes this worker cannot write yet (a settle call hanging on a killed connection,
                // Redis restarting) would run again elsewhere if this JVM died now: take no new work
                // until they are written, so a crash then costs the few it holds, not seconds of work.
                lastFetchRoundNanos = System.nanoTime();
                slots.release(free);
                free = 0;
                probeWhileOutcomesFail();
                Thread.sleep(OUTCOMES_STUCK_PAUSE.toMillis());
                return true;
            }
            refreshPartitions();
            free -= runOverflow(free);
            if (free > 0 && recoverRoundsLeft > 0 && System.nanoTime() - nextRecoverNanos >= 0 && fetchFailingSinceNanos == 0) {
                free -= recoverOwn(free);
            }
            // Reclaim from the fetcher, which owns the free slots: stranded messages are taken
            // before new ones, and never beyond this worker's capacity.
            if (free > 0 && System.nanoTime() - nextReclaimNanos >= 0) {
                nextReclaimNanos = System.nanoTime() + config.reclaimInterval().toNanos();
                free -= reclaimStranded(Math.min(free, FETCH_BATCH));
            }
            List<String> fetchQueues = flow.fetchable();
            if (free > 0 && fetchQueues.isEmpty()) {
                lastFetchRoundNanos = System.nanoTime(); // every queue paused: healthy, and nothing to fetch
                Thread.sleep(Math.min(config.pollTimeout().toMillis(), FlowGate.REFRESH_MILLIS));
            } else if (free > 0) {
                List<Delivery> deliveries;
                long callStarted = System.nanoTime();
                fetchCallSinceNanos = callStarted;
                try {
                    deliveries = broker.fetch(fetchQueues, consumerName, Math.min(free, FETCH_BATCH), config.pollTimeout());
                } catch (RuntimeException e) {
                    fetchFailed(e);
                    return true;
                } finally {
                    fetchCallSinceNanos = 0;
                }
                if (System.nanoTime() - callStarted > config.pollTimeout().plus(SLOW_CALL).toNanos()) {
                    // The client may have retried a read whose first reply was lost (Redis hung):
                    // that read handed entries to this consumer that it never received.
                    scheduleRecovery();
                }
                fetchSucceeded();
                deliveries = flow.admit(deliveries, this::park);
                deliveries = limiter.admit(deliveries); // the ones over a rate or concurrency limit wait
                if (tracksJobs) {
                    startTrackedInBulk(deliveries);
                }
                for (Delivery d : deliveries) {
                    if (free > 0) {
                        dispatch(d);
                        free--;
                    } else {
                        hold(d);
                    }
                }
                if (deliveries.size() > Math.min(config.concurrency(), FETCH_BATCH)) {
                    LOG.log(Level.ERROR, "worker {0}: the broker handed out {1} deliveries for a fetch of at most {2}; the extra ones "
                            + "wait for a free slot (a broker bug)", consumerName, deliveries.size(), config.concurrency());
                }
            } else {
                lastFetchRoundNanos = System.nanoTime();
            }
            return true;
        } finally {
            slots.release(free);
        }
    }

    private long nextReclaimNanos = System.nanoTime();
    private int recoverRoundsLeft;
    private long nextRecoverNanos;
    private volatile long fetchCallSinceNanos;

    private void fetchSucceeded() {
        lastFetchRoundNanos = System.nanoTime();
        settler.brokerAnswered();
        if (fetchFailingSinceNanos != 0) {
            LOG.log(Level.INFO, "worker {0}: fetching again after {1} ms", consumerName,
                    String.valueOf(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - fetchFailingSinceNanos)));
            fetchFailingSinceNanos = 0;
            fetchFailureLog.reset();
        }
    }

    private final io.binomic.core.internal.RepeatedErrorLog fetchFailureLog = new io.binomic.core.internal.RepeatedErrorLog();

    private void fetchFailed(RuntimeException e) {
        lastFetchError = String.valueOf(e.getMessage());
        scheduleRecovery();
        if (fetchFailingSinceNanos == 0) {
            fetchFailingSinceNanos = System.nanoTime();
        }
        String error = io.binomic.core.internal.RepeatedErrorLog.brief(e);
        if (fetchFailureLog.shouldLog(error)) { // a worker whose every queue is refused fails twice a second
            LOG.log(Level.WARNING, "worker {0}: fetching failed ({1}); retrying every {2} ms", consumerName, error,
                    String.valueOf(BROKER_ERROR_PAUSE.toMillis()));
        }
        pause(BROKER_ERROR_PAUSE);
    }

    /**
     * A read whose reply was lost (a timeout while Redis hung) may still have handed entries to this
     * consumer: once fetching works, look for them, twice, a second apart.
     */
    private void scheduleRecovery() {
        recoverRoundsLeft = 2;
        nextRecoverNanos = System.nanoTime();
    }

    /**
     * Runs (up to {@code free}, holding the rest) the deliveries pending under this consumer that it
     * does not know: handed out by a read whose reply was lost. They never ran, so they run with the
     * attempt they were handed out as. Returns how many slots that used.
     */
    private int recoverOwn(int free) {
        recoverRoundsLeft--;
        nextRecoverNanos = System.nanoTime() + Duration.ofSeconds(1).toNanos();
        int started = 0;
        boolean lookAgain = false;
        for (String queue : queues) {
            List<Delivery> pending;
            try {
                pending = broker.capability(LostReadRecovery.class).map(r -> r.pendingOf(queue, consumerName, FETCH_BATCH)).orElse(List.of());
            } catch (RuntimeException e) {
                // one broken queue must not keep the others' lost deliveries waiting a lease (and an attempt)
                LOG.log(Level.WARNING, "worker {0}: could not look for deliveries of queue {1} it never received: {2}",
                        consumerName, queue, e.getMessage());
                lookAgain = true;
                continue;
            }
            for (Delivery d : pending) {
                if (held.containsKey(d.receipt()) || settler.settledRecently(d.receipt()) || settler.gaveUp(d.receipt())) {
                    continue; // running, written, or left on purpose for reclaim (at its next delivery count)
                }
                LOG.log(Level.WARNING, "worker {0}: entry {1} of queue {2} was handed to it by a read whose reply was lost; running it now",
                        consumerName, d.receipt(), queue);
                if (started < free) {
                    dispatch(d);
                    started++;
                } else {
                    hold(d);
                }
            }
        }
        if (lookAgain) {
            recoverRoundsLeft++;
        }
        return started;
    }

    /** A delivery handed out beyond the free slots: held (its lease renewed) until a slot frees. */
    private void hold(Delivery d) {
        held.put(d.receipt(), d);
        overflow.addLast(d);
    }

    private int runOverflow(int free) {
        int started = 0;
        Delivery d;
        while (started < free && (d = overflow.pollFirst()) != null) {
            dispatch(held.getOrDefault(d.receipt(), d));
            started++;
        }
        return started;
    }

    /** Takes over up to {@code free} stranded deliveries and runs them; returns how many slots that used. */
    private int reclaimStranded(int free) {
        int taken = 0;
        for (String queue : queues) {
            if (taken == free) {
                break;
            }
            try {
                for (Delivery d : limiter.admit(broker.reclaim(queue, consumerName, config.leaseTimeout(), free - taken))) {
                    settler.reclaimed(d.receipt());
                    if (held.computeIfPresent(d.receipt(), (receipt, before) -> d) != null) {
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
                    dispatch(d);
                    taken++;
                }
                broker.removeIdleConsumers(queue, config.leaseTimeout().multipliedBy(10));
                broker.capability(SettledCleanup.class).ifPresent(cleanup -> cleanup.removeSettled(queue));
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "worker {0}: reclaim on queue {1} failed: {2}", consumerName, queue,
                        io.binomic.core.internal.RepeatedErrorLog.brief(e));
            }
        }
        return taken;
    }

    /**
     * Listens for cancels of the jobs this worker may run: a running job asked to cancel is
     * interrupted here, in whichever process submitted the cancel.
     */
    private void subscribeToCancels() {
        subscribeToCancels(queues);
    }

    private void subscribeToCancels(List<String> toQueues) {
        JobStore store = broker.capability(JobStore.class).orElse(null);
        if (store == null) {
            LOG.log(Level.DEBUG, "worker {0}: {1}", consumerName, Capabilities.missing(broker, JobStore.class, "running jobs cannot be cancelled"));
            return;
        }
        for (String queue : toQueues) {
            try {
                jobEventSubscriptions.add(store.subscribeJobEvents(queue, this::onJobEvent));
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "worker {0}: cannot listen for job cancels on queue {1}: {2}", consumerName, queue, e.getMessage());
            }
        }
    }

    private void onJobEvent(JobEvent event) {
        if (event.kind() != JobEvent.Kind.CANCEL_REQUESTED) {
            return;
        }
        for (Running r : running.values()) {
            if (r.delivery().message().map(m -> m.id().equals(event.id())).orElse(false)) {
                LOG.log(Level.INFO, "worker {0}: cancelling running job {1} as asked", consumerName, event.id());
                cancelRequested.add(r.delivery().receipt());
                // Atomic with the handler's end: a thread already recording its outcome is left alone.
                inHandler.computeIfPresent(r.delivery().receipt(), (receipt, thread) -> {
                    thread.interrupt();
                    return thread;
                });
            }
        }
    }

    /**
     * Marks the tracked jobs of one fetch started in one round trip, instead of one each as their
     * handlers begin. A job marked here whose handler never runs (its delivery is held, or it is
     * dead-lettered before it runs) ends by its settlement like any other.
     */
    private void startTrackedInBulk(List<Delivery> deliveries) {
        List<io.binomic.api.spi.JobUpdate> starts = new ArrayList<>();
        Instant now = clock.instant();
        for (Delivery d : deliveries) {
            d.message().filter(io.binomic.api.Message::isTracked).ifPresent(m ->
                    starts.add(io.binomic.core.internal.jobs.JobRecordFormat.started(m, d.queue(), d.attempt(), consumerName, now)));
        }
        if (starts.size() < 2) {
            return; // one job is marked as its handler begins, in the same single round trip
        }
        JobStore store = broker.capability(JobStore.class).orElse(null);
        if (store == null) {
            return; // each is let run as it starts: JobTracking reports the missing records once
        }
        try {
            java.util.Set<java.util.UUID> notStarted = store.startJobs(starts);
            for (var start : starts) {
                startedInBulk.put(start.id(), !notStarted.contains(start.id()));
            }
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "worker {0}: marking {1} jobs started at once failed ({2}); each is marked as it starts",
                    consumerName, starts.size(), e.getMessage());
        }
    }

    /**
     * While outcomes fail to be written, asks the broker something cheap (one queue's stats, a
     * different queue each second): an answer tells the settler the broker is up and refuses that
     * batch (a queue's stream replaced by another type), which it then splits and gives up part by
     * part instead of holding every queue's work until the key is repaired. Nothing else would tell
     * it: the fetch is stopped meanwhile, and the leases held are those of the stuck outcomes.
     */
    private void probeWhileOutcomesFail() {
        long now = System.nanoTime();
        if (settler.failingSinceNanos() == 0 || now - nextProbeNanos < 0) {
            return;
        }
        nextProbeNanos = now + PROBE_EVERY.toNanos();
        List<String> all = queues;
        try {
            broker.stats(all.get(Math.floorMod(probeTurn++, all.size())));
            settler.brokerAnswered();
        } catch (RuntimeException e) {
            // that queue is the broken one, or the broker is away: another queue next time
        }
    }

    private static final Duration PROBE_EVERY = Duration.ofSeconds(1);
    private long nextProbeNanos;
    private int probeTurn;

    /** True while the settle call under way has taken longer than {@link #OUTCOMES_STUCK_AFTER}, or writes are failing. */
    private boolean outcomesStuck() {
        long now = System.nanoTime();
        long sending = settler.sendingSinceNanos();
        return settler.failingSinceNanos() != 0 || (sending != 0 && now - sending > OUTCOMES_STUCK_AFTER.toNanos());
    }

    /**
     * Parks a delivery of a paused queue or task: settled as due when it is resumed, attempt
     * unchanged. Until written, it is held (its lease renewed) like any other.
     */
    private void park(Delivery d) {
        held.put(d.receipt(), d);
        try {
            settler.submit(FlowGate.park(d));
        } catch (InterruptedException e) {
            held.remove(d.receipt()); // stopping: left pending, reclaim brings it back
            Thread.currentThread().interrupt();
        }
    }

    /** Runs {@code d} on its own virtual thread; the slot it holds is released when it ends. */
    private void dispatch(Delivery d) {
        if (flow.paused(d)) {
            park(d); // handed out by a reclaim or held since before the pause
            slots.release();
            return;
        }
        held.put(d.receipt(), d);
        Thread thread = Thread.ofVirtual().name("binomic-run-" + d.receipt()).unstarted(() -> {
            Outcome outcome = null;
            try {
                try {
                    outcome = processor.process(d);
                } catch (RuntimeException | Error e) {
                    // The processor records every task fault itself; reaching here is a bug. Left
                    // unsettled, the worker went on as if it were done while the delivery waited out
                    // its lease to run again, its cause nowhere but this log: it is a failed attempt.
                    LOG.log(Level.ERROR, "worker " + consumerName + ": unexpected failure processing " + d.receipt()
                            + "; recording it as a failed attempt", e);
                    outcome = processor.unexpectedFailure(d, e);
                }
                if (outcome instanceof Outcome.Settle(var settlement)) {
                    settler.submit(settlement);
                }
            } catch (InterruptedException e) {
                LOG.log(Level.WARNING, "worker {0}: interrupted before the outcome of {1} was queued; it stays pending for reclaim",
                        consumerName, d.receipt());
                outcome = null;
            } catch (RuntimeException | Error e) {
                LOG.log(Level.ERROR, "worker " + consumerName + ": unexpected failure queueing the outcome of " + d.receipt()
                        + "; it stays pending for reclaim", e);
                outcome = null;
            } finally {
                running.remove(d.receipt());
                cancelRequested.remove(d.receipt());
                if (tracksJobs) {
                    d.message().ifPresent(m -> startedInBulk.remove(m.id())); // one that never reached its start
                }
                if (!(outcome instanceof Outcome.Settle)) {
                    held.remove(d.receipt()); // left pending: stop renewing, so reclaim brings it back
                }
                slots.release();
            }
        });
        running.put(d.receipt(), new Running(d, thread));
        thread.start();
    }

    private final io.binomic.core.internal.RepeatedErrorLog renewalFailureLog = new io.binomic.core.internal.RepeatedErrorLog();

    private boolean leaseRound() throws InterruptedException {
        Thread.sleep(config.leaseTimeout().dividedBy(4));
        if (held.isEmpty()) {
            return true;
        }
        long roundEnds = System.nanoTime() + config.leaseTimeout().dividedBy(4).toNanos();
        while (true) {
            try {
                broker.renewLeases(consumerName, List.copyOf(held.values()));
                settler.brokerAnswered();
                renewalFailureLog.reset();
                return true;
            } catch (RuntimeException e) {
                // Retry soon rather than a whole period later: after an outage, the sooner the
                // leases are renewed, the smaller the chance another worker takes them over.
                // a queue whose key is broken fails every try (four a second) while the others' leases are renewed
                String error = io.binomic.core.internal.RepeatedErrorLog.brief(e);
                if (renewalFailureLog.shouldLog(error)) {
                    LOG.log(Level.WARNING, "worker {0}: lease renewal failed: {1}", consumerName, error);
                }
                if (System.nanoTime() - roundEnds >= 0) {
                    return true;
                }
                Thread.sleep(250);
            }
        }
    }

    private boolean moveRound() throws InterruptedException {
        if (!active) {
            return false;
        }
        Instant now = clock.instant();
        Duration sleep = MOVER_MAX_SLEEP;
        try {
            for (String queue : queues) {
                while (scheduler.moveDue(queue, now, MOVE_BATCH) == MOVE_BATCH) {
                    // A full batch means more may be due: keep moving before sleeping.
                }
                Optional<Instant> next = scheduler.nextDue(queue);
                if (next.isPresent()) {
                    Duration until = Duration.between(clock.instant(), next.get());
                    if (until.compareTo(sleep) < 0) {
                        sleep = until.isNegative() ? Duration.ZERO : until;
                    }
                }
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "worker {0}: moving due messages failed: {1}", consumerName, e.getMessage());
            sleep = BROKER_ERROR_PAUSE;
        }
        Thread.sleep(sleep);
        return true;
    }

    /** Sleeps; false when interrupted (the worker is stopping). */
    private static boolean pause(Duration d) {
        try {
            Thread.sleep(d);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public String consumerName() {
        return consumerName;
    }

    @Override
    public WorkerCounters counters() {
        return new WorkerCounters(running.size(), processor.succeeded.sum(), processor.failed.sum(),
                processor.retried.sum(), processor.deadLettered.sum(), settler.stale());
    }

    @Override
    public WorkerHealth health() {
        long now = System.nanoTime();
        Duration sinceFetch = Duration.ofNanos(now - lastFetchRoundNanos);
        Duration sinceSettlement = Duration.ofNanos(now - settler.lastWrittenNanos());
        int pending = settler.pending();
        if (active) {
            for (Thread loop : loops) {
                if (!loop.isAlive()) {
                    return new WorkerHealth(WorkerHealth.State.STALLED, sinceFetch, sinceSettlement, pending,
                            Optional.of(loop.getName() + " stopped"));
                }
            }
            long stuckAfter = config.pollTimeout().plus(config.leaseTimeout()).plus(STALL_LIMIT).toNanos();
            for (Map.Entry<String, Long> round : loopRoundNanos.entrySet()) {
                if (now - round.getValue() > stuckAfter) {
                    return new WorkerHealth(WorkerHealth.State.STALLED, sinceFetch, sinceSettlement, pending,
                            Optional.of("the " + round.getKey() + " loop has not completed a round for "
                                    + TimeUnit.NANOSECONDS.toSeconds(now - round.getValue()) + " s"));
                }
            }
        }
        long unreachableAfter = UNREACHABLE_AFTER.plus(config.pollTimeout()).toNanos();
        long fetchCall = fetchCallSinceNanos;
        if (fetchCall != 0 && now - fetchCall > unreachableAfter) {
            return new WorkerHealth(WorkerHealth.State.BROKER_UNREACHABLE, sinceFetch, sinceSettlement, pending,
                    Optional.of("a fetch has not returned for " + TimeUnit.NANOSECONDS.toSeconds(now - fetchCall) + " s"));
        }
        long settleCall = settler.sendingSinceNanos();
        if (settleCall != 0 && now - settleCall > unreachableAfter) {
            return new WorkerHealth(WorkerHealth.State.BROKER_UNREACHABLE, sinceFetch, sinceSettlement, pending,
                    Optional.of("writing outcomes has not returned for " + TimeUnit.NANOSECONDS.toSeconds(now - settleCall) + " s"));
        }
        long fetchFailing = fetchFailingSinceNanos;
        long settleFailing = settler.failingSinceNanos();
        if (fetchFailing != 0 && now - fetchFailing > unreachableAfter) {
            return new WorkerHealth(WorkerHealth.State.BROKER_UNREACHABLE, sinceFetch, sinceSettlement, pending,
                    Optional.of("fetching has failed for " + TimeUnit.NANOSECONDS.toSeconds(now - fetchFailing) + " s: " + lastFetchError));
        }
        if (settleFailing != 0 && now - settleFailing > unreachableAfter) {
            return new WorkerHealth(WorkerHealth.State.BROKER_UNREACHABLE, sinceFetch, sinceSettlement, pending,
                    Optional.of("writing outcomes has failed for " + TimeUnit.NANOSECONDS.toSeconds(now - settleFailing) + " s: "
                            + settler.lastError()));
        }
        return new WorkerHealth(WorkerHealth.State.CONSUMING, sinceFetch, sinceSettlement, pending, Optional.empty());
    }

    @Override
    public void stop(Duration grace) {
        synchronized (this) {
            if (loops.isEmpty()) {
                stopped.countDown();
            }
            if (!active) {
                awaitStopped();
                return;
            }
            active = false;
        }
        LOG.log(Level.INFO, "worker {0} stopping: {1} task(s) running, grace {2}", consumerName, running.size(), grace);
        Thread fetcher = loops.get(0);
        Thread settle = loops.get(1);
        Thread lease = loops.get(2);
        Thread mover = loops.get(3);
        mover.interrupt();
        for (AutoCloseable subscription : jobEventSubscriptions) {
            try {
                subscription.close();
            } catch (Exception e) {
                LOG.log(Level.DEBUG, "worker {0}: closing a job event subscription failed: {1}", consumerName, e.getMessage());
            }
        }
        join(fetcher, config.pollTimeout().plusSeconds(5));
        overflow.forEach(d -> held.remove(d.receipt())); // never started: left pending for reclaim
        overflow.clear();
        long deadline = System.nanoTime() + grace.toNanos();
        while (!running.isEmpty() && System.nanoTime() < deadline) {
            pause(Duration.ofMillis(10));
        }
        if (!running.isEmpty()) {
            LOG.log(Level.WARNING, "worker {0}: cancelling {1} task(s) still running after the grace; they stay pending for reclaim",
                    consumerName, running.size());
            running.values().forEach(r -> r.thread().interrupt());
            long cancelDeadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (!running.isEmpty() && System.nanoTime() < cancelDeadline) {
                pause(Duration.ofMillis(10));
            }
        }
        // Write what is left (the lease loop keeps those deliveries ours meanwhile), then stop.
        settling = false;
        join(settle, FLUSH_AT_STOP.plus(config.pollTimeout()));
        if (settle.isAlive()) {
            settle.interrupt();
            join(settle, Duration.ofSeconds(5));
        }
        int unwritten = settler.pending();
        if (unwritten > 0) {
            LOG.log(Level.ERROR, "worker {0}: {1} outcome(s) could not be written before stopping ({2}); their deliveries stay "
                    + "pending and run again after reclaim", consumerName, unwritten, settler.lastError());
        }
        lease.interrupt();
        join(lease, Duration.ofSeconds(10));
        join(mover, Duration.ofSeconds(10));
        WorkerCounters c = counters();
        LOG.log(Level.INFO, "worker {0} stopped: {1} succeeded, {2} failed, {3} retried, {4} dead-lettered, {5} stale outcome(s),"
                + " {6} outcome(s) given up (left to reclaim)", consumerName, c.succeeded(), c.failed(), c.retried(), c.deadLettered(),
                c.staleSettlements(), settler.abandoned());
        stopped.countDown();
    }

    private void awaitStopped() {
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void join(Thread t, Duration max) {
        try {
            t.join(max);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public boolean isStopped() {
        return stopped.getCount() == 0;
    }

    @Override
    public void close() {
        stop(config.shutdownGrace());
    }

    @Override
    public String toString() {
        return "Worker[" + consumerName + ", queues=" + queues + "]";
    }
}

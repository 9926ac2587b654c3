package io.binomic.core.internal.worker;

import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Workflows;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.core.Worker;
import io.binomic.core.WorkerCounters;
import io.binomic.core.WorkerHealth;
import io.binomic.core.internal.PartitionRouter;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.text.MessageFormat;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A worker in this JVM: wires its parts and runs their lifecycle (start, stop with a grace, the
 * final flush of outcomes). Its control loops each run on a platform thread of their own, so
 * handlers that keep the virtual-thread carriers busy cannot starve them: the {@link Fetcher}
 * reads what the free slots can take and the {@link Dispatcher} runs each delivery on a virtual
 * thread; the settle loop writes every outcome, fenced and in batches ({@link Settler}); the
 * {@link LeaseKeeper} renews the leases of what this worker holds; the {@link DueMover} puts due
 * delayed messages on their queues. The dispatcher also interrupts jobs asked to cancel, and
 * {@link HealthCheck} says whether the worker is still consuming.
 */
public final class WorkerRuntime implements Worker {
    private static final System.Logger LOG = System.getLogger(WorkerRuntime.class.getName());
    /** Outcomes held while the broker is unreachable before finishing handlers wait. */
    private static final int SETTLEMENT_BUFFER = 100_000;
    /**
     * What a stop takes beyond its grace, at most: tasks still running are interrupted and waited for
     * {@link #TASKS_END} at most, the outcomes left are written until {@link #LOOP_END} before its end
     * (those held through an outage were being written since the stop began), then the loops end.
     */
    public static final Duration STOP_BEYOND_GRACE = Duration.ofMillis(1500);
    /** The longest interrupted tasks are waited for after the grace. */
    private static final Duration TASKS_END = Duration.ofSeconds(1);
    /** The least left for writing outcomes once the tasks interrupted after the grace ended. */
    private static final Duration FLUSH_AFTER_TASKS = Duration.ofMillis(700);
    /** Kept at the end of a stop for its loops to end and its last lines to be logged. */
    private static final Duration LOOP_END = Duration.ofMillis(300);
    /** Longest a stop waits for the broker to take this worker off its queues. */
    private static final Duration LEAVE_WAIT = Duration.ofSeconds(3);

    private final WorkerConfig config;
    private final String consumerName;
    private final WorkerQueues queues;
    private final Broker broker;
    private final DeliveryProcessor processor;
    private final Settler settler;
    private final FlowGate flow;
    private final Dispatcher dispatcher;
    private final ControlLoop fetchLoop;
    private final Fetcher fetcher;
    private final ControlLoop settleLoop;
    private final ControlLoop leaseLoop;
    private final ControlLoop moveLoop;
    private final ControlLoop houseLoop;
    private final HealthCheck healthCheck;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private boolean started;
    private volatile boolean active;
    private volatile boolean settling = true;

    public WorkerRuntime(WorkerConfig config, WorkerTasks tasks, WorkerServices services) {
        this(config, tasks, services, TaskInvokers.forWorkers());
    }

    WorkerRuntime(WorkerConfig config, WorkerTasks tasks, WorkerServices services, TaskInvoker invoker) {
        this.config = config;
        this.consumerName = config.consumerName().orElseGet(WorkerRuntime::defaultConsumerName);
        Broker broker = services.broker();
        this.broker = broker;
        WorkerContext context = new WorkerContext(config, consumerName, broker, services.clock(), services.stats(), () -> active);
        PartitionRouter partitions = services.partitions() != null ? services.partitions() : new PartitionRouter(broker);
        this.queues = new WorkerQueues(partitions, tasks.queues(), consumerName, this::partitionsAdded);
        // The jobs of a batch or a workflow are tracked whatever their task says (a cancel reaches them through their records),
        // so a worker on a broker with either listens for cancels too; an untracked message still costs nothing more.
        TrackedJobs tracked = new TrackedJobs(context, tasks.handlers().values().stream().anyMatch(b -> b.task().isTracked())
                || broker.capability(Batches.class).isPresent() || broker.capability(Workflows.class).isPresent());
        this.processor = new DeliveryProcessor(tasks, invoker, services.clock(), services.stats(), ThreadLocalRandom.current(),
                JobTracking.through(broker, consumerName, tracked::cancelRequested, tracked, tasks.maxResultBytes()))
                .observedBy(services.runObservers());
        Map<String, Delivery> held = new ConcurrentHashMap<>();
        this.settler = new Settler(broker, consumerName, SETTLEMENT_BUFFER, held::get, d -> held.remove(d.key()));
        this.flow = new FlowGate(broker, queues.all(), consumerName);
        FlowLimiter limiter = new FlowLimiter(tasks.handlers(), broker, consumerName, tasks.codec(), queues.logical(),
                config.leaseTimeout());
        this.dispatcher = new Dispatcher(context, processor, settler, flow, held, tracked);
        tracked.checkBeforeRunWith(dispatcher::stillOursToRun, dispatcher::lateForItsStart);
        TakeFailures takeFailures = new TakeFailures();
        Reclaimer reclaimer = new Reclaimer(context, dispatcher, settler, limiter, takeFailures);
        this.fetcher = new Fetcher(context, dispatcher, settler, queues, flow, limiter, reclaimer, takeFailures);
        Housekeeper housekeeper = new Housekeeper(context, queues, flow, limiter, reclaimer);
        this.fetchLoop = new ControlLoop("fetch", consumerName, fetcher);
        this.houseLoop = new ControlLoop("housekeeping", consumerName, housekeeper);
        this.settleLoop = new ControlLoop("settle", consumerName, () -> settler.sendOnce(config.pollTimeout()) || settling);
        LeaseKeeper leases = new LeaseKeeper(context, held, settler, dispatcher::leasesLost);
        this.leaseLoop = new ControlLoop("lease", consumerName, leases);
        this.moveLoop = new ControlLoop("move", consumerName, new DueMover(context, services.scheduler(), queues));
        this.healthCheck = new HealthCheck(config, fetcher, housekeeper, settler, leases,
                List.of(fetchLoop, settleLoop, leaseLoop, moveLoop, houseLoop));
        LOG.log(Level.DEBUG, "worker {0} uses the {1} task invoker", consumerName, invoker.name());
    }

    private static String defaultConsumerName() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            host = "host";
        }
        byte[] random = new byte[3];
        ThreadLocalRandom.current().nextBytes(random);
        return host.replaceAll("[^A-Za-z0-9_.-]", "_") + "-" + ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(random);
    }

    /** A partition added while the worker runs: fetched from, and listened to for cancels, from now on. */
    private void partitionsAdded(List<String> added) {
        flow.queues(queues.all());
        dispatcher.listenForCancels(added);
    }

    public synchronized void start() {
        if (active || stopped.getCount() == 0) {
            throw new IllegalStateException("a worker starts once");
        }
        active = true;
        dispatcher.listenForCancels(queues.all());
        started = true;
        LocalPauses.add(flow);
        List.of(fetchLoop, settleLoop, leaseLoop, moveLoop, houseLoop).forEach(ControlLoop::start);
        LOG.log(Level.INFO, "worker {0} started on queues {1} with concurrency {2}", consumerName, queues.all(), config.concurrency());
    }

    /** Whether this worker reads {@code queue}: one of its queues, or a partition of one. */
    public boolean reads(String queue) { return queues.all().contains(queue) || queues.logical().contains(queue); }

    @Override
    public String consumerName() { return consumerName; }

    @Override
    public WorkerCounters counters() {
        // Held first: a success is counted before its outcome is handed to the settler, so every one held is among those read after.
        HeldOutcomes held = settler.held();
        return new WorkerCounters(dispatcher.runningCount(), processor.succeeded.sum(), processor.failed.sum(),
                processor.retried.sum(), processor.deadLettered.sum(), settler.stale.sum(), held.total, held.succeeded);
    }

    @Override
    public WorkerHealth health() { return healthCheck.check(active); }

    /**
     * Stops taking work, lets what runs finish within {@code grace} (then interrupts it), writes
     * the outcomes left, and stops every loop, all within {@link #stopBudget}: a master kills its
     * worker JVM a kill grace after that. Outcomes are written throughout (the settle loop never
     * pauses for the stop), so those held through an outage are written as soon as the broker is
     * back; those still unwritten at the end are given up, their deliveries left pending for
     * reclaim. The lease loop runs until the last outcome is written or given up, so no delivery
     * this worker still holds passes to another worker meanwhile.
     */
    @Override
    public void stop(Duration grace) {
        String lastLine = stopWithoutLastLine(grace);
        if (lastLine != null) {
            LOG.log(Level.INFO, lastLine);
        }
    }

    /**
     * {@link #stop(Duration)}, returning its last line (the counts) instead of logging it, once the worker counts as
     * stopped: for a caller with more to say at the end, such as a worker JVM closing its broker, whose line would
     * otherwise come after it. Null when another call stopped the worker (this one waited for it).
     */
    public String stopWithoutLastLine(Duration grace) {
        synchronized (this) {
            if (!started) {
                stopped.countDown();
            }
            if (!active) {
                awaitStopped();
                return null;
            }
            active = false;
        }
        long began = System.nanoTime();
        long graceEnds = began + grace.toNanos();
        long deadline = graceEnds + STOP_BEYOND_GRACE.toNanos();
        LOG.log(Level.INFO, "worker {0} stopping: {1} task(s) running, {2} outcome(s) held, grace {3}, ends within {4}",
                consumerName, dispatcher.runningCount(), settler.pending(), grace, stopBudget(grace));
        moveLoop.interrupt();
        houseLoop.interrupt();
        fetcher.interruptReclaim();
        // Unsubscribing waits on the broker: against one that does not answer it must not hold the stop.
        Thread unsubscribing = Thread.ofVirtual().name("binomic-unsubscribe-" + consumerName).start(dispatcher::close);
        // The fetch under way ends within the poll timeout when the broker answers; one caught against a broker that
        // does not (a read, the probe of stuck outcomes, a reclaim) is cut off at the end of the grace (or of the poll
        // timeout, with a shorter grace), leaving time for the tasks and outcomes: what it may have read stays pending
        // for reclaim.
        long fetchEnds = Math.min(Math.max(graceEnds, began + config.pollTimeout().toNanos() + LOOP_END.toNanos()),
                deadline - FLUSH_AFTER_TASKS.toNanos());
        fetchLoop.join(until(fetchEnds));
        if (fetchLoop.isAlive()) {
            fetchLoop.interrupt();
            fetchLoop.join(until(Math.min(deadline, System.nanoTime() + LOOP_END.toNanos())));
        }
        LocalPauses.remove(flow);
        dispatcher.dropOverflow();
        dispatcher.awaitIdle(until(graceEnds));
        int cutOff = dispatcher.runningCount();
        if (cutOff > 0) {
            LOG.log(Level.WARNING, "worker {0}: cancelling {1} task(s) still running after the grace; each is put back, due now with "
                    + "its attempt unchanged, once it ends (one that ignores the interrupt stays pending for reclaim)",
                    consumerName, dispatcher.runningCount());
            dispatcher.interruptAll();
            dispatcher.awaitIdle(until(Math.min(deadline - FLUSH_AFTER_TASKS.toNanos(), System.nanoTime() + TASKS_END.toNanos())));
        }
        // Write what is left (the lease loop keeps those deliveries ours meanwhile); the loop ends once nothing is.
        settling = false;
        long flushEnds = deadline - LOOP_END.toNanos();
        settleLoop.join(until(flushEnds));
        if (settleLoop.isAlive()) {
            settleLoop.interrupt();
            settleLoop.join(until(Math.max(flushEnds, System.nanoTime()) + LOOP_END.toNanos() / 2));
        }
        Settler.GivenUp givenUp = settler.giveUpAtStop();
        int unwritten = givenUp.count();
        if (unwritten > 0) {
            LOG.log(Level.ERROR, "worker {0}: {1} outcome(s) could not be written before stopping ({2}); their deliveries stay "
                    + "pending and may run again after reclaim (a write already sent when the broker stopped answering may still land "
                    + "once it answers, and that job then does not run again)", consumerName, unwritten, givenUp.byQueue());
        }
        leaseLoop.interrupt();
        // Loops caught in a broker call that ignores the interrupt are daemon threads: left to end with the JVM.
        for (ControlLoop loop : List.of(leaseLoop, moveLoop, houseLoop)) {
            loop.join(until(deadline));
        }
        try {
            unsubscribing.join(until(deadline));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (unwritten == 0) {
            leaveQueues(until(deadline));
        }
        WorkerCounters c = counters();
        String lastLine = MessageFormat.format("worker {0} stopped in {1} ms: {2} succeeded, {3} failed, {4} retried, {5} dead-lettered, "
                + "{6} stale outcome(s), {7} outcome(s) not written (given up: their deliveries may run again after reclaim), "
                + "{8} task(s) cut off by the grace (interrupted and put back, attempt unchanged, unless counted in the outcomes not written)",
                consumerName, String.valueOf(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began)), c.succeeded(), c.failed(),
                c.retried(), c.deadLettered(), c.staleSettlements(), settler.abandoned.sum(), cutOff);
        stopped.countDown();
        return lastLine;
    }

    /**
     * The longest {@link #stop} takes with {@code grace}: the grace for what runs, then {@link #STOP_BEYOND_GRACE}
     * to interrupt what still runs, write the last outcomes (given up after that) and end the loops. A master's wait
     * for a draining worker JVM is derived from it.
     */
    public static Duration stopBudget(Duration grace) { return grace.plus(STOP_BEYOND_GRACE); }

    /** From now until {@code nanoTime} ({@link System#nanoTime()}); a millisecond when that is past. */
    private static Duration until(long nanoTime) {
        return Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(1), nanoTime - System.nanoTime()));
    }

    /**
     * Takes this worker off its queues' consumers, so that a queue's view counts only the workers that read it. The
     * broker keeps a consumer that still holds deliveries (an outcome not written, a task cut off by the grace):
     * they stay pending for reclaim. Skipped when outcomes were given up or the broker does not answer, and given at
     * most {@link #LEAVE_WAIT}, and no more than {@code left} of the stop's budget: a client's retries against a
     * broker that is down would hold the stop for as long (about 15 s on Redis) for what a live worker's idle
     * cleanup does anyway.
     */
    private void leaveQueues(Duration left) {
        if (healthCheck.check(false).state() == WorkerHealth.State.BROKER_UNREACHABLE) {
            return;
        }
        Thread leaving = Thread.ofVirtual().name("binomic-leave-" + consumerName).start(() -> {
            for (String queue : queues.all()) {
                try {
                    broker.removeConsumer(queue, consumerName);
                } catch (RuntimeException e) {
                    LOG.log(Level.DEBUG, "worker {0}: could not leave queue {1} ({2}); its consumer goes once idle",
                            consumerName, queue, e.getMessage());
                }
            }
        });
        try {
            Duration wait = left.compareTo(LEAVE_WAIT) < 0 ? left : LEAVE_WAIT;
            if (!leaving.join(wait)) {
                LOG.log(Level.DEBUG, "worker {0}: leaving its queues takes longer than {1}; their consumers go once idle",
                        consumerName, wait);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void awaitStopped() {
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public boolean isStopped() { return stopped.getCount() == 0; }

    @Override
    public void close() { stop(config.shutdownGrace()); }

    @Override
    public String toString() { return "Worker[" + consumerName + ", queues=" + queues + "]"; }
}

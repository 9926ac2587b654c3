package io.binomic.core.internal.process;

import io.binomic.api.BinomicConfig;
import io.binomic.core.Binomic;
import io.binomic.core.Worker;
import io.binomic.core.WorkerHealth;
import io.binomic.core.internal.CoreAccess;
import io.binomic.core.internal.FlowStats;
import io.binomic.core.internal.worker.WorkerRuntime;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Main class of a worker JVM started by the {@link Master}. It maps the master's segment, builds
 * a Binomic instance with the application's tasks (found with {@code TaskProvider} on the module
 * path), runs one worker and reports through its slot: pid, heartbeat, state, counters and health every
 * heartbeat interval. It obeys the master's commands and also stops when the master process is
 * gone (an orphaned worker would otherwise run unsupervised) or when it gets SIGTERM, SIGINT or SIGHUP.
 *
 * <p>Exit codes: 0 after a clean stop (a drain after SIGTERM, SIGINT or SIGHUP included), 2 for bad arguments, 3 when start-up failed (the reason is
 * on stderr, which the master redirects to the worker's log file), 1 for anything else.
 */
public final class WorkerProcessMain {
    private static final System.Logger LOG = System.getLogger(WorkerProcessMain.class.getName());

    static final int EXIT_OK = 0;
    static final int EXIT_FAILED = 1;
    static final int EXIT_USAGE = 2;
    static final int EXIT_STARTUP_FAILED = 3;
    /**
     * The longest a drained worker spends closing its Binomic instance (its broker connections) before it exits: on a
     * live broker that takes a few milliseconds, against one that does not answer it would take the client's retries.
     */
    static final Duration CLOSE_WAIT = Duration.ofMillis(500);
    /** How often, between heartbeats, the worker's health is read for a change of state to publish at once. */
    static final long HEALTH_CHECK_MILLIS = 250;

    private final WorkerLaunch launch;
    private final BinomicConfig config;
    private final WorkerSlots.Slot slot;
    private final long masterPid;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile Worker worker;
    /** The batch callbacks this process's worker started; set before {@link #worker}, which publishing reads first. */
    private volatile FlowStats flows;
    private volatile WorkerCommand signalled = WorkerCommand.NONE;

    private WorkerProcessMain(WorkerLaunch launch, BinomicConfig config, WorkerSlots slots) {
        this.launch = launch;
        this.config = config;
        this.slot = slots.slot(launch.slot());
        this.masterPid = slots.masterPid();
    }

    public static void main(String[] args) {
        RedisPingLog.quietUnlessConfigured();
        WorkerLaunch launch;
        try {
            launch = WorkerLaunch.parse(Arrays.asList(args));
        } catch (IllegalArgumentException e) {
            System.err.println("binomic worker: " + e.getMessage());
            System.exit(EXIT_USAGE);
            return;
        }
        System.exit(run(launch));
    }

    private static int run(WorkerLaunch launch) {
        WorkerSlots slots;
        try {
            slots = WorkerSlots.open(launch.segment());
            slots.slot(launch.slot());
        } catch (RuntimeException e) {
            System.err.println("binomic worker " + launch.slot() + ": start-up failed: cannot use the master's segment: "
                    + e.getMessage());
            return EXIT_STARTUP_FAILED;
        }
        BinomicConfig config;
        try {
            config = settings(launch.settings());
        } catch (RuntimeException e) {
            System.err.println("binomic worker " + launch.slot() + ": start-up failed: " + e.getMessage());
            return EXIT_STARTUP_FAILED;
        }
        // What this worker got from its master, so an operator (and a test) can see each setting arrived.
        LOG.log(Level.INFO, "worker {0} settings from {1}: {2}", launch.slot(), launch.settings(), config);
        // The segment stays mapped until the process exits: the heartbeat thread may write until then.
        return new WorkerProcessMain(launch, config, slots).run();
    }

    private int run() {
        slot.pid(ProcessHandle.current().pid());
        slot.state(WorkerState.STARTING);
        slot.heartbeat(System.currentTimeMillis());
        Thread heartbeat = startHeartbeat();
        // SIGTERM, SIGINT and SIGHUP drain the worker on its main thread, which then exits 0; the hook stays for the rest
        // (System.exit from a task, a JVM where the signals cannot be handled).
        DrainSignals.install(() -> signalled = WorkerCommand.DRAIN);
        Runtime.getRuntime().addShutdownHook(new Thread(this::stopOnSignal, "binomic-worker-sigterm"));

        Binomic binomic;
        try {
            binomic = startBinomic();
        } catch (RuntimeException e) {
            // One line an operator can act on, then the stack for the details.
            System.err.println("binomic worker " + launch.slot() + ": start-up failed: " + e);
            e.printStackTrace(System.err);
            slot.state(WorkerState.STOPPED);
            stopped.countDown();
            return EXIT_STARTUP_FAILED;
        }
        slot.state(WorkerState.RUNNING);
        LOG.log(Level.INFO, "worker {0} (pid {1,number,#}) running as consumer {2}", launch.slot(),
                ProcessHandle.current().pid(), worker.consumerName());
        try {
            Command command = awaitCommand();
            slot.state(WorkerState.DRAINING);
            Duration grace = command.command() == WorkerCommand.STOP ? Duration.ZERO : config.worker().shutdownGrace();
            LOG.log(Level.INFO, "worker {0}: {1} ({2}), grace {3,number,#} ms", launch.slot(), command.command(), command.from(),
                    grace.toMillis());
            // The worker's last line comes after the close, saying how that went: a warning of a broker that does not
            // answer while closing would otherwise follow the line that ends the worker's log.
            String lastLine = worker instanceof WorkerRuntime runtime ? runtime.stopWithoutLastLine(grace) : null;
            if (lastLine == null) {
                worker.stop(grace);
            }
            String closing = close(binomic);
            if (lastLine != null) {
                LOG.log(Level.INFO, lastLine + closing);
            } else if (!closing.isEmpty()) {
                LOG.log(Level.WARNING, "worker " + launch.slot() + ": " + closing.substring("; ".length()));
            }
            return EXIT_OK;
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "worker " + launch.slot() + " failed", e);
            return EXIT_FAILED;
        } finally {
            publishCounters();
            slot.state(WorkerState.STOPPED);
            slot.heartbeat(System.currentTimeMillis());
            heartbeat.interrupt();
            stopped.countDown();
        }
    }

    /**
     * The longest a worker JVM takes from the master's drain to its exit, as the worker plans it: its stop budget
     * (the grace, then what is left running is interrupted and the outcomes left are written or given up), then
     * {@link #CLOSE_WAIT}. The master waits this plus its kill grace before it kills the worker.
     */
    static Duration drainBudget(Duration grace) { return WorkerRuntime.stopBudget(grace).plus(CLOSE_WAIT); }

    /**
     * Closes {@code binomic} within {@link #CLOSE_WAIT}; what is left of it ends with the JVM, the worker's outcomes being
     * settled. Returns what to add to the worker's last line: nothing, or that the close was not waited for.
     */
    private String close(Binomic binomic) {
        Thread closing = Thread.ofPlatform().daemon().name("binomic-close").start(binomic::close);
        try {
            if (!closing.join(CLOSE_WAIT)) {
                return "; closing the broker took longer than " + CLOSE_WAIT.toMillis() + " ms (a connection not answering, or still"
                        + " reconnecting after an outage): exiting without waiting, the outcomes above being written or given up";
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return "";
    }

    /** The master's resolved settings, read from its file alone: no environment variable re-applied. */
    static BinomicConfig settings(Path file) {
        Settings settings = Settings.ofFile(file);
        if (settings.value("broker.url").isEmpty()) {
            throw new IllegalArgumentException(file + " has no broker.url: it is not a settings file of a Binomic master");
        }
        return BinomicConfig.builder().broker(settings.broker("")).taskDefaults(settings.taskDefaults()).worker(settings.worker())
                .schedulePeriodicTasks(true).build();
    }

    private Binomic startBinomic() {
        Binomic binomic = Binomic.builder().config(config).discoverTasks().build();
        try {
            binomic.start();
            flows = CoreAccess.get().stats(binomic).flows();
            worker = binomic.startWorker();
            return binomic;
        } catch (RuntimeException e) {
            binomic.close();
            throw e;
        }
    }

    /** A command and where it came from, for the line that starts the worker's stop. */
    private record Command(WorkerCommand command, String from) { }

    /** Blocks until the master writes a command, the master dies, or SIGTERM, SIGINT or SIGHUP arrives. */
    private Command awaitCommand() {
        // Commands are rare and a drain is not urgent to the millisecond: polling a few times per
        // heartbeat is cheaper and simpler than any notification across processes.
        long pollMillis = Math.clamp(launch.heartbeatInterval().toMillis() / 4, 10, 250);
        while (true) {
            WorkerCommand command = slot.command();
            if (command != WorkerCommand.NONE) {
                // A terminal's Ctrl-C or hang-up reaches the master and its workers at once: either may be seen first.
                return new Command(command, signalled != WorkerCommand.NONE ? "from the master, and a signal to this worker"
                        : "from the master");
            }
            if (signalled != WorkerCommand.NONE) {
                return new Command(signalled, "on a signal to this worker");
            }
            if (!masterAlive()) {
                LOG.log(Level.WARNING, "worker {0}: master pid {1,number,#} is gone; draining", launch.slot(), masterPid);
                return new Command(WorkerCommand.DRAIN, "its master gone");
            }
            try {
                Thread.sleep(pollMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new Command(WorkerCommand.DRAIN, "interrupted");
            }
        }
    }

    private boolean masterAlive() { return ProcessHandle.of(masterPid).map(ProcessHandle::isAlive).orElse(false); }

    /**
     * Shutdown hook: a shutdown the worker did not start (System.exit, SIGTERM where {@link DrainSignals} could
     * not take it) drains like the master's command would, then lets the JVM go: after
     * {@link #drainBudget} at most, and the time to notice the signal.
     */
    private void stopOnSignal() {
        signalled = WorkerCommand.DRAIN;
        try {
            stopped.await(drainBudget(config.worker().shutdownGrace()).plus(launch.heartbeatInterval()).toMillis(),
                    TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Heartbeats come from a platform thread on purpose: a virtual thread shares carriers with the
     * tasks, and a worker whose tasks pin every carrier would look hung while it is merely busy.
     * Between heartbeats it reads the worker's health a few times per interval, and beats at once when
     * its state changed: a broker gone unreachable shows in {@code binomic workers} within
     * {@link #HEALTH_CHECK_MILLIS} ms of the worker seeing it, not up to a heartbeat interval later.
     */
    private Thread startHeartbeat() {
        long intervalMillis = launch.heartbeatInterval().toMillis();
        long checkMillis = Math.min(HEALTH_CHECK_MILLIS, intervalMillis);
        return Thread.ofPlatform().daemon().name("binomic-heartbeat").start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                WorkerHealth.State published = publishCounters();
                slot.heartbeat(System.currentTimeMillis());
                try {
                    long next = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(intervalMillis);
                    for (long left; (left = next - System.nanoTime()) > 0; ) {
                        Thread.sleep(Math.min(checkMillis, TimeUnit.NANOSECONDS.toMillis(left) + 1));
                        Worker current = worker;
                        if (current != null && published != null && healthOf(current).state() != published) {
                            break;
                        }
                    }
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
    }

    /**
     * Counters and health into the slot; the heartbeat written after them makes them visible together. Returns the
     * state published, null before the worker runs.
     */
    private WorkerHealth.State publishCounters() {
        Worker current = worker;
        if (current == null) {
            return null;
        }
        slot.counters(current.counters());
        slot.callbackLag(WorkerSlots.CallbackLag.sumOf(flows.callbackLags()));
        WorkerHealth health = healthOf(current);
        slot.health(health);
        return health.state();
    }

    private static WorkerHealth healthOf(Worker worker) {
        try {
            return worker.health();
        } catch (RuntimeException e) {
            // A health check that fails is a worker that cannot vouch for itself: let the master replace it.
            return new WorkerHealth(WorkerHealth.State.STALLED, Duration.ZERO, Duration.ZERO, 0, Optional.of("health check failed: " + e));
        }
    }
}

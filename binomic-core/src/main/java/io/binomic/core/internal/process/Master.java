package io.binomic.core.internal.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;

/**
 * The supervisor of a machine's worker JVMs. It creates the shared segment, starts one worker
 * JVM per slot and keeps each slot staffed: a worker that exited is restarted, one that is alive
 * but silent longer than the heartbeat timeout is terminated, killed after a grace, and
 * restarted; a worker that keeps failing is restarted with a growing wait and reported, never
 * spun. {@link #close()} drains every worker and returns when all are gone.
 *
 * <p>Each slot has its own supervisor on a virtual thread ({@link SlotSupervisor}): waiting for
 * a process, a grace or a backoff is then plain blocking code, and one slot's slow kill never
 * delays another slot's checks.
 *
 * <p>The master holds no broker connection: workers report through the segment only, so the
 * master keeps supervising while the broker is down.
 */
public final class Master implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Master.class.getName());

    private final MasterConfig config;
    private final Consumer<MasterEvent> listener;
    private final CompletableFuture<Void> shutdownRequested = new CompletableFuture<>();
    private final CountDownLatch terminated = new CountDownLatch(1);
    private final List<Thread> supervisors = new ArrayList<>();
    private WorkerSlots slots;
    private boolean started;
    /** Per slot: how often its worker went and was replaced, for {@code binomic_worker_restarts_total}. */
    private volatile AtomicLongArray restarts = new AtomicLongArray(0);
    /** The defaults and the configured worker JVM options, plus the AOT cache's if one applies (decided once, at start). */
    private volatile List<String> workerJvmOptions;

    /** A master that only logs what it observes. */
    public Master(MasterConfig config) {
        this(config, event -> { });
    }

    /** A master that also hands every supervision event to {@code listener} (from the supervisor threads). */
    public Master(MasterConfig config, Consumer<MasterEvent> listener) {
        this.config = Objects.requireNonNull(config, "config");
        this.listener = Objects.requireNonNull(listener, "listener");
    }

    /**
     * Creates the segment and starts the workers. Returns this master.
     *
     * @throws IllegalStateException when started twice, or when another live master uses the state directory
     * @throws UncheckedIOException when the state directory cannot be written
     */
    public synchronized Master start() {
        if (started) {
            throw new IllegalStateException("a master can be started once");
        }
        started = true;
        try {
            Files.createDirectories(config.logFile(0).getParent());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the state directory " + config.stateDirectory() + ": " + e.getMessage(), e);
        }
        slots = WorkerSlots.create(config.segmentFile(), config.workers(), ProcessHandle.current().pid(), Instant.now(),
                config.heartbeatInterval(), config.heartbeatTimeout());
        // Every worker reads the same resolved settings; written before any worker starts, and only
        // once the segment is ours: a live master's workers must never read another master's file.
        try {
            Settings.write(config.workerSettingsFile(), config.broker(), config.taskDefaults(), config.workerConfig());
        } catch (RuntimeException e) {
            slots.close();
            slots = null;
            throw e;
        }
        restarts = new AtomicLongArray(config.workers());
        workerJvmOptions = AotCache.workerOptions(config.workerJvmOptions(System.getenv()));
        for (int i = 0; i < config.workers(); i++) {
            SlotSupervisor supervisor = new SlotSupervisor(this, slots.slot(i));
            supervisors.add(Thread.ofVirtual().name("binomic-supervisor-" + i).start(supervisor::run));
        }
        LOG.log(Level.INFO, "master pid {0,number,#}: {1} worker(s) x {2} concurrent tasks on {3}, queues {4}; state in {5}",
                ProcessHandle.current().pid(), config.workers(), config.concurrency(), redacted(config.broker().url()),
                config.queues().isEmpty() ? "(all of the discovered tasks)" : config.queues(), config.stateDirectory());
        LOG.log(Level.INFO, "worker JVM options: {0}", String.join(" ", workerJvmOptions));
        return this;
    }

    /** The options of each worker JVM: {@link MasterConfig#workerJvmOptions}, plus the AOT cache when one applies ({@link AotCache}). */
    List<String> workerJvmOptions() { return workerJvmOptions; }

    public MasterConfig config() { return config; }

    /** The shared segment; valid between {@link #start()} and the end of {@link #close()}. */
    public synchronized WorkerSlots slots() {
        if (slots == null) {
            throw new IllegalStateException("the master is not started");
        }
        return slots;
    }

    /** How often the worker of {@code slot} went and was (or is about to be) replaced since the master started. */
    public long restarts(int slot) {
        AtomicLongArray r = restarts;
        return slot < r.length() ? r.get(slot) : 0;
    }

    void restarted(int slot) { restarts.incrementAndGet(slot); }

    boolean shuttingDown() { return shutdownRequested.isDone(); }

    CompletableFuture<Void> shutdownRequested() { return shutdownRequested; }

    void emit(MasterEvent event) {
        try {
            listener.accept(event);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "master event listener failed on " + event, e);
        }
    }

    /**
     * Drains every worker: writes DRAIN into each slot, waits for each worker to exit within
     * its shutdown grace plus 2 s (what its stop plans beyond the grace, closing the broker) plus
     * the kill grace ({@link SlotSupervisor#drainTimeout}), kills the ones still there, and returns when all
     * are gone. Safe to call from a shutdown hook and more than once.
     */
    @Override
    public void close() {
        boolean closer;
        synchronized (this) {
            closer = started && !shutdownRequested.isDone();
            shutdownRequested.complete(null);
            if (!started || slots == null) {
                // Never started, or refused (another live master's state directory): no worker of
                // this master ran, and its log must not read as if it drained some.
                terminated.countDown();
                return;
            }
        }
        if (!closer) {
            // Another thread drains; wait for it, as a second close() of an ExecutorService would.
            awaitTermination(SlotSupervisor.drainTimeout(config).plus(config.killGrace()).plusSeconds(30));
            return;
        }
        LOG.log(Level.INFO, "master pid {0,number,#}: draining {1} worker(s), grace {2,number,#} ms", ProcessHandle.current().pid(),
                config.workers(), config.shutdownGrace().toMillis());
        List<Thread> toJoin;
        synchronized (this) {
            toJoin = List.copyOf(supervisors);
        }
        for (Thread supervisor : toJoin) {
            try {
                supervisor.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        synchronized (this) {
            if (slots != null) {
                slots.close();
            }
        }
        LOG.log(Level.INFO, "master pid {0,number,#}: all workers stopped", ProcessHandle.current().pid());
        terminated.countDown();
    }

    /** Waits until {@link #close()} has stopped every worker; true when it did within {@code timeout}. */
    public boolean awaitTermination(Duration timeout) {
        try {
            return terminated.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The URL without its user information, for logs. */
    static String redacted(String url) {
        int scheme = url.indexOf("://");
        int at = url.lastIndexOf('@');
        return scheme >= 0 && at > scheme ? url.substring(0, scheme + 3) + "****@" + url.substring(at + 1) : url;
    }
}

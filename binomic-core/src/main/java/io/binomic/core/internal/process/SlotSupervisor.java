package io.binomic.core.internal.process;

import io.binomic.core.internal.process.MasterEvent.Cause;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Keeps one slot staffed with a worker JVM, from the master's start to its shutdown:
 * spawn, watch, replace on exit or hang (with backoff when failures repeat), drain at the end.
 */
final class SlotSupervisor {
    private static final System.Logger LOG = System.getLogger(SlotSupervisor.class.getName());
    /** While a worker starts, look often: the start-to-RUNNING time is one of the numbers we report. */
    private static final long STARTING_CHECK_MILLIS = 25;
    /**
     * How long a worker must have been RUNNING for its end to count as the end of a worker that
     * served, restarted at once, rather than as a start-up failure that extends the backoff streak
     * (capped by the heartbeat interval, so fast-beating test masters are judged alike). A worker
     * killed every few seconds is a worker that works: backing it off would leave the slot empty.
     */
    static final Duration SERVED = Duration.ofSeconds(1);
    /**
     * The longest a worker of a slot gets to start once earlier ones did not start in time: each one
     * killed for that doubles the next one's wait, from {@link MasterConfig#startTimeout}, so that a
     * host too slow or loaded for the configured wait gets its workers running instead of killing every
     * one just before it would have run.
     */
    static final Duration MAX_START_WAIT = Duration.ofMinutes(10);

    private final Master master;
    private final MasterConfig config;
    private final WorkerSlots.Slot slot;
    private final RestartBackoff backoff;
    private final Path logFile;
    private int incarnations;
    /** How long the next worker of this slot may take to reach RUNNING. */
    private Duration startWait;

    SlotSupervisor(Master master, WorkerSlots.Slot slot) {
        this.master = master;
        this.config = master.config();
        this.slot = slot;
        this.backoff = new RestartBackoff(config.restartBackoffInitial(), config.restartBackoffMax());
        this.logFile = config.logFile(slot.index());
        this.startWait = config.startTimeout();
    }

    /** One worker JVM in this slot. */
    private static final class Incarnation {
        final Process process;
        /** Where this JVM's output starts in the slot's log file, which earlier incarnations share. */
        final long logOffset;
        final long spawnedAt = System.nanoTime();
        long runningAt;
        long endedAt;
        /** The last heartbeat sequence the master saw, and when (its own nanoTime) it saw it change. */
        long lastSequence = -1;
        long beatSeenAt;
        /** Whether the master ever saw it report itself consuming. */
        boolean seenConsuming;
        /** The reason it gave when it reported itself not consuming. */
        String problem;
        /** The line of its log that says why it exited before RUNNING; empty when none does. */
        String startupFailure = "";

        Incarnation(Process process, long logOffset) {
            this.process = process;
            this.logOffset = logOffset;
        }

        boolean reachedRunning() { return runningAt != 0; }
    }

    /** Why the last worker of this slot went, and when the master noticed. */
    private record Failure(long pid, Cause cause, long detectedAt, String detail) { }

    private enum Outcome { EXITED, HUNG, NOT_CONSUMING, SHUTDOWN }

    void run() {
        int streak = 0;
        Failure previous = null;
        try {
            while (!master.shuttingDown()) {
                if (streak > 0 && !waitBeforeRestart(streak, previous)) {
                    return;
                }
                Incarnation worker;
                try {
                    worker = spawn();
                } catch (IOException e) {
                    LOG.log(Level.ERROR, "cannot start worker {0}: {1}", slot.index(), e.toString());
                    streak++;
                    previous = new Failure(0, Cause.EXITED, System.nanoTime(), "could not be started: " + e.getMessage());
                    publishRestart(streak);
                    continue;
                }
                Outcome outcome = watch(worker, previous);
                if (outcome == Outcome.SHUTDOWN) {
                    drain(worker);
                    return;
                }
                long pid = worker.process.pid();
                String detail;
                Cause cause;
                if (outcome == Outcome.HUNG) {
                    slot.supervision(Supervision.STOPPING_HUNG, 0);
                    terminate(worker);
                    detail = "was hung";
                    cause = Cause.HUNG;
                } else if (outcome == Outcome.NOT_CONSUMING) {
                    slot.supervision(Supervision.STOPPING_NOT_CONSUMING, 0);
                    terminate(worker);
                    detail = "was not consuming (" + worker.problem + ")";
                    cause = Cause.NOT_CONSUMING;
                } else {
                    cause = Cause.EXITED;
                    int exit = worker.process.exitValue();
                    detail = "exited with code " + exit + (worker.reachedRunning() ? "" : " during start-up" + quoted(worker.startupFailure));
                }
                // Only start-up failures back off: a worker that reached RUNNING and served (however it
                // ended: killed, crashed, hung, not consuming) is replaced at once, and ends any streak.
                // One that never consumed did not serve: replacing it at once would spin JVM starts.
                boolean served = served(worker) && (outcome != Outcome.NOT_CONSUMING || worker.seenConsuming);
                streak = served ? 1 : streak + 1;
                previous = new Failure(pid, cause, worker.endedAt, detail);
                publishRestart(streak);
            }
        } catch (RuntimeException e) {
            // Nothing should get here; if something does, the slot stays empty and the log says why.
            LOG.log(Level.ERROR, "supervisor of worker " + slot.index() + " failed; the slot is left empty", e);
        }
    }

    private static String quoted(String startupFailure) { return startupFailure.isEmpty() ? "" : " (" + startupFailure + ")"; }

    /** True when the worker reached RUNNING and ran for at least {@link #SERVED} (or one heartbeat interval, if shorter). */
    private boolean served(Incarnation worker) {
        Duration needed = SERVED.compareTo(config.heartbeatInterval()) < 0 ? SERVED : config.heartbeatInterval();
        return worker.reachedRunning() && Duration.ofNanos(worker.endedAt - worker.runningAt).compareTo(needed) >= 0;
    }

    /** Tells {@code binomic workers} that the slot's worker is gone and when the next one starts. */
    private void publishRestart(int streak) {
        master.restarted(slot.index());
        slot.supervision(Supervision.RESTART_PENDING, System.currentTimeMillis() + backoff.delay(streak).toMillis());
    }

    /** Waits the backoff for the {@code streak}-th failure in a row; false when shutdown came first. */
    private boolean waitBeforeRestart(int streak, Failure previous) {
        Duration delay = backoff.delay(streak);
        if (delay.isZero()) {
            return true;
        }
        master.emit(new MasterEvent.RestartScheduled(slot.index(), streak, delay));
        LOG.log(Level.WARNING, "worker {0} failed {1} times in a row (pid {2,number,#} {3}); restarting in {4,number,#} ms; see {5}",
                slot.index(), streak, previous.pid(), previous.detail(), delay.toMillis(), logFile);
        try {
            master.shutdownRequested().get(delay.toMillis(), TimeUnit.MILLISECONDS);
            return false;
        } catch (TimeoutException e) {
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException e) {
            return false;
        }
    }

    private Incarnation spawn() throws IOException {
        slot.reset();
        incarnations++;
        WorkerLaunch launch = new WorkerLaunch(slot.index(), config.segmentFile(), config.heartbeatInterval(),
                config.workerSettingsFile());
        // A marker in the log file, so an operator can tell one incarnation's output from the next.
        Files.writeString(logFile, "---- " + Instant.now() + " master pid " + ProcessHandle.current().pid()
                        + " starts worker " + slot.index() + " (incarnation " + incarnations + ")" + System.lineSeparator(),
                StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        ProcessBuilder builder = new ProcessBuilder(JavaCommand.of(WorkerProcessMain.class, master.workerJvmOptions(), launch.toArgs()))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
        long logOffset = Files.size(logFile);
        Process process = builder.start();
        process.getOutputStream().close();
        master.emit(new MasterEvent.Spawned(slot.index(), process.pid(), incarnations));
        LOG.log(Level.DEBUG, "worker {0} started: pid {1,number,#}", slot.index(), process.pid());
        return new Incarnation(process, logOffset);
    }

    /** Watches a worker until it exits, hangs or the master shuts down. */
    private Outcome watch(Incarnation worker, Failure previous) {
        long pid = worker.process.pid();
        long checkMillis = Math.max(10, config.heartbeatInterval().toMillis() / 2);
        CompletableFuture<Object> exitOrShutdown = CompletableFuture.anyOf(worker.process.onExit(), master.shutdownRequested());
        while (true) {
            try {
                exitOrShutdown.get(worker.reachedRunning() ? checkMillis : Math.min(checkMillis, STARTING_CHECK_MILLIS),
                        TimeUnit.MILLISECONDS);
            } catch (TimeoutException stillRunning) {
                // the usual case: go and look at the heartbeat
            } catch (ExecutionException e) {
                throw new IllegalStateException("waiting for worker " + slot.index() + " failed", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Outcome.SHUTDOWN;
            }
            if (master.shuttingDown()) {
                return Outcome.SHUTDOWN;
            }
            long now = System.nanoTime();
            if (!worker.process.isAlive()) {
                worker.endedAt = now;
                int exit = worker.process.exitValue();
                worker.startupFailure = worker.reachedRunning() ? "" : StartupFailureLine.read(logFile, worker.logOffset).orElse("");
                master.emit(new MasterEvent.Exited(slot.index(), pid, exit, !worker.reachedRunning(), logFile, worker.startupFailure));
                if (exit == 0 && worker.reachedRunning()) {
                    // Exit 0 is a worker that drained: one that got SIGTERM, SIGINT or SIGHUP itself (an operator, a service
                    // manager), not a crash; it is replaced all the same, the master keeping its count of workers.
                    LOG.log(Level.INFO, "worker {0} (pid {1,number,#}) drained and exited with code 0 on its own (a signal it got"
                            + " itself); replacing it; see {2}", slot.index(), pid, logFile);
                } else {
                    LOG.log(Level.WARNING, "worker {0} (pid {1,number,#}) exited with code {2}{3}; see {4}", slot.index(), pid, exit,
                            worker.reachedRunning() ? "" : " before it was running" + quoted(worker.startupFailure), logFile);
                }
                return Outcome.EXITED;
            }
            SlotSnapshot seen = slot.snapshot();
            if (seen.heartbeatSequence() != worker.lastSequence) {
                // Age is judged on this process's monotonic clock: the worker's epoch milliseconds
                // would make a clock step (NTP) look like every worker hung, or hide a hung one.
                worker.lastSequence = seen.heartbeatSequence();
                worker.beatSeenAt = now;
            }
            if (!worker.reachedRunning() && seen.state() == WorkerState.RUNNING) {
                worker.runningAt = now;
                worker.beatSeenAt = now;
                reportRunning(worker, previous);
            }
            Duration silentFor;
            if (worker.reachedRunning()) {
                worker.seenConsuming |= seen.health() == SlotHealth.CONSUMING;
                if (seen.state() == WorkerState.RUNNING && seen.health() == SlotHealth.NOT_CONSUMING) {
                    worker.endedAt = now;
                    worker.problem = seen.problem().orElse("no reason given");
                    master.emit(new MasterEvent.NotConsuming(slot.index(), pid, worker.problem));
                    LOG.log(Level.WARNING, "worker {0} (pid {1,number,#}) reports it is not consuming: {2}; replacing it; see {3}",
                            slot.index(), pid, worker.problem, logFile);
                    return Outcome.NOT_CONSUMING;
                }
                silentFor = Duration.ofNanos(now - worker.beatSeenAt);
                if (silentFor.compareTo(config.heartbeatTimeout()) <= 0) {
                    continue;
                }
            } else {
                silentFor = Duration.ofNanos(now - worker.spawnedAt);
                if (silentFor.compareTo(startWait) <= 0) {
                    continue;
                }
            }
            worker.endedAt = now;
            master.emit(new MasterEvent.Hung(slot.index(), pid, silentFor));
            if (worker.reachedRunning()) {
                LOG.log(Level.WARNING, "worker {0} (pid {1,number,#}) is hung: no heartbeat for {2,number,#} ms; terminating it",
                        slot.index(), pid, silentFor.toMillis());
            } else {
                Duration waited = startWait;
                startWait = startWait.multipliedBy(2).compareTo(MAX_START_WAIT) > 0 ? max(waited, MAX_START_WAIT) : startWait.multipliedBy(2);
                LOG.log(Level.WARNING, "worker {0} (pid {1,number,#}) is hung: not running for {2,number,#} ms; terminating it; the next"
                        + " worker of this slot gets {3,number,#} ms to start (on a host this slow, raise master.startTimeout,"
                        + " --start-timeout, now {4,number,#} ms)", slot.index(), pid, silentFor.toMillis(), startWait.toMillis(),
                        config.startTimeout().toMillis());
            }
            return Outcome.HUNG;
        }
    }

    private void reportRunning(Incarnation worker, Failure previous) {
        long pid = worker.process.pid();
        Duration startTime = Duration.ofNanos(worker.runningAt - worker.spawnedAt);
        master.emit(new MasterEvent.Running(slot.index(), pid, startTime));
        if (previous == null || previous.pid() == 0) {
            LOG.log(Level.INFO, "worker {0} (pid {1,number,#}) running after {2,number,#} ms", slot.index(), pid, startTime.toMillis());
            return;
        }
        Duration toSpawn = Duration.ofNanos(worker.spawnedAt - previous.detectedAt());
        Duration toRunning = Duration.ofNanos(worker.runningAt - previous.detectedAt());
        master.emit(new MasterEvent.Replaced(slot.index(), previous.pid(), pid, previous.cause(), toSpawn, toRunning));
        LOG.log(Level.INFO, "worker {0} replaced: pid {1,number,#} {2}, pid {3,number,#} running; detection to spawn {4,number,#} ms, to running {5,number,#} ms",
                slot.index(), previous.pid(), previous.detail(), pid, toSpawn.toMillis(), toRunning.toMillis());
    }

    /**
     * Stops a hung or not consuming worker: SIGTERM first (a worker that is only slow may still drain), SIGKILL
     * after the kill grace. A SIGSTOPped JVM cannot act on SIGTERM, so the kill is what ends it.
     */
    private void terminate(Incarnation worker) {
        long started = System.nanoTime();
        worker.process.destroy();
        boolean killed = !awaitExit(worker.process, config.killGrace());
        if (killed) {
            worker.process.destroyForcibly();
            if (!awaitExit(worker.process, Duration.ofSeconds(30))) {
                LOG.log(Level.ERROR, "worker {0} (pid {1,number,#}) survived SIGKILL for 30 s; starting its replacement anyway",
                        slot.index(), worker.process.pid());
            }
        }
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        master.emit(new MasterEvent.Terminated(slot.index(), worker.process.pid(), killed, took));
    }

    /** Shutdown: ask the worker to drain, give it {@link #drainTimeout}, then kill it. */
    private void drain(Incarnation worker) {
        slot.command(WorkerCommand.DRAIN);
        Duration allowed = drainTimeout(config);
        boolean killed = !awaitExit(worker.process, allowed);
        if (killed) {
            LOG.log(Level.WARNING, "worker {0} (pid {1,number,#}) did not drain within {2,number,#} ms; killing it", slot.index(),
                    worker.process.pid(), allowed.toMillis());
            worker.process.destroyForcibly();
            awaitExit(worker.process, Duration.ofSeconds(30));
        }
        int exit = worker.process.isAlive() ? -1 : worker.process.exitValue();
        master.emit(new MasterEvent.Drained(slot.index(), worker.process.pid(), exit, killed));
    }

    /**
     * How long the master waits for a draining worker before it kills it: what the worker plans for its drain
     * ({@link WorkerProcessMain#drainBudget}: its shutdown grace, then interrupting what still runs, writing or giving
     * up the outcomes left, closing the broker), then the kill grace. Derived from the worker's plan, so that a worker
     * against a broker that does not answer has logged what it gave up, and exited, before it could be killed.
     */
    static Duration drainTimeout(MasterConfig config) { return WorkerProcessMain.drainBudget(config.shutdownGrace()).plus(config.killGrace()); }

    private static boolean awaitExit(Process process, Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !process.isAlive();
        }
    }

    private static Duration max(Duration a, Duration b) { return a.compareTo(b) >= 0 ? a : b; }
}

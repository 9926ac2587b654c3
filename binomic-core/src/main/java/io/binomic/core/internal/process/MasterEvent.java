package io.binomic.core.internal.process;

import java.nio.file.Path;
import java.time.Duration;

/** What the master's supervision observed, for its listener (tests, measurements) and its log. Every event names the worker's slot. */
public sealed interface MasterEvent {

    int slot();

    /** A worker JVM was started; {@code incarnation} counts the JVMs this slot has had, from 1. */
    record Spawned(int slot, long pid, int incarnation) implements MasterEvent { }

    /** A worker reported RUNNING, {@code startTime} after its JVM was started. */
    record Running(int slot, long pid, Duration startTime) implements MasterEvent { }

    /**
     * A worker process exited on its own (or was killed from outside).
     *
     * @param beforeRunning true when it never reported RUNNING: a start-up failure
     * @param startupFailure for a start-up failure, the line of its log that says why (empty when none does)
     */
    record Exited(int slot, long pid, int exitCode, boolean beforeRunning, Path logFile, String startupFailure)
            implements MasterEvent { }

    /** A live worker's heartbeat stopped (or its start took too long); the master is about to stop it. */
    record Hung(int slot, long pid, Duration silentFor) implements MasterEvent { }

    /** A running worker reported itself not consuming ({@code problem} says why); the master is about to stop it. */
    record NotConsuming(int slot, long pid, String problem) implements MasterEvent { }

    /** A hung or not consuming worker is gone; {@code killed} says whether SIGTERM was not enough and SIGKILL was sent. */
    record Terminated(int slot, long pid, boolean killed, Duration took) implements MasterEvent { }

    /** The slot's next worker will start after {@code delay}; {@code failureStreak} failures in a row so far. */
    record RestartScheduled(int slot, int failureStreak, Duration delay) implements MasterEvent { }

    /**
     * A replacement worker reported RUNNING.
     *
     * @param cause why the previous one was replaced
     * @param detectionToSpawn from detecting the failure to starting the new JVM (includes killing a hung worker and any backoff)
     * @param detectionToRunning from detecting the failure to the new worker reporting RUNNING
     */
    record Replaced(int slot, long oldPid, long newPid, Cause cause, Duration detectionToSpawn,
                    Duration detectionToRunning) implements MasterEvent { }

    /** A worker stopped during the master's shutdown: by itself after the drain, or killed. */
    record Drained(int slot, long pid, int exitCode, boolean killed) implements MasterEvent { }

    enum Cause { EXITED, HUNG, NOT_CONSUMING }
}

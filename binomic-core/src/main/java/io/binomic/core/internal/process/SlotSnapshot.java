package io.binomic.core.internal.process;

import io.binomic.core.WorkerCounters;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * One slot read at one moment.
 *
 * @param index the slot index (the worker's number under its master)
 * @param pid the worker's process id, 0 while none has reported
 * @param heartbeatMillis epoch milliseconds of the worker's last heartbeat, 0 when none yet; for display only
 * @param heartbeatSequence heartbeats written so far; the master judges liveness by its changes
 * @param problem why the worker is not consuming, when it says so
 * @param nextStartMillis epoch ms at which the master starts the slot's next worker, 0 when none is pending
 */
public record SlotSnapshot(int index, long pid, long heartbeatMillis, long heartbeatSequence, WorkerState state,
                           WorkerCommand command, WorkerCounters counters, SlotHealth health, Optional<String> problem,
                           Supervision supervision, long nextStartMillis) {

    /** True once the worker has written at least one heartbeat. */
    public boolean hasHeartbeat() { return heartbeatMillis > 0; }

    /** Time since the last heartbeat at {@code now} by the wall clock, for display; empty when the worker never wrote one. */
    public Optional<Duration> heartbeatAge(Instant now) {
        return hasHeartbeat() ? Optional.of(Duration.ofMillis(Math.max(0, now.toEpochMilli() - heartbeatMillis))) : Optional.empty();
    }
}

package io.binomic.core.internal.worker;

import io.binomic.api.WorkerConfig;
import io.binomic.core.WorkerHealth;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Tells whether a worker is still consuming, from what its loops and its calls to the broker
 * keep: a loop whose thread ended or that completes no round is stalled; a fetch or a write of
 * outcomes that hangs or keeps failing means the broker is unreachable. It reads and never
 * changes that state, so asking costs nothing to the work.
 */
final class HealthCheck {
    /** A loop that completes no round (success or failure) for this long past its own wait is stuck. */
    private static final Duration STALL_LIMIT = Duration.ofSeconds(60);
    /** Fetch failing for this long (past the poll timeout) makes the broker count as unreachable. */
    private static final Duration UNREACHABLE_AFTER = Duration.ofSeconds(5);

    private final WorkerConfig config;
    private final Fetcher fetcher;
    private final Settler settler;
    private final List<ControlLoop> loops;

    HealthCheck(WorkerConfig config, Fetcher fetcher, Settler settler, List<ControlLoop> loops) {
        this.config = config;
        this.fetcher = fetcher;
        this.settler = settler;
        this.loops = List.copyOf(loops);
    }

    /** @param active whether the worker runs (a stopping worker's loops end on purpose) */
    WorkerHealth check(boolean active) {
        long now = System.nanoTime();
        Duration sinceFetch = Duration.ofNanos(now - fetcher.lastRoundNanos());
        Duration sinceSettlement = Duration.ofNanos(now - settler.lastWrittenNanos());
        int pending = settler.pending();
        if (active) {
            for (ControlLoop loop : loops) {
                String stopped = loop.stopped();
                if (stopped != null) {
                    return new WorkerHealth(WorkerHealth.State.STALLED, sinceFetch, sinceSettlement, pending, Optional.of(stopped));
                }
            }
            long stuckAfter = config.pollTimeout().plus(config.leaseTimeout()).plus(STALL_LIMIT).toNanos();
            for (ControlLoop loop : loops) {
                String stuck = loop.stuck(now, stuckAfter);
                if (stuck != null) {
                    return new WorkerHealth(WorkerHealth.State.STALLED, sinceFetch, sinceSettlement, pending, Optional.of(stuck));
                }
            }
        }
        long unreachableAfter = UNREACHABLE_AFTER.plus(config.pollTimeout()).toNanos();
        long fetchCall = fetcher.callSinceNanos();
        if (fetchCall != 0 && now - fetchCall > unreachableAfter) {
            return new WorkerHealth(WorkerHealth.State.BROKER_UNREACHABLE, sinceFetch, sinceSettlement, pending,
                    Optional.of("a fetch (or reclaim) has not returned for " + TimeUnit.NANOSECONDS.toSeconds(now - fetchCall) + " s"));
        }
        long settleCall = settler.sendingSinceNanos();
        if (settleCall != 0 && now - settleCall > unreachableAfter) {
            return new WorkerHealth(WorkerHealth.State.BROKER_UNREACHABLE, sinceFetch, sinceSettlement, pending,
                    Optional.of("writing outcomes has not returned for " + TimeUnit.NANOSECONDS.toSeconds(now - settleCall) + " s"));
        }
        long fetchFailing = fetcher.failingSinceNanos();
        long settleFailing = settler.failingSinceNanos();
        if (fetchFailing != 0 && now - fetchFailing > unreachableAfter) {
            return new WorkerHealth(WorkerHealth.State.BROKER_UNREACHABLE, sinceFetch, sinceSettlement, pending,
                    Optional.of("fetching has failed for " + TimeUnit.NANOSECONDS.toSeconds(now - fetchFailing) + " s: "
                            + fetcher.lastError()));
        }
        if (settleFailing != 0 && now - settleFailing > unreachableAfter) {
            return new WorkerHealth(WorkerHealth.State.BROKER_UNREACHABLE, sinceFetch, sinceSettlement, pending,
                    Optional.of("writing outcomes has failed for " + TimeUnit.NANOSECONDS.toSeconds(now - settleFailing) + " s: "
                            + settler.lastError()));
        }
        return new WorkerHealth(WorkerHealth.State.CONSUMING, sinceFetch, sinceSettlement, pending, Optional.empty());
    }
}

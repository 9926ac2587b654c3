package io.binomic.core.internal.worker;

import io.binomic.api.WorkerConfig;
import io.binomic.core.WorkerHealth;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

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
    private final Housekeeper housekeeper;
    private final Settler settler;
    private final List<ControlLoop> loops;

    HealthCheck(WorkerConfig config, Fetcher fetcher, Housekeeper housekeeper, Settler settler, List<ControlLoop> loops) {
        this.config = config;
        this.fetcher = fetcher;
        this.housekeeper = housekeeper;
        this.settler = settler;
        this.loops = List.copyOf(loops);
    }

    /** @param active whether the worker runs (a stopping worker's loops end on purpose) */
    WorkerHealth check(boolean active) {
        long now = System.nanoTime();
        Duration sinceFetch = Duration.ofNanos(now - fetcher.lastRoundNanos);
        Duration sinceSettlement = Duration.ofNanos(now - settler.lastWrittenNanos);
        int pending = settler.pending();
        long limit = UNREACHABLE_AFTER.plus(config.pollTimeout()).toNanos();
        Optional<String> brokerDown = Stream.of(
                overdue(now, limit, fetcher.callSinceNanos, "a fetch (or reclaim) has not returned", ""),
                overdue(now, limit, fetcher.reclaimSinceNanos, "a reclaim has not returned", ""),
                overdue(now, limit, settler.sendingSinceNanos, "writing outcomes has not returned", ""),
                overdue(now, limit, fetcher.failingSinceNanos, "fetching has failed", ": " + fetcher.lastError),
                overdue(now, limit, settler.failingSinceNanos, "writing outcomes has failed", ": " + settler.lastError))
                .flatMap(Optional::stream).findFirst();
        Optional<String> stopped = Optional.empty();
        Optional<String> stuck = Optional.empty();
        if (active) {
            long stuckAfter = config.pollTimeout().plus(config.leaseTimeout()).plus(STALL_LIMIT).toNanos();
            stopped = loops.stream().map(ControlLoop::stopped).filter(Objects::nonNull).findFirst();
            stuck = loops.stream().map(loop -> loop.stuck(now, stuckAfter)).filter(Objects::nonNull).findFirst();
        }
        Optional<String> periodicCall = overdue(now, limit, housekeeper.callSinceNanos,
                "a periodic broker call (paused state, limits, consumers) has not returned", "");
        Verdict verdict = verdict(stopped, stuck, brokerDown, periodicCall);
        return new WorkerHealth(verdict.state(), sinceFetch, sinceSettlement, pending, verdict.reason());
    }

    record Verdict(WorkerHealth.State state, Optional<String> reason) { }

    /**
     * A loop whose thread ended is stalled. One that completes no round is stalled too, unless the
     * fetches or the writes of outcomes show the broker unreachable: its round then waits on the same
     * broker (a round of calls, each failing after its timeout, can outlast the stall limit in a long
     * outage), and the worker recovers when the broker does; replacing it would only lose the outcomes
     * it holds. While they succeed, a loop that completes no round is stuck whatever it waits on.
     */
    static Verdict verdict(Optional<String> stopped, Optional<String> stuck, Optional<String> brokerDown, Optional<String> periodicCall) {
        if (stopped.isPresent()) {
            return new Verdict(WorkerHealth.State.STALLED, stopped);
        }
        if (stuck.isPresent() && brokerDown.isEmpty()) {
            return new Verdict(WorkerHealth.State.STALLED, stuck);
        }
        Optional<String> unreachable = brokerDown.or(() -> periodicCall);
        return unreachable.isPresent() ? new Verdict(WorkerHealth.State.BROKER_UNREACHABLE, unreachable)
                : new Verdict(WorkerHealth.State.CONSUMING, Optional.empty());
    }

    /** "{@code what} for N s{@code detail}" when {@code sinceNanos} (0: not under way) is older than {@code limit}. */
    private static Optional<String> overdue(long now, long limit, long sinceNanos, String what, String detail) {
        return sinceNanos != 0 && now - sinceNanos > limit
                ? Optional.of(what + " for " + TimeUnit.NANOSECONDS.toSeconds(now - sinceNanos) + " s" + detail) : Optional.empty();
    }
}

package io.binomic.core.internal.worker;

import io.binomic.api.WorkerConfig;
import io.binomic.core.WorkerHealth;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Tells whether a worker is still consuming, from what its loops and its calls to the broker
 * keep: a loop whose thread ended or that completes no round is stalled; a fetch or a write of
 * outcomes that failed, or a call that overran its time, means the broker is unreachable, from the
 * start of the first call that failed (or overran) since the last that succeeded. It reads and never
 * changes that state, so asking costs nothing to the work.
 */
final class HealthCheck {
    /** A loop that completes no round (success or failure) for this long past its own wait is stuck. */
    private static final Duration STALL_LIMIT = Duration.ofSeconds(60);
    /**
     * How long a broker call may take past the poll timeout (the longest a fetch waits for messages) before it counts
     * as overrun: a call that answers is back well within it, one against a broker that does not answer waits its
     * command timeout (5 s by default) and the client's retries.
     */
    static final Duration OVERRUN_AFTER = Duration.ofSeconds(1);

    private final WorkerConfig config;
    private final Fetcher fetcher;
    private final Housekeeper housekeeper;
    private final Settler settler;
    private final LeaseKeeper leases;
    private final List<ControlLoop> loops;

    HealthCheck(WorkerConfig config, Fetcher fetcher, Housekeeper housekeeper, Settler settler, LeaseKeeper leases,
            List<ControlLoop> loops) {
        this.config = config;
        this.fetcher = fetcher;
        this.housekeeper = housekeeper;
        this.settler = settler;
        this.leases = leases;
        this.loops = List.copyOf(loops);
    }

    /** @param active whether the worker runs (a stopping worker's loops end on purpose) */
    WorkerHealth check(boolean active) {
        long now = System.nanoTime();
        Duration sinceFetch = Duration.ofNanos(now - fetcher.lastRoundNanos);
        Duration sinceSettlement = Duration.ofNanos(now - settler.lastWrittenNanos);
        int pending = settler.pending();
        long limit = OVERRUN_AFTER.plus(config.pollTimeout()).toNanos();
        Optional<String> brokerDown = unreachable(now, Stream.of(
                overrun(now, limit, fetcher.callSinceNanos, "a fetch has not returned"),
                overrun(now, limit, fetcher.reclaimCallSinceNanos(), "a reclaim has not returned"),
                overrun(now, limit, settler.sendingSinceNanos, "writing outcomes has not returned"),
                failing(fetcher.failures.failing()),
                writingFails(),
                renewalRefused()));
        Optional<String> stopped = Optional.empty();
        Optional<String> stuck = Optional.empty();
        if (active) {
            long stuckAfter = config.pollTimeout().plus(config.leaseTimeout()).plus(STALL_LIMIT).toNanos();
            stopped = loops.stream().map(ControlLoop::stopped).filter(Objects::nonNull).findFirst();
            stuck = loops.stream().map(loop -> loop.stuck(now, stuckAfter)).filter(Objects::nonNull).findFirst();
        }
        Optional<String> periodicCall = unreachable(now, Stream.of(overrun(now, limit, housekeeper.callSinceNanos,
                "a periodic broker call (paused state, limits, consumers) has not returned")));
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

    /** A sign of the broker not answering: since when ({@link System#nanoTime()}), what, and the error if one came. */
    private record Sign(long sinceNanos, String what, String detail) { }

    /** The call under way since {@code sinceNanos} (0: none), when it has taken longer than {@code limit}. */
    private static Optional<Sign> overrun(long now, long limit, long sinceNanos, String what) {
        // A call can also overrun in a JVM starved of CPU while Redis answers at once: the operator must not be sent
        // only to Redis.
        return sinceNanos != 0 && now - sinceNanos > limit ? Optional.of(new Sign(sinceNanos, what, OVERRUN_CAUSES)) : Optional.empty();
    }

    static final String OVERRUN_CAUSES = " (no answer yet: Redis slow or unreachable, or this JVM short of CPU)";

    /**
     * The writes of outcomes failing now, with the last error. One Redis refuses to the worker's ACL user says so, and
     * the grant first: it is held until an operator grants it, the broker answering all along, and the problem a
     * slot holds is cut short.
     */
    private Optional<Sign> writingFails() {
        String grant = settler.refusedGrant;
        String error = settler.lastError;
        return grant == null ? failing(settler.failingSinceNanos, "writing outcomes has failed", error)
                : failing(settler.failingSinceNanos, "Redis refuses writing outcomes (NOPERM)", "grant " + grant + "; " + error);
    }

    /**
     * The renewals of leases Redis refuses to the worker's ACL user, with the grant first: as with a refused write of
     * outcomes, Redis answers all along, and other workers may take over what this one runs once its leases lapse.
     */
    private Optional<Sign> renewalRefused() {
        return failing(leases.refusedSinceNanos, "Redis refuses renewing leases (NOPERM)",
                "grant " + leases.refusedGrant + "; " + leases.refusedError);
    }

    /** The calls that take work failing now (null: they succeed), with the last error. */
    private static Optional<Sign> failing(TakeFailures.Failing failing) {
        return failing == null ? Optional.empty() : failing(failing.sinceNanos(), failing.what(), failing.error());
    }

    /** The calls failing since {@code sinceNanos} (0: they succeed), with the last error. */
    private static Optional<Sign> failing(long sinceNanos, String what, String error) {
        return sinceNanos != 0 ? Optional.of(new Sign(sinceNanos, what, ": " + error)) : Optional.empty();
    }

    /**
     * "{@code what} for N s{@code detail}" of the oldest sign: N is the outage's age, from the first call that failed or
     * overran, and not that of the call under way, which a client's retries restart every command timeout.
     */
    private static Optional<String> unreachable(long now, Stream<Optional<Sign>> signs) {
        return signs.flatMap(Optional::stream).min(Comparator.comparingLong(sign -> sign.sinceNanos() - now))
                .map(sign -> sign.what() + " for " + TimeUnit.NANOSECONDS.toSeconds(now - sign.sinceNanos()) + " s" + sign.detail());
    }
}

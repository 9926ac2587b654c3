package io.binomic.core;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Whether a worker is <em>consuming</em>, not merely alive: its fetch loop completes rounds (or
 * every slot is busy, so it has no reason to fetch) and none of its control loops (fetch, settle,
 * lease, mover) has stopped.
 *
 * @param state what the worker is doing
 * @param sinceFetchRound time since the fetch loop last completed a read (empty or not) without error
 * @param sinceSettlement time since outcomes were last written to the broker (since start if none yet)
 * @param pendingSettlements outcomes waiting to be written (held while the broker is unreachable)
 * @param problem what is wrong, unless the state is {@link State#CONSUMING}
 */
public record WorkerHealth(State state, Duration sinceFetchRound, Duration sinceSettlement,
                           int pendingSettlements, Optional<String> problem) {

    /** The health states, from good to bad. */
    public enum State {
        /** Fetching and settling as it should. */
        CONSUMING,
        /**
         * The broker is unreachable: a fetch or a write of outcomes failed, or a call took more than the poll timeout
         * plus a second, and none succeeded since; {@link #problem()} gives the outage's age. The worker keeps
         * its outcomes and resumes by itself when the broker is back: restarting it would not help
         * (and would lose the outcomes it holds, so their tasks would run again). Outcomes the broker refuses to
         * the worker's user (Redis: {@code NOPERM}) are held the same way, the problem then naming the refusal and
         * the grant that ends it ({@code Redis refuses writing outcomes (NOPERM) for 12 s: grant ACL SETUSER ...}).
         */
        BROKER_UNREACHABLE,
        /**
         * A control loop stopped, or completes no round while the broker answers its fetches and writes:
         * the worker will not recover by itself and should be replaced.
         */
        STALLED
    }

    public WorkerHealth {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(sinceFetchRound, "sinceFetchRound");
        Objects.requireNonNull(sinceSettlement, "sinceSettlement");
        Objects.requireNonNull(problem, "problem");
        if ((state == State.CONSUMING) == problem.isPresent()) {
            throw new IllegalArgumentException("a consuming worker has no problem, and any other state names one");
        }
    }

    /** True in state {@link State#CONSUMING}. */
    public boolean consuming() { return state == State.CONSUMING; }

    /** True when only a restart helps ({@link State#STALLED}); a supervisor replaces such a worker. */
    public boolean needsRestart() { return state == State.STALLED; }
}

package io.binomic.core;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Whether a worker is <em>consuming</em>, not merely alive: its fetch loop completed a round
 * recently (or every slot is busy, so it has no reason to fetch), and none of its control loops
 * (fetch, settle, lease, mover) has stopped. A master replaces a worker that reports itself not
 * consuming, as it replaces a dead or hung one.
 *
 * @param consuming true while the worker takes and settles work as it should
 * @param sinceFetchRound time since the fetch loop last completed a round (a read, empty or not)
 * @param sinceSettlement time since the last outcome was written to the broker (zero if none yet)
 * @param pendingSettlements outcomes waiting to be written (held while the broker is unreachable)
 * @param problem why the worker is not consuming, if it is not
 */
public record WorkerHealth(boolean consuming, Duration sinceFetchRound, Duration sinceSettlement,
                           int pendingSettlements, Optional<String> problem) {

    public WorkerHealth {
        Objects.requireNonNull(sinceFetchRound, "sinceFetchRound");
        Objects.requireNonNull(sinceSettlement, "sinceSettlement");
        Objects.requireNonNull(problem, "problem");
        if (consuming == problem.isPresent()) {
            throw new IllegalArgumentException("a consuming worker has no problem, and a worker that is not consuming names one");
        }
    }
}

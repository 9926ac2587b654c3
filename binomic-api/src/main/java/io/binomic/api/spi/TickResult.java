package io.binomic.api.spi;

import java.time.Instant;
import java.util.Objects;

/**
 * What {@link Scheduler#fireTick} did with a periodic job's tick.
 *
 * @param outcome fired, already fired by someone else, or refused as not yet due
 * @param brokerTime the broker's clock when it decided: with {@link Outcome#NOT_DUE}, the caller
 *                   waits until this clock reaches the tick (its own clock runs ahead)
 */
public record TickResult(Outcome outcome, Instant brokerTime) {

    public TickResult {
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(brokerTime, "brokerTime");
    }

    /** The three possible answers to a tick. */
    public enum Outcome {
        /** This caller claimed the tick and its message was enqueued, in one step. */
        FIRED,
        /** The tick, or a later one of the same job, was already claimed: nothing was written. */
        ALREADY_FIRED,
        /** The tick is still in the future by the broker's clock: nothing was written. */
        NOT_DUE
    }
}

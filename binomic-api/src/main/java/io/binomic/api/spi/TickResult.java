package io.binomic.api.spi;

import java.time.Instant;
import java.util.Objects;

/**
 * What {@link Scheduler#fireTick} did with a periodic job's tick.
 *
 * @param outcome fired, already fired by someone else, refused as not yet due or as superseded
 * @param brokerTime the broker's clock when it decided: with {@link Outcome#NOT_DUE}, the caller
 *                   waits until this clock reaches the tick (its own clock runs ahead); with
 *                   {@link Outcome#SUPERSEDED}, it fires the latest tick due by this clock
 */
public record TickResult(Outcome outcome, Instant brokerTime) {

    public TickResult {
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(brokerTime, "brokerTime");
    }

    /** The four possible answers to a tick. */
    public enum Outcome {
        /** This caller claimed the tick and its message was enqueued, in one step. */
        FIRED,
        /** The tick, or a later one of the same job, was already claimed: nothing was written. */
        ALREADY_FIRED,
        /** The tick is still in the future by the broker's clock: nothing was written. */
        NOT_DUE,
        /**
         * A later tick is due by the broker's clock (it reached the {@code supersededAt} of the
         * call): nothing was written, and the caller fires the latest due tick instead.
         */
        SUPERSEDED
    }
}

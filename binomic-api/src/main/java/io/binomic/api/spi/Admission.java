package io.binomic.api.spi;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The flow-control decision on one fetched delivery ({@link FlowLimits#admit}).
 *
 * @param delivery the delivery decided on
 * @param decision run it now, or it waits (already moved to the delayed set, its delivery acked), or
 *     it was not this consumer's to decide on
 * @param dueAt when a waiting message is due again: the time its rate limit allows, or the latest a
 *     message waiting for a slot is looked at again (a released slot moves it back sooner); for
 *     {@code HOLD}, the start reserved for it (all on the broker's clock)
 * @param hold for {@code HOLD}, how long after the decision its reserved start comes, so that the
 *     caller can wait on its own clock; zero otherwise
 */
public record Admission(Delivery delivery, Decision decision, Optional<Instant> dueAt, Duration hold) {

    /** What happens to a delivery. */
    public enum Decision {
        /** Run it: it holds its concurrency slots and counted against its rate limits. */
        RUN,
        /**
         * Run it at its reserved start, {@code hold} from now: admitted like {@code RUN} (it holds its
         * slots, and its rate limits counted it at that start), so the caller keeps it and starts it
         * then, not earlier. A caller that cannot start it within a moment of that time gives it back
         * (a {@link Settlement.RetryLater} due now, which releases its slots) rather than start it late.
         */
        HOLD,
        /** Over a rate limit: moved to the delayed set, due when the limit allows it; no attempt used. */
        WAIT_RATE,
        /** No free concurrency slot: moved to the delayed set until a slot is released; no attempt used. */
        WAIT_SLOT,
        /** Not pending under this consumer any more (reclaimed, or settled): do not run it. */
        NOT_PENDING
    }

    public Admission {
        Objects.requireNonNull(delivery, "delivery");
        Objects.requireNonNull(decision, "decision");
        Objects.requireNonNull(dueAt, "dueAt");
        Objects.requireNonNull(hold, "hold");
        if (hold.isNegative() || (decision != Decision.HOLD && !hold.isZero())) {
            throw new IllegalArgumentException("only a HOLD decision holds, and never for a negative time; was " + decision + " " + hold);
        }
    }

    /** A decision that holds nothing in the caller. */
    public Admission(Delivery delivery, Decision decision, Optional<Instant> dueAt) {
        this(delivery, decision, dueAt, Duration.ZERO);
    }

    /**
     * A delivery and the limits it must pass.
     *
     * @param delivery a delivery the asking consumer holds, with a message
     * @param limits the limits, at least one
     */
    public record Request(Delivery delivery, List<FlowLimit> limits) {
        public Request {
            Objects.requireNonNull(delivery, "delivery");
            if (delivery.message().isEmpty()) {
                throw new IllegalArgumentException("an undecodable delivery has no limits to pass");
            }
            limits = List.copyOf(limits);
            if (limits.isEmpty()) {
                throw new IllegalArgumentException("a request needs at least one limit");
            }
        }
    }
}

package io.binomic.api.spi;

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
 *     message waiting for a slot is looked at again (a released slot moves it back sooner)
 */
public record Admission(Delivery delivery, Decision decision, Optional<Instant> dueAt) {

    /** What happens to a delivery. */
    public enum Decision {
        /** Run it: it holds its concurrency slots and counted against its rate limits. */
        RUN,
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

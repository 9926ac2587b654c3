package io.binomic.api.spi;

import io.binomic.api.DeadLetter.Failure;
import java.time.Instant;
import java.util.Objects;

/**
 * How one delivery ends, as a worker asks its broker to record it with {@link Broker#settle}.
 * Every settlement is <em>fenced</em>: it takes effect only while the settling consumer still owns
 * the delivery with the same {@link Delivery#deliveryCount()}. Once a delivery has been reclaimed
 * by another consumer (its owner stopped renewing the lease), the old owner's late settlement is
 * a no-op, so a frozen worker that wakes up cannot ack, retry or dead-letter a run it no longer owns.
 */
public sealed interface Settlement {

    /** The delivery this settles. */
    Delivery delivery();

    /**
     * The change to the job's record, for a tracked job; null for one that is not tracked. Applied
     * in the same atomic step as the settlement, and only when the settlement is (a stale
     * settlement changes no record either).
     */
    JobUpdate job();

    /** The handler returned: acknowledge the delivery. */
    record Ack(Delivery delivery, JobUpdate job) implements Settlement {
        public Ack {
            Objects.requireNonNull(delivery, "delivery");
        }

        /** An ack of a job that is not tracked. */
        public Ack(Delivery delivery) { this(delivery, null); }
    }

    /** Acknowledge the failed delivery and schedule {@code next} for {@code dueAt}, in one atomic step. */
    record RetryLater(Delivery delivery, Message next, Instant dueAt, JobUpdate job) implements Settlement {

        /** A retry of a job that is not tracked. */
        public RetryLater(Delivery delivery, Message next, Instant dueAt) { this(delivery, next, dueAt, null); }

        public RetryLater {
            Objects.requireNonNull(delivery, "delivery");
            Objects.requireNonNull(next, "next");
            Objects.requireNonNull(dueAt, "dueAt");
            if (!delivery.queue().equals(next.queue())) {
                throw new IllegalArgumentException("a retry stays on its queue: delivery of '" + delivery.queue()
                        + "' but next message for '" + next.queue() + "'");
            }
        }
    }

    /** Acknowledge the delivery and add it to its queue's dead-letter queue, in one atomic step. */
    record DeadLetter(Delivery delivery, Failure failure, JobUpdate job) implements Settlement {

        /** A dead letter of a job that is not tracked. */
        public DeadLetter(Delivery delivery, Failure failure) { this(delivery, failure, null); }

        public DeadLetter {
            Objects.requireNonNull(delivery, "delivery");
            Objects.requireNonNull(failure, "failure");
        }
    }
}

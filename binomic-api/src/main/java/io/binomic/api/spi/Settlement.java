package io.binomic.api.spi;

import io.binomic.api.Message;
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

    /** The handler returned: acknowledge the delivery. */
    record Ack(Delivery delivery) implements Settlement {
        public Ack {
            Objects.requireNonNull(delivery, "delivery");
        }
    }

    /** Acknowledge the failed delivery and schedule {@code next} for {@code dueAt}, in one atomic step. */
    record RetryLater(Delivery delivery, Message next, Instant dueAt) implements Settlement {
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
    record DeadLetter(Delivery delivery, io.binomic.api.DeadLetter.Failure failure) implements Settlement {
        public DeadLetter {
            Objects.requireNonNull(delivery, "delivery");
            Objects.requireNonNull(failure, "failure");
        }
    }
}

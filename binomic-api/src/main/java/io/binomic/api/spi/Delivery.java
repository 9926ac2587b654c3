package io.binomic.api.spi;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One fetched message as a broker hands it to a worker, with the receipt needed to ack it.
 * A delivery whose stored fields could not be decoded carries no message but a
 * {@link #decodeProblem()} and the raw fields, so the worker can dead-letter it without loss.
 *
 * @param queue the queue it was fetched from
 * @param receipt the broker's opaque token for this hand-out, given back to settle it, unique within
 *     its queue only (the Redis broker: the stream entry id, with the priority level's stream, so two
 *     queues written in the same millisecond hand out equal receipts): the core matches a settlement,
 *     a reclaim or a cancel to the delivery it holds by {@link #key()}, and never parses or orders
 *     receipts, so a broker may put in them what it needs
 * @param message the decoded message, as stored (its attempt is the attempt when it was enqueued)
 * @param deliveryCount how many times this entry has been handed out, this time included (1 at first)
 * @param rawFields the stored fields, kept only for broken entries (empty otherwise)
 * @param decodeProblem why the entry could not be decoded
 */
public record Delivery(String queue, String receipt, Optional<Message> message, int deliveryCount,
                       Map<String, String> rawFields, Optional<String> decodeProblem) {

    public Delivery {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(receipt, "receipt");
        if (deliveryCount < 1) {
            throw new IllegalArgumentException("deliveryCount must be >= 1, was " + deliveryCount);
        }
        rawFields = Map.copyOf(rawFields);
        if (message.isEmpty() == decodeProblem.isEmpty()) {
            throw new IllegalArgumentException("a delivery has either a message or a decode problem");
        }
    }

    /** A well-formed delivery. */
    public static Delivery of(String queue, String receipt, Message message, int deliveryCount) {
        return new Delivery(queue, receipt, Optional.of(message), deliveryCount, Map.of(), Optional.empty());
    }

    /** A delivery of an entry that could not be decoded. */
    public static Delivery malformed(String queue, String receipt, Map<String, String> rawFields, int deliveryCount, String problem) {
        return new Delivery(queue, receipt, Optional.empty(), deliveryCount, rawFields, Optional.of(problem));
    }

    /**
     * What identifies this hand-out among everything one worker holds, over all the queues it reads:
     * the queue and the receipt (a receipt alone repeats across queues). '|' is in no queue name.
     */
    public String key() { return queue + '|' + receipt; }

    /**
     * The attempt this delivery represents: the stored attempt plus every earlier hand-out of the
     * same entry that ended without an ack (a worker died or was stopped holding it). Saturates
     * at {@link Integer#MAX_VALUE}: a stored attempt near it (written by hand) must read as a spent
     * budget, never wrap to a negative attempt that a worker would run.
     */
    public int attempt() {
        return message.map(m -> (int) Math.min(Integer.MAX_VALUE, (long) m.attempt() + deliveryCount - 1)).orElse(deliveryCount);
    }
}

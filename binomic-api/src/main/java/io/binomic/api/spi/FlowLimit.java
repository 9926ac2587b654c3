package io.binomic.api.spi;

import io.binomic.api.QueueLimits;
import io.binomic.api.RateLimit;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One limit a delivery must pass before it runs, as a worker hands it to {@link FlowLimits#admit}: a
 * rate limit (GCRA: one start every {@code intervalMicros}, up to {@code burst} at once) or a
 * concurrency limit ({@code permits} slots). Limits with the same {@code id} on one queue share
 * their state, whichever worker or host asks.
 *
 * @param id names the limit within its queue (letters, digits and {@code _.:%+*-~}), e.g.
 *     {@code t:send-mail} for a task, {@code k:send-mail:acme} for one key of it
 * @param kind rate or concurrency
 * @param permits starts per period (rate) or slots (concurrency), at least 1
 * @param intervalMicros the spacing of starts in microseconds (rate); 0 for a concurrency limit
 * @param burst starts allowed at once after a quiet spell (rate), from 1; 1 for a concurrency limit
 */
public record FlowLimit(String id, Kind kind, int permits, long intervalMicros, int burst) {

    /**
     * Header of a message the rate limits already admitted (it waited for its turn in the delayed
     * set): its value is the attempt it was admitted for, so a retry (a later attempt) is counted again.
     */
    public static final String RATE_ADMITTED_HEADER = "limit.rate";

    /**
     * Header of a message moved back to its queue when a concurrency slot it waited for was
     * released: if it finds the slot taken again, it waits ahead of the messages that joined the line
     * after it. Its value is the attempt.
     */
    public static final String TURN_HEADER = "limit.turn";

    /**
     * The id of a queue's own limits ({@link QueueLimits}, {@link FlowLimits#setQueueLimits}):
     * a broker that changes them releases what that id holds back, and decides under the limits set
     * now whatever a request passes under this id.
     */
    public static final String QUEUE_LIMIT_ID = "q";

    private static final Pattern ID = Pattern.compile("[A-Za-z0-9_.:%+*~-]{1,600}");

    /** The kind of a limit. */
    public enum Kind { RATE, CONCURRENCY }

    public FlowLimit {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(kind, "kind");
        if (!ID.matcher(id).matches()) {
            throw new IllegalArgumentException("flow limit id must be 1-600 characters of letters, digits and _.:%+*~-, was '" + id + "'");
        }
        if (permits < 1) {
            throw new IllegalArgumentException("flow limit permits must be >= 1, was " + permits);
        }
        if (kind == Kind.RATE && (intervalMicros < 1 || burst < 1)) {
            throw new IllegalArgumentException("a rate limit needs intervalMicros >= 1 and burst >= 1, was " + intervalMicros + ", " + burst);
        }
    }

    /** A rate limit named {@code id}. */
    public static FlowLimit rate(String id, RateLimit limit) {
        return new FlowLimit(id, Kind.RATE, limit.permits(), limit.intervalMicros(), limit.burst());
    }

    /** A concurrency limit of {@code max} slots named {@code id}. */
    public static FlowLimit concurrency(String id, int max) { return new FlowLimit(id, Kind.CONCURRENCY, max, 0, 1); }
}

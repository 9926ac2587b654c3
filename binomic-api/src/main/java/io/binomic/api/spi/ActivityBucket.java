package io.binomic.api.spi;

import java.time.Duration;
import java.time.Instant;

/**
 * What the workers of every process did on one queue in one minute: the time series behind the
 * dashboard's charts. Workers add their counts to the broker in batches (every few seconds, one
 * write per queue), never per message; a broker keeps the buckets of the last
 * {@link #KEPT} and forgets older ones.
 *
 * @param minute the first instant of the minute (whole minutes since the epoch)
 * @param succeeded executions that returned
 * @param failed executions that threw or timed out
 * @param retried messages scheduled for another attempt
 * @param deadLettered messages sent to the dead-letter queue
 * @param runNanos summed duration of the executions (succeeded and failed)
 * @param maxRunNanos the longest execution
 */
public record ActivityBucket(Instant minute, long succeeded, long failed, long retried, long deadLettered, long runNanos,
                             long maxRunNanos) {

    /** How long brokers keep the buckets: the dashboard charts the last hour. */
    public static final Duration KEPT = Duration.ofHours(2);

    public ActivityBucket {
        if (minute.getEpochSecond() % 60 != 0 || minute.getNano() != 0) {
            throw new IllegalArgumentException("minute must be the start of a minute, was " + minute);
        }
        if (succeeded < 0 || failed < 0 || retried < 0 || deadLettered < 0 || runNanos < 0 || maxRunNanos < 0) {
            throw new IllegalArgumentException("activity counts must not be negative: " + succeeded + ", " + failed + ", " + retried
                    + ", " + deadLettered + ", " + runNanos + ", " + maxRunNanos);
        }
    }

    /** An empty bucket for the minute holding {@code instant}. */
    public static ActivityBucket empty(Instant instant) {
        return new ActivityBucket(minuteOf(instant), 0, 0, 0, 0, 0, 0);
    }

    /** The start of the minute holding {@code instant}. */
    public static Instant minuteOf(Instant instant) {
        return Instant.ofEpochSecond(Math.floorDiv(instant.getEpochSecond(), 60) * 60);
    }

    /** Executions counted (succeeded + failed). */
    public long executions() { return succeeded + failed; }

    /** Mean execution time; zero when nothing ran. */
    public Duration meanRun() {
        long n = executions();
        return n == 0 ? Duration.ZERO : Duration.ofNanos(runNanos / n);
    }

    /** This bucket with {@code other}'s counts added (same minute): what two processes did together. */
    public ActivityBucket plus(ActivityBucket other) {
        if (!other.minute.equals(minute)) {
            throw new IllegalArgumentException("cannot add the bucket of " + other.minute + " to that of " + minute);
        }
        return new ActivityBucket(minute, succeeded + other.succeeded, failed + other.failed, retried + other.retried,
                deadLettered + other.deadLettered, runNanos + other.runNanos, Math.max(maxRunNanos, other.maxRunNanos));
    }

    /** True when nothing was counted. */
    public boolean isEmpty() { return executions() == 0 && retried == 0 && deadLettered == 0; }
}

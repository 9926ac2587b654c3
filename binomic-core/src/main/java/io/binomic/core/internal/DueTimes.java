package io.binomic.core.internal;

import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** Due times for the delayed set, which brokers keep in whole milliseconds. */
public final class DueTimes {
    private DueTimes() { }

    /**
     * {@code instant} rounded up to a whole millisecond: a delay or a backoff then never ends
     * early, where truncating would let a message move up to a millisecond before its time.
     */
    public static Instant notBefore(Instant instant) {
        Instant millis = instant.truncatedTo(ChronoUnit.MILLIS);
        return millis.equals(instant) ? instant : millis.plusMillis(1);
    }
}

package io.binomic.core.internal.schedule;

import io.binomic.api.CronExpression;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;

/** When a periodic job fires. Ticks are absolute instants every process computes alike. */
@FunctionalInterface
public interface Trigger {

    /** The first tick strictly after {@code after}. */
    Instant nextAfter(Instant after);

    /** Ticks of {@code cron} read in {@code zone}. */
    static Trigger cron(CronExpression cron, ZoneId zone) { return after -> cron.next(after.atZone(zone)).toInstant(); }

    /**
     * Every {@code period}, aligned on multiples of the period since the epoch, so that every
     * process agrees on each tick's instant (which is what lets them claim it once).
     */
    static Trigger every(Duration period) {
        long millis = period.toMillis();
        if (millis <= 0) {
            throw new IllegalArgumentException("period must be at least 1 ms, was " + period);
        }
        return after -> Instant.ofEpochMilli(Math.floorDiv(after.toEpochMilli(), millis) * millis + millis);
    }
}

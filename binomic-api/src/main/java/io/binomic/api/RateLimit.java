package io.binomic.api;

import java.time.Duration;
import java.util.Objects;

/**
 * At most {@link #permits()} starts per {@link #period()}, counted across every worker and host
 * (in Redis, or in the embedded broker). Starts are spaced evenly, one every
 * {@code period / permits}, with up to {@link #burst()} of them at once after a quiet spell. The
 * limiter allows one start of jitter on top (a start that comes a little late does not cost the
 * next one its turn), so any window of one period holds at most {@code permits + burst} starts, and
 * after a quiet spell {@code burst + 1} may start at once (two with the default burst of 1). The
 * algorithm is GCRA (the generic cell rate algorithm): one timestamp per limit, so the cost does
 * not grow with the rate.
 *
 * <pre>{@code
 * RateLimit fiftyPerSecond = RateLimit.perSecond(50);
 * RateLimit thousandPerHour = RateLimit.of(1000, Duration.ofHours(1)).withBurst(10);
 * }</pre>
 */
public final class RateLimit {
    private final int permits;
    private final Duration period;
    private final int burst;

    private RateLimit(int permits, Duration period, int burst) {
        this.permits = permits;
        this.period = period;
        this.burst = burst;
    }

    /**
     * At most {@code permits} starts per {@code period}, spaced evenly, no burst.
     *
     * @throws IllegalArgumentException when permits is not positive, or the period is not positive,
     *         or shorter than one microsecond per permit (starts are timed in whole microseconds)
     */
    public static RateLimit of(int permits, Duration period) {
        Config.requireAtLeast("rate limit permits", 1, permits);
        Config.requirePositive("rate limit period", Objects.requireNonNull(period, "rate limit period must not be null"));
        if (micros(period) < permits) {
            throw new IllegalArgumentException("rate limit of " + permits + " per " + period + " is finer than one start per microsecond;"
                    + " use at most " + Math.max(1, micros(period)) + " permits for this period, or a longer period");
        }
        return new RateLimit(permits, period, 1);
    }

    /** At most {@code permits} starts per second: {@code of(permits, Duration.ofSeconds(1))}. */
    public static RateLimit perSecond(int permits) { return of(permits, Duration.ofSeconds(1)); }

    /**
     * This limit allowing up to {@code burst} starts at once after a quiet spell (at most
     * {@code permits}); the long-run rate is unchanged. Defaults to 1 (no burst: starts spaced evenly).
     *
     * @throws IllegalArgumentException when burst is below 1 or above the permits
     */
    public RateLimit withBurst(int burst) {
        if (burst < 1 || burst > permits) {
            throw new IllegalArgumentException("rate limit burst must be between 1 and the permits (" + permits + "), was " + burst);
        }
        return new RateLimit(permits, period, burst);
    }

    /** Starts allowed per period. */
    public int permits() { return permits; }

    /** The period the permits are counted over. */
    public Duration period() { return period; }

    /** Starts allowed at once after a quiet spell; 1 unless {@link #withBurst} said otherwise. */
    public int burst() { return burst; }

    /** The spacing of starts, in microseconds: {@code period / permits}, rounded up (so never faster than the limit). */
    public long intervalMicros() { return (micros(period) + permits - 1) / permits; }

    private static long micros(Duration d) {
        return d.compareTo(Duration.ofDays(100_000)) > 0 ? Long.MAX_VALUE / 2 : d.toNanos() / 1000;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RateLimit r && r.permits == permits && r.period.equals(period) && r.burst == burst;
    }

    @Override
    public int hashCode() { return Objects.hash(permits, period, burst); }

    @Override
    public String toString() { return permits + "/" + period + (burst > 1 ? " burst " + burst : ""); }
}

package io.binomic.api;

import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * How long a failed message waits before its next attempt: {@code base * factor^(attempt-1)},
 * capped at {@code cap}, then optionally shortened by a random jitter.
 *
 * <p>The default (1.5 s, factor 2, cap 30 s, no jitter) waits 1.5, 3, 6, 12, 24, 30, 30... s.
 *
 * @param base the wait after the first failed attempt; positive
 * @param factor growth per attempt; at least 1 (1 gives a fixed backoff)
 * @param cap the longest wait; at least {@code base}
 * @param jitter fraction of the computed wait that may be randomly removed, in [0, 1]; 0 is off
 */
public record Backoff(Duration base, double factor, Duration cap, double jitter) {

    /** 1.5 s, doubling, capped at 30 s, no jitter: the reference implementation's schedule. */
    public static final Backoff DEFAULT = new Backoff(Duration.ofMillis(1500), 2.0, Duration.ofSeconds(30), 0.0);

    public Backoff {
        Objects.requireNonNull(base, "backoff.base must not be null");
        Objects.requireNonNull(cap, "backoff.cap must not be null");
        if (base.isNegative() || base.isZero()) {
            throw new IllegalArgumentException("backoff.base must be positive, was " + base);
        }
        if (!(factor >= 1.0) || Double.isInfinite(factor)) {
            throw new IllegalArgumentException("backoff.factor must be a finite number >= 1, was " + factor);
        }
        if (cap.compareTo(base) < 0) {
            throw new IllegalArgumentException("backoff.cap must be >= backoff.base (" + base + "), was " + cap);
        }
        if (!(jitter >= 0.0 && jitter <= 1.0)) {
            throw new IllegalArgumentException("backoff.jitter must be in [0, 1], was " + jitter);
        }
    }

    /** Exponential backoff without jitter. */
    public static Backoff exponential(Duration base, double factor, Duration cap) {
        return new Backoff(base, factor, cap, 0.0);
    }

    /** The same wait after every failure. */
    public static Backoff fixed(Duration wait) {
        return new Backoff(wait, 1.0, wait, 0.0);
    }

    /** This backoff with a jitter fraction in [0, 1]. */
    public Backoff withJitter(double fraction) {
        return new Backoff(base, factor, cap, fraction);
    }

    /**
     * The wait before retrying a message whose attempt number {@code failedAttempt} (1-based) just
     * failed, without jitter.
     */
    public Duration delay(int failedAttempt) {
        if (failedAttempt < 1) {
            throw new IllegalArgumentException("failedAttempt must be >= 1, was " + failedAttempt);
        }
        double millis = base.toMillis() * Math.pow(factor, failedAttempt - 1);
        long capMillis = cap.toMillis();
        return Duration.ofMillis(millis >= capMillis || Double.isNaN(millis) ? capMillis : (long) millis);
    }

    /** {@link #delay(int)} minus a random share of at most {@code jitter} of it. */
    public Duration delay(int failedAttempt, RandomGenerator random) {
        Duration full = delay(failedAttempt);
        if (jitter == 0.0) {
            return full;
        }
        long millis = full.toMillis();
        return Duration.ofMillis(millis - (long) (millis * jitter * random.nextDouble()));
    }
}

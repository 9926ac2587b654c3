package io.binomic.api;

import io.binomic.api.internal.Once;
import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * How long a failed message waits before its next attempt: {@code base * factor^(attempt-1)},
 * capped at {@code cap}, then optionally shortened by a random jitter. Immutable, and equal to
 * another {@code Backoff} with the same settings.
 *
 * <p>The default (1.5 s, factor 2, cap 30 s, no jitter) waits 1.5, 3, 6, 12, 24, 30, 30... s.
 * {@link #exponential}, {@link #fixed} and {@link #withJitter} cover the usual shapes:
 *
 * <pre>{@code
 * Backoff b = Backoff.exponential(Duration.ofSeconds(1), 2, Duration.ofMinutes(1)).withJitter(0.2);
 * Backoff same = Backoff.builder().base(Duration.ofSeconds(1)).factor(2).cap(Duration.ofMinutes(1)).jitter(0.2).build();
 * }</pre>
 */
public final class Backoff {

    /** 1.5 s, doubling, capped at 30 s, no jitter: the reference implementation's schedule. */
    public static final Backoff DEFAULT = builder().build();

    private final Duration base;
    private final double factor;
    private final Duration cap;
    private final double jitter;

    private Backoff(Builder b) {
        this.base = Objects.requireNonNull(b.base.get(), "backoff.base must not be null");
        this.factor = b.factor.get();
        this.cap = Objects.requireNonNull(b.cap.get(), "backoff.cap must not be null");
        this.jitter = b.jitter.get();
        Config.requirePositive("backoff.base", base);
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

    /** Starts a backoff; every setting not given keeps the value of {@link #DEFAULT}. */
    public static Builder builder() { return new Builder(); }

    /** A builder holding this backoff's settings, each of which may be replaced once. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.base.copy(base);
        b.factor.copy(factor);
        b.cap.copy(cap);
        b.jitter.copy(jitter);
        return b;
    }

    /** Exponential backoff without jitter. */
    public static Backoff exponential(Duration base, double factor, Duration cap) {
        return builder().base(base).factor(factor).cap(cap).build();
    }

    /** The same wait after every failure. */
    public static Backoff fixed(Duration wait) { return builder().base(wait).factor(1.0).cap(wait).build(); }

    /** This backoff with a jitter fraction in [0, 1] (replacing its own). */
    public Backoff withJitter(double fraction) { return toBuilder().jitter(fraction).build(); }

    /** The wait after the first failed attempt; positive. */
    public Duration base() { return base; }

    /** Growth per attempt; at least 1 (1 gives a fixed backoff). */
    public double factor() { return factor; }

    /** The longest wait; at least {@link #base()}. */
    public Duration cap() { return cap; }

    /** Fraction of the computed wait that may be randomly removed, in [0, 1]; 0 is off. */
    public double jitter() { return jitter; }

    /**
     * The wait before retrying a message whose attempt number {@code failedAttempt} (1-based) just
     * failed, without jitter.
     */
    public Duration delay(int failedAttempt) {
        Config.requireAtLeast("failedAttempt", 1, failedAttempt);
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

    @Override
    public boolean equals(Object o) {
        return o instanceof Backoff other && base.equals(other.base) && Double.compare(factor, other.factor) == 0
                && cap.equals(other.cap) && Double.compare(jitter, other.jitter) == 0;
    }

    @Override
    public int hashCode() { return Objects.hash(base, factor, cap, jitter); }

    @Override
    public String toString() {
        return "Backoff[base=" + base + ", factor=" + factor + ", cap=" + cap + ", jitter=" + jitter + "]";
    }

    /** Builds {@link Backoff}: each setting once (a second call is an {@link IllegalArgumentException}), checked by {@link #build()}. */
    public static final class Builder {
        private final Once<Duration> base = new Once<>("backoff.base", Duration.ofMillis(1500));
        private final Once<Double> factor = new Once<>("backoff.factor", 2.0);
        private final Once<Duration> cap = new Once<>("backoff.cap", Duration.ofSeconds(30));
        private final Once<Double> jitter = new Once<>("backoff.jitter", 0.0);

        private Builder() { }

        /** The wait after the first failed attempt; must be positive. Defaults to 1.5 s. */
        public Builder base(Duration base) { return Once.set(this, this.base, base); }

        /** Growth per attempt; must be finite and at least 1 (1 gives a fixed backoff). Defaults to 2. */
        public Builder factor(double factor) { return Once.set(this, this.factor, factor); }

        /** The longest wait; must be at least the base. Defaults to 30 s. */
        public Builder cap(Duration cap) { return Once.set(this, this.cap, cap); }

        /** Fraction of each wait that may be randomly removed, in [0, 1]. Defaults to 0 (no jitter). */
        public Builder jitter(double jitter) { return Once.set(this, this.jitter, jitter); }

        /** Checks the settings and builds the backoff, or throws an {@link IllegalArgumentException} naming a bad one. */
        public Backoff build() { return new Backoff(this); }
    }
}

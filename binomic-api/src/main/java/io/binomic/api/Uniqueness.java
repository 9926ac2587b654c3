package io.binomic.api;

import java.time.Duration;
import java.util.Objects;

/**
 * How long a unique job's key stays taken, so that a second submit with the same key enqueues
 * nothing and returns the first job's handle. Made by one of three factories, each with the
 * time-to-live that bounds the key whatever happens to its job (a lost job cannot hold it forever):
 *
 * <pre>{@code
 * Uniqueness.whileQueued(Duration.ofHours(1))          // until a worker starts it
 * Uniqueness.whileQueuedOrRunning(Duration.ofHours(1)) // until it ends: succeeded, dead-lettered or cancelled
 * Uniqueness.forPeriod(Duration.ofMinutes(10))         // for ten minutes after the first submit, whatever happens
 * }</pre>
 *
 * A task declares it with {@code Task.Builder.unique}, one submit with {@code SubmitOptions.Builder.unique}.
 * The key is the task's name plus a key: given, derived from the argument by the task, or else the
 * argument itself (its encoded form).
 */
public final class Uniqueness {

    /** When the key is given back. */
    public enum Scope {
        /** Until a worker starts the job (or it ends without starting: cancelled, dead-lettered). */
        WHILE_QUEUED,
        /** Until the job ends: succeeded, dead-lettered or cancelled. A retry keeps the key. */
        WHILE_QUEUED_OR_RUNNING,
        /** For a fixed period after the submit that took it, whatever the job does. */
        FOR_PERIOD
    }

    private final Scope scope;
    private final Duration ttl;

    private Uniqueness(Scope scope, Duration ttl) {
        this.scope = scope;
        this.ttl = ttl;
    }

    /**
     * Unique until a worker starts the job: a submit while it waits (ready or delayed) returns it,
     * one after it started enqueues a new job.
     *
     * @param ttl the longest the key is held, even if the job never starts (a queue without workers): at least 1 ms
     */
    public static Uniqueness whileQueued(Duration ttl) {
        return new Uniqueness(Scope.WHILE_QUEUED, check("Uniqueness.whileQueued(ttl)", ttl));
    }

    /**
     * Unique until the job ends (succeeded, dead-lettered or cancelled), through its retries.
     *
     * @param ttl the longest the key is held: longer than the job can wait and run with its retries, at least 1 ms
     */
    public static Uniqueness whileQueuedOrRunning(Duration ttl) {
        return new Uniqueness(Scope.WHILE_QUEUED_OR_RUNNING, check("Uniqueness.whileQueuedOrRunning(ttl)", ttl));
    }

    /**
     * Unique for {@code period} after the submit that took the key, whether the job has ended or not
     * (at most one job per period and key: a throttle).
     *
     * @param period at least 1 ms
     */
    public static Uniqueness forPeriod(Duration period) {
        return new Uniqueness(Scope.FOR_PERIOD, check("Uniqueness.forPeriod(period)", period));
    }

    private static Duration check(String what, Duration d) {
        if (d == null) {
            throw new IllegalArgumentException(what + " must not be null: give how long the key may be held at most, such as Duration.ofHours(1)");
        }
        if (d.toMillis() < 1) {
            throw new IllegalArgumentException(what + " must be at least 1 ms, was " + d
                    + ": give how long the key may be held at most, such as Duration.ofHours(1)");
        }
        return d;
    }

    /** When the key is given back. */
    public Scope scope() { return scope; }

    /** The longest the key is held: the period of {@link Scope#FOR_PERIOD}, the bound of the others. */
    public Duration ttl() { return ttl; }

    @Override
    public boolean equals(Object o) { return o instanceof Uniqueness u && u.scope == scope && u.ttl.equals(ttl); }

    @Override
    public int hashCode() { return Objects.hash(scope, ttl); }

    @Override
    public String toString() {
        return switch (scope) {
            case WHILE_QUEUED -> "Uniqueness.whileQueued(" + ttl + ")";
            case WHILE_QUEUED_OR_RUNNING -> "Uniqueness.whileQueuedOrRunning(" + ttl + ")";
            case FOR_PERIOD -> "Uniqueness.forPeriod(" + ttl + ")";
        };
    }
}

package io.binomic.api;

import io.binomic.api.internal.Once;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The retry policy every task gets unless its declaration overrides it. Built by {@link #builder()},
 * whose setters say the defaults; immutable, and equal to other task defaults with the same settings.
 */
public final class TaskDefaults {

    private final int maxAttempts;
    private final Duration taskTimeout;
    private final Backoff backoff;
    private final Optional<Duration> staleAfter;

    private TaskDefaults(Builder b) {
        this.maxAttempts = Config.requireAtLeast("maxAttempts", 1, b.maxAttempts.get());
        this.taskTimeout = Config.requirePositive("taskTimeout", b.taskTimeout.get());
        this.backoff = Objects.requireNonNull(b.backoff.get(), "backoff must not be null");
        this.staleAfter = Optional.ofNullable(b.staleAfter.get());
        staleAfter.ifPresent(d -> Config.requirePositive("staleAfter", d));
    }

    /** The defaults: 3 attempts, 600 s timeout, {@link Backoff#DEFAULT}, staleAfter off. */
    public static TaskDefaults defaults() { return builder().build(); }

    /** Starts task defaults; every setting not given keeps its documented default. */
    public static Builder builder() { return new Builder(); }

    /** A builder holding these settings, each of which may be replaced once. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.maxAttempts.copy(maxAttempts);
        b.taskTimeout.copy(taskTimeout);
        b.backoff.copy(backoff);
        b.staleAfter.copy(staleAfter.orElse(null));
        return b;
    }

    /** How many times a message may be executed, including the first. */
    public int maxAttempts() { return maxAttempts; }

    /** How long one execution may run before it is interrupted and retried. */
    public Duration taskTimeout() { return taskTimeout; }

    /** The wait between attempts. */
    public Backoff backoff() { return backoff; }

    /**
     * When present, a message older than this when picked up is not executed but retried with a
     * fresh enqueue time.
     */
    public Optional<Duration> staleAfter() { return staleAfter; }

    /** The effective max attempts of {@code task}. */
    public int maxAttemptsOf(Task<?, ?> task) { return task.maxAttempts().orElse(maxAttempts); }

    /** The effective timeout of {@code task}. */
    public Duration timeoutOf(Task<?, ?> task) { return task.timeout().orElse(taskTimeout); }

    /** The effective backoff of {@code task}. */
    public Backoff backoffOf(Task<?, ?> task) { return task.backoff().orElse(backoff); }

    @Override
    public boolean equals(Object o) {
        return o instanceof TaskDefaults other && maxAttempts == other.maxAttempts && taskTimeout.equals(other.taskTimeout)
                && backoff.equals(other.backoff) && staleAfter.equals(other.staleAfter);
    }

    @Override
    public int hashCode() { return Objects.hash(maxAttempts, taskTimeout, backoff, staleAfter); }

    @Override
    public String toString() {
        return "TaskDefaults[maxAttempts=" + maxAttempts + ", taskTimeout=" + taskTimeout + ", backoff=" + backoff
                + ", staleAfter=" + staleAfter + "]";
    }

    /** Builds {@link TaskDefaults}: each setting once (a second call is an {@link IllegalArgumentException}), checked by {@link #build()}. */
    public static final class Builder {
        private final Once<Integer> maxAttempts = new Once<>("maxAttempts", 3);
        private final Once<Duration> taskTimeout = new Once<>("taskTimeout", Duration.ofSeconds(600));
        private final Once<Backoff> backoff = new Once<>("backoff", Backoff.DEFAULT);
        private final Once<Duration> staleAfter = new Once<>("staleAfter", null);

        private Builder() { }

        /** Executions allowed per message, the first included; at least 1. Defaults to 3. */
        public Builder maxAttempts(int maxAttempts) { return Once.set(this, this.maxAttempts, maxAttempts); }

        /** Longest run of one execution before it counts as a failed attempt; positive. Defaults to 600 s. */
        public Builder taskTimeout(Duration taskTimeout) { return Once.set(this, this.taskTimeout, taskTimeout); }

        /** Wait between attempts. Defaults to {@link Backoff#DEFAULT} (1.5 s doubling to 30 s, no jitter). */
        public Builder backoff(Backoff backoff) { return Once.set(this, this.backoff, backoff); }

        /**
         * Age past which a picked-up message is retried instead of executed; positive, or null for
         * off. Defaults to off: tying it to the timeout, as the Python original does, churns every
         * old backlog.
         */
        public Builder staleAfter(Duration staleAfter) { return Once.set(this, this.staleAfter, staleAfter); }

        /** Checks the settings and builds the task defaults, or throws an {@link IllegalArgumentException} naming a bad one. */
        public TaskDefaults build() { return new TaskDefaults(this); }
    }
}

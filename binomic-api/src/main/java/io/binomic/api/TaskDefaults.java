package io.binomic.api;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The retry policy every task gets unless its declaration overrides it.
 *
 * @param maxAttempts how many times a message may be executed, including the first
 * @param taskTimeout how long one execution may run before it is interrupted and retried
 * @param backoff the wait between attempts
 * @param staleAfter when present, a message older than this when picked up is not executed but
 *                   retried with a fresh enqueue time
 */
public record TaskDefaults(int maxAttempts, Duration taskTimeout, Backoff backoff, Optional<Duration> staleAfter) {

    public TaskDefaults {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be >= 1, was " + maxAttempts);
        }
        Config.requirePositive("taskTimeout", taskTimeout);
        Objects.requireNonNull(backoff, "backoff must not be null");
        Objects.requireNonNull(staleAfter, "staleAfter must not be null (use Optional.empty() for off)");
        staleAfter.ifPresent(d -> Config.requirePositive("staleAfter", d));
    }

    /** The defaults: 3 attempts, 600 s timeout, {@link Backoff#DEFAULT}, staleAfter off. */
    public static TaskDefaults defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The effective max attempts of {@code task}. */
    public int maxAttemptsOf(Task<?, ?> task) {
        return task.maxAttempts().orElse(maxAttempts);
    }

    /** The effective timeout of {@code task}. */
    public Duration timeoutOf(Task<?, ?> task) {
        return task.timeout().orElse(taskTimeout);
    }

    /** The effective backoff of {@code task}. */
    public Backoff backoffOf(Task<?, ?> task) {
        return task.backoff().orElse(backoff);
    }

    /** Builds {@link TaskDefaults}; values are checked in {@link #build()}. */
    public static final class Builder {
        private int maxAttempts = 3;
        private Duration taskTimeout = Duration.ofSeconds(600);
        private Backoff backoff = Backoff.DEFAULT;
        private Duration staleAfter;

        private Builder() { }

        /** Executions allowed per message, the first included. Defaults to 3. */
        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        /** Longest run of one execution before it counts as a failed attempt. Defaults to 600 s. */
        public Builder taskTimeout(Duration taskTimeout) {
            this.taskTimeout = taskTimeout;
            return this;
        }

        /** Wait between attempts. Defaults to {@link Backoff#DEFAULT} (1.5 s doubling to 30 s, no jitter). */
        public Builder backoff(Backoff backoff) {
            this.backoff = backoff;
            return this;
        }

        /**
         * Age past which a picked-up message is retried instead of executed. Defaults to off:
         * tying it to the timeout, as the Python original does, churns every old backlog.
         */
        public Builder staleAfter(Duration staleAfter) {
            this.staleAfter = staleAfter;
            return this;
        }

        public TaskDefaults build() {
            return new TaskDefaults(maxAttempts, taskTimeout, backoff, Optional.ofNullable(staleAfter));
        }
    }
}

package io.binomic.api;

import io.binomic.api.internal.Once;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Function;

/**
 * The flow limits a {@link Task} declares ({@link Task#limits()}): a rate limit and a concurrency
 * limit for all its jobs, and the same per key, where the key is a function of the argument. Every
 * limit holds across all workers and hosts; a job over one waits (it is not failed and uses no
 * attempt). A task with none costs nothing more (see module-info-docs/flow-control.md).
 *
 * @param <A> the task's argument type
 */
public final class TaskLimits<A> {
    /**
     * Header carrying the {@linkplain Task.Builder#limitKey limit key} of a job, set by
     * {@code submit} so that a worker decides without decoding the argument.
     */
    public static final String KEY_HEADER = "limitKey";

    private final RateLimit rate;
    private final Integer concurrency;
    private final RateLimit keyedRate;
    private final Integer keyedConcurrency;
    private final Function<? super A, String> key;

    private TaskLimits(Builder<A> b) {
        this.rate = b.rate.get();
        this.concurrency = b.concurrency.get();
        this.keyedRate = b.keyedRate.get();
        this.keyedConcurrency = b.keyedConcurrency.get();
        this.key = b.key.get();
    }

    /** The task-wide rate limit. */
    public Optional<RateLimit> rate() { return Optional.ofNullable(rate); }

    /** The task-wide concurrency limit. */
    public OptionalInt concurrency() { return concurrency == null ? OptionalInt.empty() : OptionalInt.of(concurrency); }

    /** The rate limit of each key. */
    public Optional<RateLimit> rateLimitPerKey() { return Optional.ofNullable(keyedRate); }

    /** The concurrency limit of each key. */
    public OptionalInt concurrencyLimitPerKey() {
        return keyedConcurrency == null ? OptionalInt.empty() : OptionalInt.of(keyedConcurrency);
    }

    /** True when the task declares a limit key (and so a per-key limit). */
    public boolean hasKey() { return key != null; }

    /**
     * The limit key of {@code argument}, empty when the task declares no key.
     *
     * @throws IllegalArgumentException when the key function returns null
     */
    public Optional<String> keyOf(A argument) {
        if (key == null) {
            return Optional.empty();
        }
        String k = key.apply(argument);
        if (k == null) {
            throw new IllegalArgumentException("the limitKey function returned null for " + argument + "; return a key for every argument");
        }
        return Optional.of(k);
    }

    /** True when the task declares no limit at all (its jobs cost nothing more). */
    public boolean isEmpty() { return rate == null && concurrency == null && keyedRate == null && keyedConcurrency == null; }

    @Override
    public String toString() {
        return "TaskLimits[rate=" + rate + ", concurrency=" + concurrency + ", ratePerKey=" + keyedRate
                + ", concurrencyPerKey=" + keyedConcurrency + "]";
    }

    /** The settings, held by {@link Task.Builder}. */
    static final class Builder<A> {
        final Once<RateLimit> rate;
        final Once<Integer> concurrency;
        final Once<RateLimit> keyedRate;
        final Once<Integer> keyedConcurrency;
        final Once<Function<? super A, String>> key;

        Builder(String who) {
            rate = new Once<>(who + "rateLimit", null);
            concurrency = new Once<>(who + "concurrencyLimit", null);
            keyedRate = new Once<>(who + "rateLimitPerKey", null);
            keyedConcurrency = new Once<>(who + "concurrencyLimitPerKey", null);
            key = new Once<>(who + "limitKey", null, f -> "a key function");
        }

        TaskLimits<A> build(String name, Class<A> argumentType) {
            String who = "task '" + name + "': ";
            check(who + "concurrencyLimit", concurrency.get());
            check(who + "concurrencyLimitPerKey", keyedConcurrency.get());
            boolean perKey = keyedRate.get() != null || keyedConcurrency.get() != null;
            if (perKey && key.get() == null) {
                throw new IllegalArgumentException(who + "a per-key limit needs a key: add limitKey(argument -> ...)");
            }
            if (!perKey && key.get() != null) {
                throw new IllegalArgumentException(who + "limitKey is set but no per-key limit uses it: add rateLimitPerKey(...) or"
                        + " concurrencyLimitPerKey(...), or remove limitKey");
            }
            if (key.get() != null && argumentType == Void.class) {
                throw new IllegalArgumentException(who + "limitKey is a function of the argument, but the task takes none;"
                        + " use a task-wide limit (rateLimit, concurrencyLimit)");
            }
            return new TaskLimits<>(this);
        }

        private static void check(String field, Integer value) {
            if (value != null && value < 1) {
                throw new IllegalArgumentException(field + " must be >= 1, was " + value);
            }
        }
    }
}

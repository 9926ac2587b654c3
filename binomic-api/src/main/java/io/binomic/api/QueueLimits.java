package io.binomic.api;

import java.util.Objects;
import java.util.Optional;

/**
 * Limits on a whole queue, whatever its tasks: at most so many starts per period, and at most so
 * many jobs running at once, across every worker and host. Unlike a task's limits (declared in
 * code, {@link Task.Builder#rateLimit}), a queue's are kept in the broker and can be changed at run
 * time, from Java ({@code binomic.queues().setLimits}) or the CLI ({@code binomic queue limit}):
 * every worker of the queue applies the new ones within about a second. A job must pass its
 * queue's limits and its task's.
 *
 * <pre>{@code
 * QueueLimits limits = QueueLimits.builder()
 *         .rateLimit(RateLimit.perSecond(50))
 *         .concurrencyLimit(10)
 *         .build();
 * }</pre>
 */
public final class QueueLimits {
    /** No limit on the queue. */
    public static final QueueLimits NONE = new QueueLimits(null, 0);

    private final RateLimit rate;
    private final int concurrency;

    private QueueLimits(RateLimit rate, int concurrency) {
        this.rate = rate;
        this.concurrency = concurrency;
    }

    /** A builder with no limit set. */
    public static Builder builder() { return new Builder(); }

    /** The rate limit, if any. */
    public Optional<RateLimit> rate() { return Optional.ofNullable(rate); }

    /** The most jobs of the queue running at once, if limited. */
    public Optional<Integer> concurrency() { return concurrency == 0 ? Optional.empty() : Optional.of(concurrency); }

    /** True when neither limit is set. */
    public boolean isEmpty() { return rate == null && concurrency == 0; }

    @Override
    public boolean equals(Object o) {
        return o instanceof QueueLimits other && Objects.equals(rate, other.rate) && concurrency == other.concurrency;
    }

    @Override
    public int hashCode() { return Objects.hash(rate, concurrency); }

    /** As the CLI prints it: {@code rate 50 per PT1S (burst 1), concurrency 10}, or {@code none}. */
    @Override
    public String toString() {
        if (isEmpty()) {
            return "none";
        }
        StringBuilder s = new StringBuilder();
        if (rate != null) {
            s.append("rate ").append(rate.permits()).append(" per ").append(rate.period()).append(" (burst ").append(rate.burst()).append(')');
        }
        if (concurrency > 0) {
            s.append(s.isEmpty() ? "" : ", ").append("concurrency ").append(concurrency);
        }
        return s.toString();
    }

    /** Builds {@link QueueLimits}; each setting may be given once. */
    public static final class Builder {
        private RateLimit rate;
        private int concurrency;

        private Builder() {
        }

        /**
         * At most {@code limit} starts of the queue's jobs, across all workers. Defaults to none.
         *
         * @throws IllegalArgumentException when given twice
         */
        public Builder rateLimit(RateLimit limit) {
            Objects.requireNonNull(limit, "rateLimit must not be null");
            if (rate != null) {
                throw new IllegalArgumentException("rateLimit was already set to " + rate + "; set it once");
            }
            rate = limit;
            return this;
        }

        /**
         * At most {@code max} of the queue's jobs running at once, across all workers. Defaults to none.
         *
         * @throws IllegalArgumentException when below 1, or given twice
         */
        public Builder concurrencyLimit(int max) {
            Config.requireAtLeast("concurrencyLimit", 1, max);
            if (concurrency != 0) {
                throw new IllegalArgumentException("concurrencyLimit was already set to " + concurrency + "; set it once");
            }
            concurrency = max;
            return this;
        }

        /** The limits; {@link QueueLimits#NONE} when none was set. */
        public QueueLimits build() { return rate == null && concurrency == 0 ? NONE : new QueueLimits(rate, concurrency); }
    }
}

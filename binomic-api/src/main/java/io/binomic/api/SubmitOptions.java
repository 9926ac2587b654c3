package io.binomic.api;

import io.binomic.api.internal.Once;
import io.binomic.api.spi.TraceContextProvider;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * How one submit differs from its task's defaults: headers, and the flow-control and trace
 * settings of a single job. Built with {@link #builder()}; a setting given twice is an
 * {@link IllegalArgumentException} naming it. {@link #NONE} is a submit as the task declares it.
 *
 * <pre>{@code
 * client.submit(task, argument, SubmitOptions.builder().headers(Map.of("tenant", "acme")).build());
 * }</pre>
 */
public final class SubmitOptions {

    /** No option: the submit the task declares. */
    public static final SubmitOptions NONE = builder().build();

    private final Map<String, String> headers;
    private final Integer priority;
    private final Uniqueness uniqueness;
    private final String uniqueKey;
    private final String debounceKey;
    private final Duration delay;
    private final TraceContext traceContext;
    private final String partitionKey;

    private SubmitOptions(Builder b) {
        this.headers = b.headers.get();
        this.priority = b.priority.get();
        this.uniqueness = b.unique.get();
        this.uniqueKey = b.uniqueKey;
        this.debounceKey = b.debounce.get();
        this.delay = b.delay.get();
        this.traceContext = b.trace.get();
        this.partitionKey = b.partitionKey.get();
        if (traceContext != null && headers.containsKey(TraceContext.TRACEPARENT)) {
            throw new IllegalArgumentException("the trace context was given twice, as traceContext(...) and as header '"
                    + TraceContext.TRACEPARENT + "'; give one");
        }
    }

    /** A builder with every setting at its default. */
    public static Builder builder() { return new Builder(); }

    /** A builder holding this object's settings, each of which may be replaced once. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.headers.copy(headers);
        b.priority.copy(priority);
        b.unique.copy(uniqueness);
        b.uniqueKey = uniqueKey;
        b.debounce.copy(debounceKey);
        b.delay.copy(delay);
        b.trace.copy(traceContext);
        b.partitionKey.copy(partitionKey);
        return b;
    }

    /** Free-form headers carried by the message to its handler ({@link TaskContext}). */
    public Map<String, String> headers() { return headers; }

    /** This submit's {@linkplain Priority priority}, if it overrides the task's ({@link Builder#priority(int)}). */
    public OptionalInt priority() { return priority == null ? OptionalInt.empty() : OptionalInt.of(priority); }

    /** How this job is unique, overriding its task's; empty to keep the task's. */
    public Optional<Uniqueness> uniqueness() { return Optional.ofNullable(uniqueness); }

    /** The unique key given with {@link Builder#unique(Uniqueness, String)}; empty to derive it as the task does. */
    public Optional<String> uniqueKey() { return Optional.ofNullable(uniqueKey); }

    /** The debounce key of this job; empty for the task's. */
    public Optional<String> debounceKey() { return Optional.ofNullable(debounceKey); }

    /** How long after the submit this job is enqueued, overriding its task's delay; empty for the task's. */
    public Optional<Duration> delay() { return Optional.ofNullable(delay); }

    /**
     * The trace context given with {@link Builder#traceContext}; empty when none was (a
     * {@code traceparent} among the {@link #headers()} is then the submit's, else the
     * application's {@link TraceContextProvider} is asked).
     */
    public Optional<TraceContext> traceContext() { return Optional.ofNullable(traceContext); }

    /**
     * The key that picks this job's partition on a partitioned queue ({@link Builder#partitionKey});
     * empty to spread jobs round robin.
     */
    public Optional<String> partitionKey() { return Optional.ofNullable(partitionKey); }

    @Override
    public String toString() {
        return "SubmitOptions[headers=" + headers + (priority == null ? "" : ", priority=" + priority)
                + (uniqueness == null ? "" : ", unique=" + uniqueness + (uniqueKey == null ? "" : " key " + uniqueKey))
                + (debounceKey == null ? "" : ", debounce=" + debounceKey)
                + (delay == null ? "" : ", delay=" + delay)
                + (traceContext == null ? "" : ", trace=" + traceContext.traceparent())
                + (partitionKey == null ? "" : ", partitionKey=" + partitionKey) + "]";
    }

    /** Builds {@link SubmitOptions}. */
    public static final class Builder {
        private final Once<Map<String, String>> headers = new Once<>("headers", Map.of());
        private final Once<Integer> priority = new Once<>("priority", null);
        private final Once<Uniqueness> unique = new Once<>("unique", null);
        private String uniqueKey;
        private final Once<String> debounce = new Once<>("debounce", null);
        private final Once<Duration> delay = new Once<>("delay", null);
        private final Once<TraceContext> trace = new Once<>("traceContext", null);
        private final Once<String> partitionKey = new Once<>("partitionKey", null);

        private Builder() { }

        /**
         * Headers the message carries (trace context, an idempotency key, a tenant). The names the
         * message's envelope uses ({@code codec, track, priority, unique, debounce, limitKey, limit.rate,
         * limit.turn, replayedFrom}) are refused at submit. A {@value TraceContext#TRACEPARENT}
         * header must be a W3C traceparent, and a {@value TraceContext#TRACESTATE} needs one. Defaults to none.
         *
         * @throws IllegalArgumentException for a malformed trace context, naming the fix
         */
        public Builder headers(Map<String, String> value) {
            TraceContext.requireValidHeaders(Config.nonNull(value, "headers must not be null; leave the setting out for none"));
            return Once.set(this, headers, Map.copyOf(value));
        }

        /**
         * The {@linkplain Priority priority} of this one job, from {@value Priority#MIN} (lowest) to
         * {@value Priority#MAX} (highest): within its queue, higher runs first. Defaults to the task's
         * ({@link Task#priority()}).
         */
        public Builder priority(int value) {
            return Once.set(this, priority, Priority.require("SubmitOptions priority", value));
        }

        /**
         * Makes this job unique with {@code uniqueness}, keyed as its task keys it (its key function,
         * else the argument itself): a submit while the key is held enqueues nothing and returns the
         * holder's handle. Defaults to the task's ({@code Task.Builder.unique}), or not unique.
         */
        public Builder unique(Uniqueness uniqueness) {
            return Once.set(this, unique,
                    Config.nonNull(uniqueness, "unique must not be null; leave the setting out to keep the task's"));
        }

        /**
         * Makes this job unique with {@code uniqueness} under {@code key} (1-500 characters), unique
         * per task and queue. Defaults to the task's ({@code Task.Builder.unique}), or not unique.
         */
        public Builder unique(Uniqueness uniqueness, String key) {
            requireKey("unique key", key);
            unique(uniqueness);
            uniqueKey = key;
            return this;
        }

        /**
         * Debounces this job under {@code key} (1-500 characters, per task and queue): if a job with
         * this key still waits for its due time, it takes this submit's argument and due time, and
         * its handle is returned; otherwise a new job is scheduled. Needs a delay: a DELAY task, or
         * {@link #delay}. Defaults to the task's ({@code Task.Builder.debounce}), or none.
         */
        public Builder debounce(String key) { return Once.set(this, debounce, requireKey("debounce key", key)); }

        /**
         * Enqueues this job {@code delay} after the submit, durably, instead of at once (a DIRECT
         * task) or after the task's delay (a DELAY task). At least 1 ms. Defaults to the task's.
         */
        public Builder delay(Duration delay) {
            if (delay == null || delay.toMillis() < 1) {
                throw new IllegalArgumentException("delay must be at least 1 ms, was " + delay + "; leave the setting out to keep the task's delay (a DIRECT task has none)");
            }
            return Once.set(this, this.delay, delay);
        }

        /**
         * The W3C trace context this job carries to its handler ({@link TaskContext#traceContext()}),
         * in its {@value TraceContext#TRACEPARENT} and {@value TraceContext#TRACESTATE} headers.
         * Defaults to a {@code traceparent} among the {@link #headers}, else to what the application's
         * {@link TraceContextProvider} gives, else none.
         */
        public Builder traceContext(TraceContext context) {
            return Once.set(this, trace,
                    Config.nonNull(context, "traceContext must not be null; leave the setting out for the provider's"));
        }

        /**
         * On a partitioned queue, sends this job to the partition {@code key} (1-500 characters)
         * hashes to, so that jobs of one key stay in one partition, in order (while the partition
         * count is unchanged). Without it, jobs are spread round robin. A unique or debounced job
         * goes by its unique or debounce key instead, and refuses this setting. Ignored on a queue
         * of one partition.
         */
        public Builder partitionKey(String key) {
            return Once.set(this, partitionKey, requireKey("partition key", key));
        }

        private static String requireKey(String what, String key) {
            if (key == null || key.isEmpty() || key.length() > 500) {
                throw new IllegalArgumentException(what + " must be 1-500 characters, was "
                        + (key == null ? "null" : key.length() + " characters") + "; give a key that tells the jobs apart, such as an account id");
            }
            return key;
        }

        public SubmitOptions build() { return new SubmitOptions(this); }
    }
}

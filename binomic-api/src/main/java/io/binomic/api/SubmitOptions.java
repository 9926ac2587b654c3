package io.binomic.api;

import java.util.Map;

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
    // ---- priorities
    private final Integer priority;

    private SubmitOptions(Builder b) {
        this.headers = b.headers.get();
        this.priority = b.priority.get();
    }

    /** A builder with every setting at its default. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this object's settings, each of which may be replaced once. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.headers.copy(headers);
        b.priority.copy(priority);
        return b;
    }

    /** Free-form headers carried by the message to its handler ({@link TaskContext}). */
    public Map<String, String> headers() {
        return headers;
    }

    /** This submit's {@linkplain Priority priority}, if it overrides the task's ({@link Builder#priority(int)}). */
    public java.util.OptionalInt priority() {
        return priority == null ? java.util.OptionalInt.empty() : java.util.OptionalInt.of(priority);
    }

    @Override
    public String toString() {
        return "SubmitOptions[headers=" + headers + (priority == null ? "" : ", priority=" + priority) + "]";
    }

    /** Builds {@link SubmitOptions}. */
    public static final class Builder {
        private final Config.Once<Map<String, String>> headers = new Config.Once<>("headers", Map.of());
        // ---- priorities
        private final Config.Once<Integer> priority = new Config.Once<>("priority", null);

        private Builder() { }

        /**
         * Headers the message carries (trace context, an idempotency key, a tenant). Names
         * {@link Message#CODEC} and {@link Message#TRACK} are reserved. Defaults to none.
         */
        public Builder headers(Map<String, String> value) {
            if (value == null) {
                throw new IllegalArgumentException("headers must not be null; leave the setting out for none");
            }
            headers.set(Map.copyOf(value));
            return this;
        }

        /**
         * The {@linkplain Priority priority} of this one job, from {@value Priority#MIN} (lowest) to
         * {@value Priority#MAX} (highest): within its queue, higher runs first. Defaults to the task's
         * ({@link Task#priority()}).
         */
        public Builder priority(int value) {
            priority.set(Priority.require("SubmitOptions priority", value));
            return this;
        }

        /** The options. */
        public SubmitOptions build() {
            return new SubmitOptions(this);
        }
    }
}

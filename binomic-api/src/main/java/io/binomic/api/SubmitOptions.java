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

    private SubmitOptions(Builder b) {
        this.headers = b.headers.get();
    }

    /** A builder with every setting at its default. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this object's settings, each of which may be replaced once. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.headers.copy(headers);
        return b;
    }

    /** Free-form headers carried by the message to its handler ({@link TaskContext}). */
    public Map<String, String> headers() {
        return headers;
    }

    @Override
    public String toString() {
        return "SubmitOptions[headers=" + headers + "]";
    }

    /** Builds {@link SubmitOptions}. */
    public static final class Builder {
        private final Config.Once<Map<String, String>> headers = new Config.Once<>("headers", Map.of());

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

        /** The options. */
        public SubmitOptions build() {
            return new SubmitOptions(this);
        }
    }
}

package io.binomic.api;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Everything a Binomic instance needs: the broker, the task defaults and the worker settings.
 *
 * @param broker where messages live
 * @param taskDefaults retry policy of tasks that do not override it
 * @param worker settings of workers started by this instance
 * @param schedulePeriodicTasks whether {@code start()} registers the CRON and INTERVAL tasks
 * @param payloadCodec id of the {@link io.binomic.api.spi.PayloadCodec} that encodes task
 *     arguments ({@code json-jdk}, {@code jackson}); chosen here, never by what is on the module path
 */
public record BinomicConfig(BrokerConfig broker, TaskDefaults taskDefaults, WorkerConfig worker, boolean schedulePeriodicTasks,
                            String payloadCodec) {

    /** The id of the JDK-only JSON codec of {@code io.binomic.core}, the default {@link #payloadCodec()}. */
    public static final String JDK_JSON_CODEC = "json-jdk";

    private static final Pattern CODEC_ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    public BinomicConfig {
        Objects.requireNonNull(broker, "broker must not be null");
        Objects.requireNonNull(taskDefaults, "taskDefaults must not be null");
        Objects.requireNonNull(worker, "worker must not be null");
        if (payloadCodec == null || !CODEC_ID.matcher(payloadCodec).matches()) {
            throw new IllegalArgumentException("payloadCodec must be a codec id of 1-64 letters, digits, '.', '_' or '-'"
                    + " such as json-jdk or jackson, was " + (payloadCodec == null ? "null" : "'" + payloadCodec + "'"));
        }
    }

    public static BinomicConfig defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Builds {@link BinomicConfig}. */
    public static final class Builder {
        private BrokerConfig broker = BrokerConfig.defaults();
        private TaskDefaults taskDefaults = TaskDefaults.defaults();
        private WorkerConfig worker = WorkerConfig.defaults();
        private boolean schedulePeriodicTasks = true;
        private String payloadCodec = JDK_JSON_CODEC;
        private boolean payloadCodecSet;

        private Builder() { }

        /** Broker settings. Defaults to {@link BrokerConfig#defaults()} (embedded {@code memory://}). */
        public Builder broker(BrokerConfig broker) {
            this.broker = broker;
            return this;
        }

        /** Shortcut for a broker given only by URL, other broker settings at their defaults. */
        public Builder brokerUrl(String url) {
            this.broker = BrokerConfig.builder().url(url).build();
            return this;
        }

        /** Task defaults. Defaults to {@link TaskDefaults#defaults()}. */
        public Builder taskDefaults(TaskDefaults taskDefaults) {
            this.taskDefaults = taskDefaults;
            return this;
        }

        /** Worker settings. Defaults to {@link WorkerConfig#defaults()}. */
        public Builder worker(WorkerConfig worker) {
            this.worker = worker;
            return this;
        }

        /**
         * Whether {@code start()} fires CRON and INTERVAL tasks from this process. With a shared
         * broker every tick is claimed once, so several processes may safely do it. Defaults to true.
         */
        public Builder schedulePeriodicTasks(boolean schedulePeriodicTasks) {
            this.schedulePeriodicTasks = schedulePeriodicTasks;
            return this;
        }

        /**
         * Id of the payload codec that encodes task arguments: {@code json-jdk} (the JDK-only
         * codec in {@code io.binomic.core}) or {@code jackson} (in {@code io.binomic.redis}), or
         * the id of another {@link io.binomic.api.spi.PayloadCodec} provider. Defaults to
         * {@value #JDK_JSON_CODEC}, whatever else is on the module path; building a
         * {@code Binomic} fails, listing the codecs found, when no provider has this id. Every
         * message records the codec that wrote it, and a worker decodes with that one, so
         * producers and workers need not agree, but a worker must have the codec.
         *
         * @throws IllegalArgumentException when already set: the codec is chosen once
         */
        public Builder payloadCodec(String payloadCodec) {
            if (payloadCodecSet) {
                throw new IllegalArgumentException("payloadCodec was already set to '" + this.payloadCodec
                        + "'; set it once");
            }
            this.payloadCodec = payloadCodec;
            payloadCodecSet = true;
            return this;
        }

        public BinomicConfig build() {
            if (broker == null || taskDefaults == null || worker == null) {
                throw new IllegalArgumentException("broker, taskDefaults and worker must not be null");
            }
            return new BinomicConfig(broker, taskDefaults, worker, schedulePeriodicTasks, payloadCodec);
        }
    }
}

package io.binomic.api;

import io.binomic.api.internal.Once;
import io.binomic.api.spi.PayloadCodec;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Everything a Binomic instance needs: the broker, the task defaults and the worker settings.
 * Built by {@link #builder()}, whose setters say the defaults; immutable, and equal to another
 * configuration with the same settings.
 *
 * {@snippet class=io.binomic.api.JavadocSnippetsTest region=config}
 */
public final class BinomicConfig {

    /** The id of the JDK-only JSON codec of {@code io.binomic.core}, the default {@link #payloadCodec()}. */
    public static final String JDK_JSON_CODEC = "json-jdk";

    private static final Pattern CODEC_ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    private final BrokerConfig broker;
    private final TaskDefaults taskDefaults;
    private final WorkerConfig worker;
    private final boolean schedulePeriodicTasks;
    private final String payloadCodec;

    private BinomicConfig(Builder b) {
        this.broker = b.broker.get();
        this.taskDefaults = b.taskDefaults.get();
        this.worker = b.worker.get();
        this.schedulePeriodicTasks = b.schedulePeriodicTasks.get();
        this.payloadCodec = b.payloadCodec.get();
        if (broker == null || taskDefaults == null || worker == null) {
            throw new IllegalArgumentException("broker, taskDefaults and worker must not be null");
        }
        if (payloadCodec == null || !CODEC_ID.matcher(payloadCodec).matches()) {
            throw new IllegalArgumentException("payloadCodec must be a codec id of 1-64 letters, digits, '.', '_' or '-'"
                    + " such as json-jdk or jackson, was " + (payloadCodec == null ? "null" : "'" + payloadCodec + "'"));
        }
    }

    /** Every setting at its default: the embedded broker, the default task and worker settings. */
    public static BinomicConfig defaults() { return builder().build(); }

    /** Starts a configuration; every setting not given keeps its documented default. */
    public static Builder builder() { return new Builder(); }

    /** A builder holding these settings, each of which may be replaced once. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.broker.copy(broker);
        b.taskDefaults.copy(taskDefaults);
        b.worker.copy(worker);
        b.schedulePeriodicTasks.copy(schedulePeriodicTasks);
        b.payloadCodec.copy(payloadCodec);
        return b;
    }

    /** Where messages live. */
    public BrokerConfig broker() { return broker; }

    /** Retry policy of tasks that do not override it. */
    public TaskDefaults taskDefaults() { return taskDefaults; }

    /** Settings of workers started by this instance. */
    public WorkerConfig worker() { return worker; }

    /** Whether {@code start()} registers the CRON and INTERVAL tasks. */
    public boolean schedulePeriodicTasks() { return schedulePeriodicTasks; }

    /**
     * Id of the {@link PayloadCodec} that encodes task arguments
     * ({@code json-jdk}, {@code jackson}); chosen here, never by what is on the module path.
     */
    public String payloadCodec() { return payloadCodec; }

    @Override
    public boolean equals(Object o) {
        return o instanceof BinomicConfig other && broker.equals(other.broker) && taskDefaults.equals(other.taskDefaults)
                && worker.equals(other.worker) && schedulePeriodicTasks == other.schedulePeriodicTasks
                && payloadCodec.equals(other.payloadCodec);
    }

    @Override
    public int hashCode() { return Objects.hash(broker, taskDefaults, worker, schedulePeriodicTasks, payloadCodec); }

    /** The settings; the broker's shows no password, so this is safe to log. */
    @Override
    public String toString() {
        return "BinomicConfig[broker=" + broker + ", taskDefaults=" + taskDefaults + ", worker=" + worker
                + ", schedulePeriodicTasks=" + schedulePeriodicTasks + ", payloadCodec=" + payloadCodec + "]";
    }

    /**
     * Builds {@link BinomicConfig}. Each setting may be given once ({@link #broker} and
     * {@link #brokerUrl} both set the broker): a second call is an {@link IllegalArgumentException}
     * naming the setting and both values. The values are checked by {@link #build()}.
     */
    public static final class Builder {
        private final Once<BrokerConfig> broker = new Once<>("broker", BrokerConfig.defaults());
        private final Once<TaskDefaults> taskDefaults = new Once<>("taskDefaults", TaskDefaults.defaults());
        private final Once<WorkerConfig> worker = new Once<>("worker", WorkerConfig.defaults());
        private final Once<Boolean> schedulePeriodicTasks = new Once<>("schedulePeriodicTasks", true);
        private final Once<String> payloadCodec = new Once<>("payloadCodec", JDK_JSON_CODEC);

        private Builder() { }

        /** Broker settings. Defaults to {@link BrokerConfig#defaults()} (embedded {@code memory://}). */
        public Builder broker(BrokerConfig broker) { return Once.set(this, this.broker, broker); }

        /**
         * Shortcut for a broker given only by URL, other broker settings at their defaults; it sets
         * the same setting as {@link #broker(BrokerConfig)}. Defaults to {@code memory://}.
         */
        public Builder brokerUrl(String url) { return Once.set(this, this.broker, BrokerConfig.builder().url(url).build()); }

        /** Task defaults. Defaults to {@link TaskDefaults#defaults()}. */
        public Builder taskDefaults(TaskDefaults taskDefaults) { return Once.set(this, this.taskDefaults, taskDefaults); }

        /** Worker settings. Defaults to {@link WorkerConfig#defaults()}. */
        public Builder worker(WorkerConfig worker) { return Once.set(this, this.worker, worker); }

        /**
         * Whether {@code start()} fires CRON and INTERVAL tasks from this process. With a shared
         * broker every tick is claimed once, so several processes may safely do it. Defaults to true.
         */
        public Builder schedulePeriodicTasks(boolean schedule) { return Once.set(this, schedulePeriodicTasks, schedule); }

        /**
         * Id of the payload codec that encodes task arguments: {@code json-jdk} (the JDK-only
         * codec in {@code io.binomic.core}) or {@code jackson} (in {@code io.binomic.redis}), or
         * the id of another {@link PayloadCodec} provider. Defaults to
         * {@value #JDK_JSON_CODEC}, whatever else is on the module path; building a
         * {@code Binomic} fails, listing the codecs found, when no provider has this id. Every
         * message records the codec that wrote it, and a worker decodes with that one, so
         * producers and workers need not agree, but a worker must have the codec.
         */
        public Builder payloadCodec(String payloadCodec) { return Once.set(this, this.payloadCodec, payloadCodec); }

        /** Checks the settings and builds the configuration, or throws an {@link IllegalArgumentException} naming a bad one. */
        public BinomicConfig build() { return new BinomicConfig(this); }
    }
}

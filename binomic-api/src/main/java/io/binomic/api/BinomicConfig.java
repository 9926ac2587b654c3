package io.binomic.api;

import java.util.Objects;

/**
 * Everything a Binomic instance needs: the broker, the task defaults and the worker settings.
 *
 * @param broker where messages live
 * @param taskDefaults retry policy of tasks that do not override it
 * @param worker settings of workers started by this instance
 * @param schedulePeriodicTasks whether {@code start()} registers the CRON and INTERVAL tasks
 */
public record BinomicConfig(BrokerConfig broker, TaskDefaults taskDefaults, WorkerConfig worker, boolean schedulePeriodicTasks) {

    public BinomicConfig {
        Objects.requireNonNull(broker, "broker must not be null");
        Objects.requireNonNull(taskDefaults, "taskDefaults must not be null");
        Objects.requireNonNull(worker, "worker must not be null");
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

        public BinomicConfig build() {
            if (broker == null || taskDefaults == null || worker == null) {
                throw new IllegalArgumentException("broker, taskDefaults and worker must not be null");
            }
            return new BinomicConfig(broker, taskDefaults, worker, schedulePeriodicTasks);
        }
    }
}

package io.binomic.api;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * How one worker runs: which queues it reads, how many tasks at once, how it leases and
 * reclaims messages and how it stops.
 *
 * @param queues queues to consume; empty means every queue of the registered tasks
 * @param concurrency tasks running at once in this worker (each on its own virtual thread)
 * @param shutdownGrace how long a stopping worker waits for running tasks before cancelling them
 * @param leaseTimeout how long a fetched message may go without lease renewal before another
 *                     worker may reclaim it
 * @param pollTimeout how long one fetch blocks waiting for messages
 * @param reclaimInterval how often the worker looks for stranded messages
 * @param consumerName this worker's consumer name; empty means host-pid-random
 */
public record WorkerConfig(List<String> queues, int concurrency, Duration shutdownGrace, Duration leaseTimeout,
                           Duration pollTimeout, Duration reclaimInterval, Optional<String> consumerName) {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.:-]{1,200}");

    public WorkerConfig {
        queues = List.copyOf(queues);
        for (String q : queues) {
            if (!NAME.matcher(q).matches()) {
                throw new IllegalArgumentException("queues must hold valid queue names (1-200 of letters, digits, '_', '.', ':', '-'), got '" + q + "'");
            }
        }
        Config.requireAtLeast("concurrency", 1, concurrency);
        Config.requireNotNegative("shutdownGrace", shutdownGrace);
        Config.requirePositive("leaseTimeout", leaseTimeout);
        Config.requirePositive("pollTimeout", pollTimeout);
        Config.requirePositive("reclaimInterval", reclaimInterval);
        if (pollTimeout.compareTo(leaseTimeout) >= 0) {
            throw new IllegalArgumentException("pollTimeout (" + pollTimeout + ") must be shorter than leaseTimeout (" + leaseTimeout + ")");
        }
        consumerName.ifPresent(n -> {
            if (!NAME.matcher(n).matches()) {
                throw new IllegalArgumentException("consumerName '" + n + "' must be 1-200 of letters, digits, '_', '.', ':', '-'");
            }
        });
    }

    public static WorkerConfig defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Builds {@link WorkerConfig}; values are checked in {@link #build()}. */
    public static final class Builder {
        private List<String> queues = List.of();
        private int concurrency = 5;
        private Duration shutdownGrace = Duration.ofSeconds(10);
        private Duration leaseTimeout = Duration.ofSeconds(30);
        private Duration pollTimeout = Duration.ofSeconds(1);
        private Duration reclaimInterval = Duration.ofSeconds(10);
        private String consumerName;

        private Builder() { }

        /** Queues to consume. Defaults to every queue used by the registered tasks. */
        public Builder queues(List<String> queues) {
            this.queues = queues;
            return this;
        }

        /** Queues to consume. Defaults to every queue used by the registered tasks. */
        public Builder queues(String... queues) {
            return queues(List.of(queues));
        }

        /** Tasks running at once. Defaults to 5, as the Python original. */
        public Builder concurrency(int concurrency) {
            this.concurrency = concurrency;
            return this;
        }

        /** Wait for running tasks on stop before cancelling them (not acked: they come back by reclaim). Defaults to 10 s. */
        public Builder shutdownGrace(Duration shutdownGrace) {
            this.shutdownGrace = shutdownGrace;
            return this;
        }

        /**
         * Time without renewal after which a fetched message counts as stranded and may be
         * reclaimed by another worker. The owner renews at a third of it, so a long task on a
         * live worker is never stolen. Defaults to 30 s.
         */
        public Builder leaseTimeout(Duration leaseTimeout) {
            this.leaseTimeout = leaseTimeout;
            return this;
        }

        /** Longest block of one fetch. Defaults to 1 s. */
        public Builder pollTimeout(Duration pollTimeout) {
            this.pollTimeout = pollTimeout;
            return this;
        }

        /** Period of the search for stranded messages. Defaults to 10 s. */
        public Builder reclaimInterval(Duration reclaimInterval) {
            this.reclaimInterval = reclaimInterval;
            return this;
        }

        /** This worker's consumer name in the group. Defaults to host-pid-random. */
        public Builder consumerName(String consumerName) {
            this.consumerName = consumerName;
            return this;
        }

        public WorkerConfig build() {
            if (queues == null) {
                throw new IllegalArgumentException("queues must not be null (use an empty list for all)");
            }
            return new WorkerConfig(queues, concurrency, shutdownGrace, leaseTimeout, pollTimeout, reclaimInterval,
                    Optional.ofNullable(consumerName));
        }
    }
}

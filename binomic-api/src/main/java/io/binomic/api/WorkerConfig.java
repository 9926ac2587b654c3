package io.binomic.api;

import io.binomic.api.internal.Once;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * How one worker runs: which queues it reads, how many tasks at once, how it leases and
 * reclaims messages and how it stops. Built by {@link #builder()}, whose setters say the defaults;
 * immutable, and equal to another worker configuration with the same settings.
 */
public final class WorkerConfig {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.:-]{1,200}");

    private final List<String> queues;
    private final int concurrency;
    private final Duration shutdownGrace;
    private final Duration leaseTimeout;
    private final Duration pollTimeout;
    private final Duration reclaimInterval;
    private final Optional<String> consumerName;

    private WorkerConfig(Builder b) {
        this.queues = List.copyOf(Config.nonNull(b.queues.get(), "queues must not be null (use an empty list for all)"));
        for (String q : queues) {
            if (!NAME.matcher(q).matches()) {
                throw new IllegalArgumentException("queues must hold valid queue names (1-200 of letters, digits, '_', '.', ':', '-'), got '" + q + "'");
            }
        }
        this.concurrency = Config.requireAtLeast("concurrency", 1, b.concurrency.get());
        this.shutdownGrace = Config.requireNotNegative("shutdownGrace", b.shutdownGrace.get());
        this.leaseTimeout = Config.requirePositive("leaseTimeout", b.leaseTimeout.get());
        // Left at their defaults, the poll and the reclaim period follow a short lease: a lease of 1 s
        // is then valid alone, and stranded messages are looked for at least twice a lease.
        Duration halfLease = leaseTimeout.dividedBy(2);
        this.pollTimeout = Config.requirePositive("pollTimeout", Once.atMostUnlessGiven(b.pollTimeout, halfLease));
        this.reclaimInterval = Config.requirePositive("reclaimInterval", Once.atMostUnlessGiven(b.reclaimInterval, halfLease));
        if (pollTimeout.compareTo(leaseTimeout) >= 0) {
            throw new IllegalArgumentException("pollTimeout (" + pollTimeout + ") must be shorter than leaseTimeout (" + leaseTimeout + ")");
        }
        this.consumerName = Optional.ofNullable(b.consumerName.get());
        if (consumerName.isPresent() && !NAME.matcher(consumerName.get()).matches()) {
            throw new IllegalArgumentException("consumerName '" + consumerName.get() + "' must be 1-200 of letters, digits, '_', '.', ':', '-'");
        }
    }

    /** A worker with every setting at its default. */
    public static WorkerConfig defaults() { return builder().build(); }

    /** Starts a worker configuration; every setting not given keeps its documented default. */
    public static Builder builder() { return new Builder(); }

    /** A builder holding these settings, each of which may be replaced once. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.queues.copy(queues);
        b.concurrency.copy(concurrency);
        b.shutdownGrace.copy(shutdownGrace);
        b.leaseTimeout.copy(leaseTimeout);
        b.pollTimeout.copy(pollTimeout);
        b.reclaimInterval.copy(reclaimInterval);
        b.consumerName.copy(consumerName.orElse(null));
        return b;
    }

    /** Queues to consume; empty means every queue of the registered tasks. */
    public List<String> queues() { return queues; }

    /** Tasks running at once in this worker (each on its own virtual thread). */
    public int concurrency() { return concurrency; }

    /** How long a stopping worker waits for running tasks before cancelling them. */
    public Duration shutdownGrace() { return shutdownGrace; }

    /** How long a fetched message may go without lease renewal before another worker may reclaim it. */
    public Duration leaseTimeout() { return leaseTimeout; }

    /** How long one fetch blocks waiting for messages. */
    public Duration pollTimeout() { return pollTimeout; }

    /** How often the worker looks for stranded messages. */
    public Duration reclaimInterval() { return reclaimInterval; }

    /** This worker's consumer name; empty means host-pid-random. */
    public Optional<String> consumerName() { return consumerName; }

    @Override
    public boolean equals(Object o) {
        return o instanceof WorkerConfig other && queues.equals(other.queues) && concurrency == other.concurrency
                && shutdownGrace.equals(other.shutdownGrace) && leaseTimeout.equals(other.leaseTimeout)
                && pollTimeout.equals(other.pollTimeout) && reclaimInterval.equals(other.reclaimInterval)
                && consumerName.equals(other.consumerName);
    }

    @Override
    public int hashCode() {
        return Objects.hash(queues, concurrency, shutdownGrace, leaseTimeout, pollTimeout, reclaimInterval, consumerName);
    }

    @Override
    public String toString() {
        return "WorkerConfig[queues=" + queues + ", concurrency=" + concurrency + ", shutdownGrace=" + shutdownGrace
                + ", leaseTimeout=" + leaseTimeout + ", pollTimeout=" + pollTimeout + ", reclaimInterval=" + reclaimInterval
                + ", consumerName=" + consumerName + "]";
    }

    /** Builds {@link WorkerConfig}: each setting once (a second call is an {@link IllegalArgumentException}), checked by {@link #build()}. */
    public static final class Builder {
        private final Once<List<String>> queues = new Once<>("queues", List.of());
        private final Once<Integer> concurrency = new Once<>("concurrency", 5);
        private final Once<Duration> shutdownGrace = new Once<>("shutdownGrace", Duration.ofSeconds(10));
        private final Once<Duration> leaseTimeout = new Once<>("leaseTimeout", Duration.ofSeconds(30));
        private final Once<Duration> pollTimeout = new Once<>("pollTimeout", Duration.ofSeconds(1));
        private final Once<Duration> reclaimInterval = new Once<>("reclaimInterval", Duration.ofSeconds(10));
        private final Once<String> consumerName = new Once<>("consumerName", null);

        private Builder() { }

        /** Queues to consume; empty for all. Defaults to every queue used by the registered tasks. */
        public Builder queues(List<String> queues) { return Once.set(this, this.queues, queues); }

        /** Queues to consume. Defaults to every queue used by the registered tasks. */
        public Builder queues(String... queues) { return queues(List.of(queues)); }

        /** Tasks running at once; at least 1. Defaults to 5, as the Python original. */
        public Builder concurrency(int concurrency) { return Once.set(this, this.concurrency, concurrency); }

        /** Wait for running tasks on stop before cancelling them (not acked: they come back by reclaim). Defaults to 10 s. */
        public Builder shutdownGrace(Duration shutdownGrace) { return Once.set(this, this.shutdownGrace, shutdownGrace); }

        /**
         * Time without renewal after which a fetched message counts as stranded and may be
         * reclaimed by another worker. The owner renews every quarter of it, so a long task on a
         * live worker is never stolen. Defaults to 30 s.
         */
        public Builder leaseTimeout(Duration leaseTimeout) { return Once.set(this, this.leaseTimeout, leaseTimeout); }

        /** Longest block of one fetch; shorter than the lease timeout. Defaults to 1 s, or half the lease timeout when that is shorter. */
        public Builder pollTimeout(Duration pollTimeout) { return Once.set(this, this.pollTimeout, pollTimeout); }

        /** Period of the search for stranded messages. Defaults to 10 s, or half the lease timeout when that is shorter. */
        public Builder reclaimInterval(Duration reclaimInterval) { return Once.set(this, this.reclaimInterval, reclaimInterval); }

        /** This worker's consumer name in the group. Defaults to host-pid-random. */
        public Builder consumerName(String consumerName) { return Once.set(this, this.consumerName, consumerName); }

        /** Checks the settings and builds the worker configuration, or throws an {@link IllegalArgumentException} naming a bad one. */
        public WorkerConfig build() { return new WorkerConfig(this); }
    }
}

package io.binomic.micrometer;

import io.binomic.api.QueueStats;
import io.binomic.api.spi.FlowCounts;
import io.binomic.core.Binomic;
import io.binomic.core.internal.web.LimitReadings;
import io.binomic.core.internal.web.QueueCounts;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The broker's counts of each queue, its flow limits and what they hold, and the counts of batches
 * and workflows by state, read once per scrape,
 * not once per gauge: a registry reads the six gauges of a queue one after the other, and each read
 * would otherwise be a broker round trip. The reads run under a deadline shorter than the client's own timeouts and retries, so that
 * while the broker is down a scrape still answers at once, with {@code binomic.broker.up} 0 and
 * the depths left out (NaN), as {@code /metrics} does.
 */
final class QueueDepths {
    /** How long the broker queries of one scrape may take. */
    static final Duration DEADLINE = Duration.ofSeconds(3);
    /** Reads within this time of the last one share its answer: one scrape reads each gauge once. */
    private static final long FRESH_NANOS = Duration.ofMillis(500).toNanos();

    /** A queue's counts and whether it is paused. */
    record Depth(QueueCounts counts, boolean paused) {
        QueueStats stats() { return counts.stats(); }
    }

    /**
     * The broker-wide counts of batches and of workflows: each null when the broker did not answer,
     * empty when it has none.
     */
    record Flows(Optional<FlowCounts> batches, Optional<FlowCounts> workflows) { }

    private record Reading(long atNanos, boolean up, Map<String, Depth> depths, Flows flows, Map<LimitMeters.Series, Double> limits) { }

    private final Binomic binomic;
    private final Supplier<List<String>> queues;
    private final Consumer<Flows> onFlows;
    private final Consumer<Set<LimitMeters.Series>> onLimits;
    private volatile Reading last;

    /**
     * {@code onFlows} is told the flow counts of each new reading, and {@code onLimits} the series of
     * flow limits it has, so the binder registers their gauges once it knows the broker has them.
     */
    QueueDepths(Binomic binomic, Supplier<List<String>> queues, Consumer<Flows> onFlows, Consumer<Set<LimitMeters.Series>> onLimits) {
        this.binomic = binomic;
        this.queues = queues;
        this.onFlows = onFlows;
        this.onLimits = onLimits;
    }

    /** The broker-wide counts of batches and workflows of the last reading. */
    Flows flows() {
        return current().flows();
    }

    /** The counts of {@code queue}, or null when the broker did not answer for it. */
    Depth of(String queue) {
        return current().depths().get(queue);
    }

    /** The value of {@code series} in the last reading, or NaN when it does not have it. */
    double limit(LimitMeters.Series series) {
        Double value = current().limits().get(series);
        return value == null ? Double.NaN : value;
    }

    /** True when the broker answered every queue query of the last reading in time. */
    boolean brokerUp() {
        return current().up();
    }

    private Reading current() {
        Reading r = last;
        long now = System.nanoTime();
        if (r != null && now - r.atNanos() < FRESH_NANOS) {
            return r;
        }
        boolean fresh = false;
        synchronized (this) {
            r = last;
            if (r == null || System.nanoTime() - r.atNanos() >= FRESH_NANOS) {
                r = read();
                last = r;
                fresh = true;
            }
        }
        if (fresh) {
            // Outside the lock: the binder may register meters, which takes the registry's own lock.
            onFlows.accept(r.flows());
            onLimits.accept(r.limits().keySet());
        }
        return r;
    }

    private Reading read() {
        Map<String, Depth> depths = new ConcurrentHashMap<>();
        Map<LimitMeters.Series, Double> limits = new ConcurrentHashMap<>();
        AtomicReference<Flows> flows = new AtomicReference<>(new Flows(null, null));
        CompletableFuture<Boolean> all = new CompletableFuture<>();
        // A platform thread: busy virtual-thread carriers must not delay a scrape.
        Thread.ofPlatform().daemon().name("binomic-metrics-query").start(() -> {
            boolean every = true;
            for (String q : queues.get()) {
                try {
                    QueueStats stats = binomic.queueStats(q);
                    depths.put(q, new Depth(new QueueCounts(stats, binomic.queues().parked(q)), binomic.queues().isPaused(q)));
                    try {
                        List<LimitReadings.Limit> read = LimitReadings.read(binomic, q, stats::pending);
                        for (LimitReadings.Sample sample : LimitReadings.samples(read)) {
                            limits.put(LimitMeters.Series.of(sample), sample.value());
                        }
                        every &= LimitReadings.answered(read);
                    } catch (RuntimeException e) {
                        // As on /metrics: this queue's limits are unknown (NaN), and the broker is not up.
                        every = false;
                    }
                } catch (RuntimeException e) {
                    // Not started, closed or broker down: this queue's depths are unknown, the counters still count.
                    every = false;
                }
            }
            Optional<FlowCounts> batches = null;
            Optional<FlowCounts> workflows = null;
            try {
                batches = binomic.batchCounts();
                workflows = binomic.workflowCounts();
            } catch (RuntimeException e) {
                // As for a queue: the counts are unknown (NaN), the broker is not up.
                every = false;
            }
            flows.set(new Flows(batches, workflows));
            all.complete(every);
        });
        boolean up;
        try {
            up = all.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            up = false;
        } catch (ExecutionException | TimeoutException e) {
            up = false;
        }
        // Set at once, after both reads: past the deadline this is still the unknown counts, or both answers.
        return new Reading(System.nanoTime(), up, Map.copyOf(depths), flows.get(), Map.copyOf(limits));
    }
}

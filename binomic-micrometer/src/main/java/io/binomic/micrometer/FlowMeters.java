package io.binomic.micrometer;

import io.binomic.api.spi.FlowCounts;
import io.binomic.core.Binomic;
import io.binomic.core.FlowCounters;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * The meters of batches and workflows, with the names and help texts of {@code /metrics}' series
 * ({@code binomic_batches{state}}, {@code binomic_batches_submitted_total},
 * {@code binomic_batch_callback_lag_seconds}, ...) once a Prometheus registry renders them.
 */
final class FlowMeters {
    static final String BATCHES_DESCRIPTION = "Batches of the whole broker (every client) by state: open (submitted, not ended), and"
            + " how many ended succeeded (every job succeeded), cancelled (cancelled as a whole) or failed (some job dead-lettered or"
            + " cancelled).";
    static final String WORKFLOWS_DESCRIPTION = "Workflows of the whole broker (every client) by state: open (some job held or"
            + " enqueued), and how many ended succeeded, cancelled (cancelled as a whole) or failed (some job dead-lettered, cancelled"
            + " or skipped); a replay that resumes one counts it open again.";

    private FlowMeters() { }

    /** The per-process counters of {@link Binomic#flowCounters()}: no broker call. */
    static void bindCounters(MeterRegistry r, Binomic binomic) {
        counter(r, binomic, "binomic.batches.submitted", FlowCounters::batchesSubmitted, "Batches submitted by this process.");
        counter(r, binomic, "binomic.batches.cancelled", FlowCounters::batchesCancelled,
                "Batches cancelled through this process (its API, dashboard or CLI) while some job of theirs had not ended.");
        counter(r, binomic, "binomic.workflows.submitted", FlowCounters::workflowsSubmitted, "Workflows submitted by this process.");
        counter(r, binomic, "binomic.workflows.cancelled", FlowCounters::workflowsCancelled,
                "Workflows cancelled through this process (its API, dashboard or CLI) while some job of theirs was held or enqueued.");
    }

    private static void counter(MeterRegistry r, Binomic binomic, String name, ToLongFunction<FlowCounters> count, String description) {
        FunctionCounter.builder(name, binomic, b -> count.applyAsLong(b.flowCounters())).description(description).register(r);
    }

    /**
     * The broker-wide counts by state of {@code family}, from the scrape's reading ({@code counts}
     * picks batches or workflows); NaN when the broker did not answer.
     */
    static void bindGauges(MeterRegistry r, String family, QueueDepths depths,
                           Function<QueueDepths.Flows, Optional<FlowCounts>> counts, String description) {
        gauge(r, family, "open", depths, counts, FlowCounts::open, description);
        gauge(r, family, "succeeded", depths, counts, FlowCounts::succeeded, description);
        gauge(r, family, "failed", depths, counts, FlowCounts::failed, description);
        gauge(r, family, "cancelled", depths, counts, FlowCounts::cancelled, description);
    }

    private static void gauge(MeterRegistry r, String family, String state, QueueDepths depths,
                              Function<QueueDepths.Flows, Optional<FlowCounts>> counts, ToLongFunction<FlowCounts> value,
                              String description) {
        Gauge.builder(family, depths, d -> {
            Optional<FlowCounts> c = counts.apply(d.flows());
            return c == null || c.isEmpty() ? Double.NaN : value.applyAsLong(c.get());
        }).tag("state", state).description(description).register(r);
    }

    static Counter callbacksStarted(MeterRegistry r, String queue, String task) {
        return Counter.builder("binomic.batch.callbacks.started").tags("queue", queue, "task", task)
                .description("Batch callbacks (onSuccess, onComplete, onDeath) the workers of this process started, first attempts only.")
                .register(r);
    }

    /** In the buckets of {@code /metrics} ({@code bucketSeconds}), so every process's histograms add up. */
    static Timer callbackLag(MeterRegistry r, String queue, String task, double[] bucketSeconds) {
        Duration[] buckets = new Duration[bucketSeconds.length];
        for (int i = 0; i < buckets.length; i++) {
            buckets[i] = Duration.ofNanos((long) (bucketSeconds[i] * 1e9));
        }
        return Timer.builder("binomic.batch.callback.lag").tags("queue", queue, "task", task).serviceLevelObjectives(buckets)
                .description("How long a batch callback waited from the step that enqueued it (its batch's last job ending, or its first"
                        + " dead letter) to its first start, by the workers of this process.")
                .register(r);
    }
}

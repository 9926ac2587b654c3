package io.binomic.micrometer;

import io.binomic.core.internal.web.LimitReadings;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

/**
 * The gauges of flow limits, {@code binomic.queue.limit.concurrency}, {@code .rate},
 * {@code .slots.in.use} and {@code .waiting}: the series {@link LimitReadings} gives
 * {@code /metrics}, under the same Prometheus names and help texts once a Prometheus registry
 * renders them.
 */
final class LimitMeters {

    /**
     * One series: a gauge of {@link LimitReadings#GAUGES} for one queue and limit.
     *
     * @param gauge its {@code /metrics} name
     * @param waiting the tag {@code waiting} of {@code binomic_queue_limit_waiting}, else null
     */
    record Series(String gauge, String queue, String limit, String waiting) {
        static Series of(LimitReadings.Sample s) {
            return new Series(s.gauge(), s.queue(), s.limit(), s.waiting());
        }

        Tags tags() {
            Tags tags = Tags.of("queue", queue, "limit", limit);
            return waiting == null ? tags : tags.and("waiting", waiting);
        }
    }

    private LimitMeters() { }

    /** The value of {@code series} in the scrape's reading; NaN when that reading does not have it (the broker did not answer, or the limit went). */
    static void bind(MeterRegistry r, QueueDepths depths, Series series) {
        Gauge.builder(series.gauge().replace('_', '.'), depths, d -> d.limit(series)).tags(series.tags())
                .description(LimitReadings.GAUGES.get(series.gauge())).register(r);
    }
}

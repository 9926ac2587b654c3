package io.binomic.core.internal.web;

import io.binomic.api.QueueStats;
import io.binomic.core.Binomic;

/**
 * A queue's counts as the operators' views show them (the CLI's {@code binomic queues}, the dashboard,
 * {@code /metrics} and the Micrometer gauges): the jobs a pause of the queue or of their task holds back
 * ({@link io.binomic.core.Queues#parked}) apart from the delayed ones, which a due time brings back. The
 * broker keeps both in its delayed set; an operator reading "delayed" expects them to come back by themselves.
 *
 * @param stats  the broker's counts; {@link QueueStats#delayed()} includes the parked jobs
 * @param parked the parked jobs, never more than {@code stats.delayed()}: the two are read one after the
 *               other, so a job parked between the reads could otherwise be counted twice
 */
public record QueueCounts(QueueStats stats, long parked) {

    public QueueCounts {
        parked = Math.clamp(parked, 0, stats.delayed());
    }

    /** The counts of {@code queue}, two broker reads. */
    public static QueueCounts read(Binomic binomic, String queue) {
        QueueStats stats = binomic.queueStats(queue);
        return new QueueCounts(stats, binomic.queues().parked(queue));
    }

    /** The jobs waiting for a due time (a retry, a schedule, a limit's turn), not for a resume. */
    public long delayed() {
        return stats.delayed() - parked;
    }
}

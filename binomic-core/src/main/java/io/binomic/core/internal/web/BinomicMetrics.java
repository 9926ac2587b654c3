package io.binomic.core.internal.web;

import io.binomic.api.QueueStats;
import io.binomic.api.spi.BrokerHealthReport.ServerSetting;
import io.binomic.api.spi.BrokerHealthReport;
import io.binomic.api.spi.FlowCounts;
import io.binomic.core.Binomic;
import io.binomic.core.OutboxMonitor;
import io.binomic.core.Worker;
import io.binomic.core.WorkerCounters;
import io.binomic.core.internal.CoreAccess;
import io.binomic.core.internal.StatsRecorder;
import java.util.List;
import java.util.Optional;

/** The metrics view of one client: its broker's queues and the workers it runs in this JVM. */
public record BinomicMetrics(Binomic binomic) implements MetricsSource.Local {
    @Override
    public List<String> queues() { return CoreAccess.get().queues(binomic); }

    @Override
    public QueueStats queueStats(String queue) { return binomic.queueStats(queue); }

    @Override
    public boolean isPaused(String queue) { return binomic.queues().isPaused(queue); }

    @Override
    public long parked(String queue) { return binomic.queues().parked(queue); }

    /** A queue nothing uses: its stats read three keys that are not there, a round trip that needs a broker answering. */
    private static final String PROBE_QUEUE = "binomic-broker-probe";

    @Override
    public void probeBroker() { CoreAccess.get().broker(binomic).stats(PROBE_QUEUE); }

    @Override
    public StatsRecorder stats() { return CoreAccess.get().stats(binomic); }

    /** What the broker last read of its servers' settings, if it reports them: no broker call. */
    @Override
    public List<ServerSetting> serverSettings() {
        return CoreAccess.get().broker(binomic).capability(BrokerHealthReport.class).map(BrokerHealthReport::serverSettings).orElse(List.of());
    }

    @Override
    public Optional<FlowCounts> batchCounts() { return binomic.batchCounts(); }

    @Override
    public Optional<FlowCounts> workflowCounts() { return binomic.workflowCounts(); }

    @Override
    public List<LimitReadings.Limit> limits(String queue, QueueStats stats) { return LimitReadings.read(binomic, queue, stats::pending); }

    @Override
    public List<OutboxMonitor> outboxes() { return CoreAccess.get().outboxes(binomic); }

    @Override
    public List<WorkerCounters> workers() { return binomic.workers().stream().map(Worker::counters).toList(); }
}

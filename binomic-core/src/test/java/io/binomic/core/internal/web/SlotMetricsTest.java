package io.binomic.core.internal.web;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.QueueStats;
import io.binomic.core.WorkerCounters;
import io.binomic.core.WorkerHealth;
import io.binomic.core.internal.StatsRecorder;
import io.binomic.core.internal.process.WorkerSlots;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A master's /metrics shows every worker JVM's slot counters, in a format promtool accepts. */
class SlotMetricsTest {
    @TempDir
    Path dir;

    @Test
    void eachWorkerSlotIsOneSeriesAndTheExpositionPassesPromtool() throws Exception {
        Path file = dir.resolve("slots");
        try (WorkerSlots master = WorkerSlots.create(file, 2, ProcessHandle.current().pid(), Instant.now(), Duration.ofSeconds(1),
                Duration.ofSeconds(3)); WorkerSlots worker = WorkerSlots.open(file)) {
            worker.slot(0).counters(new WorkerCounters(3, 40, 5, 4, 1, 2));
            worker.slot(0).health(new WorkerHealth(WorkerHealth.State.CONSUMING, Duration.ZERO, Duration.ZERO, 0, java.util.Optional.empty()));
            worker.slot(1).counters(new WorkerCounters(0, 7, 0, 0, 0, 0));
            io.binomic.core.internal.FlowStats callbacks = new io.binomic.core.internal.FlowStats();
            callbacks.callbackStarted("reports", "report", Duration.ofMillis(20));
            callbacks.callbackStarted("audit", "summary", Duration.ofMillis(80));
            worker.slot(1).callbackLag(WorkerSlots.CallbackLag.sumOf(callbacks.callbackLags()));
            StatsRecorder stats = new StatsRecorder();
            stats.succeeded("mail", "send \"quoted\"\\", 3_000_000);
            MetricsSource.Local local = new MetricsSource.Local() {
                public List<String> queues() {
                    return List.of("mail");
                }

                public QueueStats queueStats(String queue) {
                    return new QueueStats(queue, 5, 2, 1, 4, 3);
                }

                public boolean isPaused(String queue) {
                    return true;
                }

                public StatsRecorder stats() {
                    return stats;
                }

                public List<WorkerCounters> workers() {
                    return List.of();
                }
            };
            String text = MetricsSource.render(local, new MetricsSource.Slots(master, slot -> slot == 0 ? 2 : 0));
            for (String line : List.of(
                    "binomic_worker_tasks_total{slot=\"0\",outcome=\"succeeded\"} 40",
                    "binomic_worker_tasks_total{slot=\"0\",outcome=\"failed\"} 5",
                    "binomic_worker_tasks_total{slot=\"1\",outcome=\"succeeded\"} 7",
                    "binomic_worker_retries_total{slot=\"0\"} 4",
                    "binomic_worker_dead_letters_total{slot=\"0\"} 1",
                    "binomic_worker_stale_settlements_total{slot=\"0\"} 2",
                    "binomic_worker_tasks_in_flight{slot=\"0\"} 3",
                    "binomic_worker_consuming{slot=\"0\"} 1",
                    "binomic_worker_consuming{slot=\"1\"} 0",
                    "binomic_worker_restarts_total{slot=\"0\"} 2",
                    "binomic_queue_messages{queue=\"mail\",state=\"dead\"} 4",
                    "binomic_queue_paused{queue=\"mail\"} 1",
                    // the batch callbacks of each worker JVM, under the names a worker JVM serves them by
                    "binomic_batch_callbacks_started_total{slot=\"0\"} 0",
                    "binomic_batch_callbacks_started_total{slot=\"1\"} 2",
                    "binomic_batch_callback_lag_seconds_bucket{slot=\"1\",le=\"0.025\"} 1",
                    "binomic_batch_callback_lag_seconds_bucket{slot=\"1\",le=\"0.1\"} 2",
                    "binomic_batch_callback_lag_seconds_bucket{slot=\"1\",le=\"+Inf\"} 2",
                    "binomic_batch_callback_lag_seconds_sum{slot=\"1\"} 0.1",
                    "binomic_batch_callback_lag_seconds_count{slot=\"1\"} 2",
                    // a label value is escaped as the format requires
                    "binomic_tasks_total{queue=\"mail\",task=\"send \\\"quoted\\\"\\\\\",outcome=\"succeeded\"} 1",
                    "binomic_task_duration_seconds_bucket{queue=\"mail\",task=\"send \\\"quoted\\\"\\\\\",le=\"0.005\"} 1")) {
                assertTrue(text.lines().anyMatch(line::equals), "missing line " + line + " in\n" + text);
            }
            Promtool.assertValid(text);
        }
    }
}

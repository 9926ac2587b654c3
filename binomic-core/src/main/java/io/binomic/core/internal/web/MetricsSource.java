package io.binomic.core.internal.web;

import io.binomic.api.QueueStats;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.BrokerHealthReport.ServerSetting;
import io.binomic.api.spi.FlowCounts;
import io.binomic.api.spi.Workflows;
import io.binomic.core.OutboxMonitor;
import io.binomic.core.WorkerCounters;
import io.binomic.core.internal.FlowStats;
import io.binomic.core.internal.StatsRecorder;
import io.binomic.core.internal.process.SlotHealth;
import io.binomic.core.internal.process.SlotSnapshot;
import io.binomic.core.internal.process.WorkerSlots;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntToLongFunction;

/**
 * Renders {@code /metrics}. Names and units follow Prometheus' conventions: counters end in
 * {@code _total}, durations are seconds, gauges are what they measure now. Two groups:
 * <ul>
 * <li>the serving process's own view: per task counters and the duration histogram of the
 *     workers running in this JVM, and each queue's depth as the broker reports it;</li>
 * <li>for a master, one series per worker slot from the shared-memory segment, so Prometheus
 *     adds up the worker JVMs ({@code sum without (slot) (rate(binomic_worker_tasks_total[5m]))}),
 *     and the batch callbacks they started, under the worker JVM's names with a {@code slot} label.
 *     A restarted worker starts its counters at zero again, which Prometheus reads as a counter
 *     reset, as it should.</li>
 * </ul>
 */
public final class MetricsSource {

    /** The serving process's view of its broker and workers. */
    public interface Local {
        List<String> queues();

        QueueStats queueStats(String queue);

        /** The jobs of {@code queue} a pause holds back ({@link io.binomic.core.Queues#parked}); none by default. */
        default long parked(String queue) { return 0; }

        boolean isPaused(String queue);

        StatsRecorder stats();

        List<WorkerCounters> workers();

        /** The broker's servers' settings as it last read them; none when it does not report them. */
        default List<ServerSetting> serverSettings() { return List.of(); }

        /**
         * One cheap broker query, for a process that knows no queue (a client that only submits, or only relays an
         * outbox), whose {@code binomic_broker_up} would otherwise say 1 without asking the broker anything.
         *
         * @throws RuntimeException when the broker did not answer
         */
        default void probeBroker() { }

        /** The outboxes whose relays registered with the client. */
        default List<OutboxMonitor> outboxes() { return List.of(); }

        /**
         * The broker-wide counts of batches ({@link Batches#counts()}), empty when the broker offers no batches.
         *
         * @throws RuntimeException when the broker did not answer
         */
        default Optional<FlowCounts> batchCounts() { return Optional.empty(); }

        /**
         * The broker-wide counts of workflows ({@link Workflows#counts()}), empty when the broker offers no workflows.
         *
         * @throws RuntimeException when the broker did not answer
         */
        default Optional<FlowCounts> workflowCounts() { return Optional.empty(); }

        /**
         * The flow limits of {@code queue} and what they hold ({@link LimitReadings#read}); none by default.
         *
         * @throws RuntimeException when the broker did not answer
         */
        default List<LimitReadings.Limit> limits(String queue, QueueStats stats) { return List.of(); }
    }

    /** A master's worker slots and how often each was restarted. */
    public record Slots(WorkerSlots slots, IntToLongFunction restarts) { }

    private MetricsSource() { }

    /** The exposition of {@code local} and, when not null, of a master's {@code slots}. */
    public static String render(Local local, Slots slots) {
        PrometheusText p = new PrometheusText();
        queues(p, local);
        serverSettings(p, local.serverSettings());
        OutboxReadings.metrics(p, OutboxReadings.read(local.outboxes()));
        tasks(p, local.stats());
        flows(p, local.stats().flows());
        workers(p, local.workers());
        if (slots != null) {
            slots(p, slots);
        }
        return p.toString();
    }

    private static void queues(PrometheusText p, Local local) {
        p.family("binomic_queue_messages", "gauge", "Messages of a queue by state: ready (waiting), pending (delivered, not settled), delayed (due later: a retry, a schedule,"
                + " a limit's turn), parked (held back by a pause of the queue or of their task until resumed), dead (dead letters).");
        p.family("binomic_queue_consumers", "gauge", "Consumers the broker knows for a queue.");
        p.family("binomic_queue_paused", "gauge", "1 when the queue is paused.");
        p.family("binomic_broker_up", "gauge", "1 when the broker answered this scrape's queue queries (or, knowing no queue, a probe) within 3 s.");
        record Depth(String queue, QueueCounts counts, boolean paused) { }
        List<Depth> depths = Collections.synchronizedList(new ArrayList<>());
        List<LimitReadings.Limit> limits = Collections.synchronizedList(new ArrayList<>());
        // the flows' counts are read within the same deadline: one scrape waits at most once for a broker that is down
        AtomicReference<Optional<FlowCounts>> batches = new AtomicReference<>(Optional.empty());
        AtomicReference<Optional<FlowCounts>> workflows = new AtomicReference<>(Optional.empty());
        boolean up;
        try {
            up = BrokerDeadline.within(() -> {
                List<String> queues = local.queues();
                boolean all = true;
                if (queues.isEmpty()) {
                    try {
                        local.probeBroker();
                    } catch (RuntimeException e) {
                        all = false;
                    }
                }
                for (String q : queues) {
                    try {
                        QueueStats stats = local.queueStats(q);
                        depths.add(new Depth(q, new QueueCounts(stats, local.parked(q)), local.isPaused(q)));
                        // A limit the broker did not read is left out of this scrape, as a depth is, and the broker is not
                        // up: absent series with broker_up 1 would make an alert on them go quiet without a word.
                        try {
                            List<LimitReadings.Limit> read = local.limits(q, stats);
                            limits.addAll(read);
                            all &= LimitReadings.answered(read);
                        } catch (RuntimeException e) {
                            all = false;
                        }
                    } catch (RuntimeException e) {
                        all = false;
                    }
                }
                readFlowCounts(local, batches, workflows);
                return all;
            });
        } catch (TimeoutException e) {
            // One scrape without (some) depths beats a scrape that times out: the counters still count.
            up = false;
        }
        for (Depth d : List.copyOf(depths)) {
            QueueStats s = d.counts().stats();
            String q = d.queue();
            p.sample("binomic_queue_messages", s.ready(), "queue", q, "state", "ready");
            p.sample("binomic_queue_messages", s.pending(), "queue", q, "state", "pending");
            p.sample("binomic_queue_messages", d.counts().delayed(), "queue", q, "state", "delayed");
            p.sample("binomic_queue_messages", d.counts().parked(), "queue", q, "state", "parked");
            p.sample("binomic_queue_messages", s.deadLetters(), "queue", q, "state", "dead");
            p.sample("binomic_queue_consumers", s.consumers(), "queue", q);
            p.sample("binomic_queue_paused", d.paused() ? 1 : 0, "queue", q);
        }
        p.sample("binomic_broker_up", up ? 1 : 0);
        LimitReadings.metrics(p, List.copyOf(limits));
        flowCounts(p, "binomic_batches", "Batches of the whole broker (every client) by state: open (submitted, not ended), and how many ended"
                + " succeeded (every job succeeded), cancelled (cancelled as a whole) or failed (some job dead-lettered or cancelled).", batches.get());
        flowCounts(p, "binomic_workflows", "Workflows of the whole broker (every client) by state: open (some job held or enqueued), and how many"
                + " ended succeeded (every job succeeded), cancelled (cancelled as a whole) or failed (some job dead-lettered, cancelled"
                + " or skipped); a replay that resumes one counts it open again.", workflows.get());
    }

    /** Reads what the broker offers; a count the broker did not answer is left out of this scrape, as a queue's depth is. */
    private static void readFlowCounts(Local local, AtomicReference<Optional<FlowCounts>> batches,
            AtomicReference<Optional<FlowCounts>> workflows) {
        try {
            batches.set(local.batchCounts());
        } catch (RuntimeException e) {
            batches.set(Optional.empty());
        }
        try {
            workflows.set(local.workflowCounts());
        } catch (RuntimeException e) {
            workflows.set(Optional.empty());
        }
    }

    private static void flowCounts(PrometheusText p, String family, String help, Optional<FlowCounts> counts) {
        counts.ifPresent(c -> {
            p.family(family, "gauge", help);
            p.sample(family, c.open(), "state", "open");
            p.sample(family, c.succeeded(), "state", "succeeded");
            p.sample(family, c.failed(), "state", "failed");
            p.sample(family, c.cancelled(), "state", "cancelled");
        });
    }

    /** Settings the broker could not read are left out: the log says so once, and nothing is known of them. */
    private static void serverSettings(PrometheusText p, List<ServerSetting> settings) {
        if (settings.isEmpty()) {
            return;
        }
        p.family("binomic_broker_setting_ok", "gauge", "1 when a setting of a broker server puts no data at risk, 0 when it may"
                + " (Redis: maxmemory-policy other than noeviction lets Redis delete keys when memory is full).");
        for (ServerSetting s : settings) {
            s.value().ifPresent(value -> p.sample("binomic_broker_setting_ok", s.safe() ? 1 : 0, "setting", s.name(),
                    "server", s.server(), "value", value));
        }
    }

    private static void tasks(PrometheusText p, StatsRecorder stats) {
        p.family("binomic_tasks_total", "counter", "Task executions by the workers of this process, by outcome (succeeded: returned; failed: threw or timed out; cancelled: by its submitter while it ran).");
        p.family("binomic_task_retries_total", "counter", "Messages scheduled for another attempt by the workers of this process.");
        p.family("binomic_dead_letters_total", "counter", "Messages dead-lettered by the workers of this process.");
        var cancellations = stats.cancellations();
        for (var t : stats.snapshot()) {
            p.sample("binomic_tasks_total", t.succeeded(), "queue", t.queue(), "task", t.task(), "outcome", "succeeded");
            p.sample("binomic_tasks_total", t.failed(), "queue", t.queue(), "task", t.task(), "outcome", "failed");
            long cancelled = cancellations.getOrDefault(List.of(t.queue(), t.task()), 0L);
            if (cancelled > 0) {
                p.sample("binomic_tasks_total", cancelled, "queue", t.queue(), "task", t.task(), "outcome", "cancelled");
            }
            p.sample("binomic_task_retries_total", t.retried(), "queue", t.queue(), "task", t.task());
            p.sample("binomic_dead_letters_total", t.deadLettered(), "queue", t.queue(), "task", t.task());
        }
        p.family("binomic_task_duration_seconds", "histogram", "How long task executions took, by the workers of this process.");
        for (StatsRecorder.Histogram h : stats.histograms()) {
            for (int i = 0; i < StatsRecorder.BUCKET_SECONDS.length; i++) {
                p.sample("binomic_task_duration_seconds_bucket", h.cumulative()[i], "queue", h.queue(), "task", h.task(),
                        "le", PrometheusText.format(StatsRecorder.BUCKET_SECONDS[i]));
            }
            long count = h.cumulative()[h.cumulative().length - 1];
            p.sample("binomic_task_duration_seconds_bucket", count, "queue", h.queue(), "task", h.task(), "le", "+Inf");
            p.sample("binomic_task_duration_seconds_sum", h.sumNanos() / 1e9, "queue", h.queue(), "task", h.task());
            p.sample("binomic_task_duration_seconds_count", count, "queue", h.queue(), "task", h.task());
        }
        p.family("binomic_reclaims_total", "counter", "Stranded deliveries (their worker stopped renewing) taken over by the workers of this process.");
        stats.reclaims().forEach((q, n) -> p.sample("binomic_reclaims_total", n, "queue", q));
    }

    /** Batches and workflows as this process saw them: no broker call (the broker-wide counts are read with the queues). */
    private static void flows(PrometheusText p, FlowStats flows) {
        p.family("binomic_batches_submitted_total", "counter", "Batches submitted by this process.");
        p.sample("binomic_batches_submitted_total", flows.batchesSubmitted());
        p.family("binomic_batches_cancelled_total", "counter", "Batches cancelled through this process (its API, dashboard or CLI) while some job of theirs had not ended.");
        p.sample("binomic_batches_cancelled_total", flows.batchesCancelled());
        p.family("binomic_workflows_submitted_total", "counter", "Workflows submitted by this process.");
        p.sample("binomic_workflows_submitted_total", flows.workflowsSubmitted());
        p.family("binomic_workflows_cancelled_total", "counter", "Workflows cancelled through this process (its API, dashboard or CLI) while some job of theirs was held or enqueued.");
        p.sample("binomic_workflows_cancelled_total", flows.workflowsCancelled());
        p.family("binomic_batch_callbacks_started_total", "counter", "Batch callbacks (onSuccess, onComplete, onDeath) the workers of this process started, first attempts only"
                + " (on a master: those of each worker JVM, by slot).");
        p.family("binomic_batch_callback_lag_seconds", "histogram", "How long a batch callback waited from the step that enqueued it (its batch's last job ending, or its first dead letter) to its first start, by the workers of this process"
                + " (on a master: by those of each worker JVM, by slot).");
        for (FlowStats.CallbackLag lag : flows.callbackLags()) {
            p.sample("binomic_batch_callbacks_started_total", lag.count(), "queue", lag.queue(), "task", lag.task());
        }
        for (FlowStats.CallbackLag lag : flows.callbackLags()) {
            for (int i = 0; i < StatsRecorder.BUCKET_SECONDS.length; i++) {
                p.sample("binomic_batch_callback_lag_seconds_bucket", lag.cumulative()[i], "queue", lag.queue(), "task", lag.task(),
                        "le", PrometheusText.format(StatsRecorder.BUCKET_SECONDS[i]));
            }
            p.sample("binomic_batch_callback_lag_seconds_bucket", lag.count(), "queue", lag.queue(), "task", lag.task(), "le", "+Inf");
            p.sample("binomic_batch_callback_lag_seconds_sum", lag.sumNanos() / 1e9, "queue", lag.queue(), "task", lag.task());
            p.sample("binomic_batch_callback_lag_seconds_count", lag.count(), "queue", lag.queue(), "task", lag.task());
        }
    }

    private static void workers(PrometheusText p, List<WorkerCounters> workers) {
        p.family("binomic_tasks_in_flight", "gauge", "Tasks running now in the workers of this process.");
        p.sample("binomic_tasks_in_flight", workers.stream().mapToLong(WorkerCounters::inFlight).sum());
        p.family("binomic_stale_settlements_total", "counter", "Outcomes the broker refused because the delivery had been reclaimed, in the workers of this process.");
        p.sample("binomic_stale_settlements_total", workers.stream().mapToLong(WorkerCounters::staleSettlements).sum());
    }

    private static void slots(PrometheusText p, Slots s) {
        List<SlotSnapshot> all = s.slots().snapshot();
        p.family("binomic_worker_tasks_total", "counter", "Task executions by a master's worker JVM (slot), by outcome.");
        p.family("binomic_worker_retries_total", "counter", "Retries scheduled by a master's worker JVM.");
        p.family("binomic_worker_dead_letters_total", "counter", "Messages dead-lettered by a master's worker JVM.");
        p.family("binomic_worker_stale_settlements_total", "counter", "Outcomes refused as stale in a master's worker JVM.");
        p.family("binomic_worker_tasks_in_flight", "gauge", "Tasks running now in a master's worker JVM.");
        p.family("binomic_worker_consuming", "gauge", "1 when a master's worker JVM reports itself consuming (fetching and settling).");
        p.family("binomic_worker_restarts_total", "counter", "Times the master replaced the worker JVM of a slot.");
        for (SlotSnapshot slot : all) {
            String i = Integer.toString(slot.index());
            WorkerCounters c = slot.counters();
            p.sample("binomic_worker_tasks_total", c.succeeded(), "slot", i, "outcome", "succeeded");
            p.sample("binomic_worker_tasks_total", c.failed(), "slot", i, "outcome", "failed");
            p.sample("binomic_worker_retries_total", c.retried(), "slot", i);
            p.sample("binomic_worker_dead_letters_total", c.deadLettered(), "slot", i);
            p.sample("binomic_worker_stale_settlements_total", c.staleSettlements(), "slot", i);
            p.sample("binomic_worker_tasks_in_flight", c.inFlight(), "slot", i);
            p.sample("binomic_worker_consuming", slot.health() == SlotHealth.CONSUMING ? 1 : 0, "slot", i);
            p.sample("binomic_worker_restarts_total", s.restarts().applyAsLong(slot.index()), "slot", i);
        }
        // Under the names a worker JVM serves them by, so one query reads both; per worker JVM here, summed
        // over its callback queues and tasks, as the segment holds them.
        for (SlotSnapshot slot : all) {
            WorkerSlots.CallbackLag lag = s.slots().slot(slot.index()).callbackLag();
            p.sample("binomic_batch_callbacks_started_total", lag.count(), "slot", Integer.toString(slot.index()));
        }
        for (SlotSnapshot slot : all) {
            String i = Integer.toString(slot.index());
            WorkerSlots.CallbackLag lag = s.slots().slot(slot.index()).callbackLag();
            long[] cumulative = lag.cumulative();
            for (int b = 0; b < StatsRecorder.BUCKET_SECONDS.length; b++) {
                p.sample("binomic_batch_callback_lag_seconds_bucket", cumulative[b], "slot", i,
                        "le", PrometheusText.format(StatsRecorder.BUCKET_SECONDS[b]));
            }
            p.sample("binomic_batch_callback_lag_seconds_bucket", lag.count(), "slot", i, "le", "+Inf");
            p.sample("binomic_batch_callback_lag_seconds_sum", lag.sumNanos() / 1e9, "slot", i);
            p.sample("binomic_batch_callback_lag_seconds_count", lag.count(), "slot", i);
        }
    }
}

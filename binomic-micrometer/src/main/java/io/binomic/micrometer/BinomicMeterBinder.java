package io.binomic.micrometer;

import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.spi.RunObserver;
import io.binomic.api.spi.RunObserver.RunOutcome;
import io.binomic.core.Binomic;
import io.binomic.core.TaskStats;
import io.binomic.core.Worker;
import io.binomic.core.WorkerCounters;
import io.binomic.core.internal.web.FlowCapabilities;
import io.binomic.api.spi.Message;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

/**
 * Binds the series of Binomic's {@code /metrics} page to a Micrometer {@link MeterRegistry}, named
 * after Micrometer's conventions (dotted lower-case names, base units, the registry adds
 * {@code _total} and {@code _seconds}): a Prometheus registry scrapes the same names as
 * {@code /metrics}, so dashboards and alerts work with either.
 *
 * <table>
 * <caption>Meters</caption>
 * <tr><th>meter</th><th>type</th><th>tags</th><th>what</th></tr>
 * <tr><td>{@code binomic.tasks}</td><td>function counter</td><td>queue, task, outcome</td>
 *     <td>executions by this process's workers: {@code succeeded}, {@code failed} (threw or timed out), {@code cancelled}</td></tr>
 * <tr><td>{@code binomic.task.duration}</td><td>timer with histogram buckets</td><td>queue, task</td>
 *     <td>run time of succeeded and failed executions, in the buckets of {@code /metrics} (5 ms to 300 s)</td></tr>
 * <tr><td>{@code binomic.task.retries}</td><td>function counter</td><td>queue, task</td><td>messages scheduled for another attempt</td></tr>
 * <tr><td>{@code binomic.dead.letters}</td><td>function counter</td><td>queue, task</td><td>messages dead-lettered</td></tr>
 * <tr><td>{@code binomic.reclaims}</td><td>function counter</td><td>queue</td><td>stranded deliveries taken over</td></tr>
 * <tr><td>{@code binomic.stale.settlements}</td><td>function counter</td><td></td><td>outcomes refused because the delivery had been reclaimed</td></tr>
 * <tr><td>{@code binomic.tasks.in.flight}</td><td>gauge</td><td></td><td>tasks running now</td></tr>
 * <tr><td>{@code binomic.queue.messages}</td><td>gauge</td><td>queue, state</td>
 *     <td>the broker's counts: {@code ready}, {@code pending}, {@code delayed}, {@code parked} (held back by a pause), {@code dead}</td></tr>
 * <tr><td>{@code binomic.queue.consumers}</td><td>gauge</td><td>queue</td><td>consumers the broker knows</td></tr>
 * <tr><td>{@code binomic.queue.paused}</td><td>gauge</td><td>queue</td><td>1 when paused</td></tr>
 * <tr><td>{@code binomic.queue.limit.concurrency}, {@code binomic.queue.limit.rate}</td><td>gauge</td><td>queue, limit</td>
 *     <td>what each flow limit allows: slots of a concurrency limit, starts per second of a rate limit; {@code limit} is
 *     {@code queue} for the queue's own, {@code task:<name>} for a task's, {@code task:<name>:per-key} for what each key of a
 *     task has (the tasks this client knows)</td></tr>
 * <tr><td>{@code binomic.queue.limit.slots.in.use}</td><td>gauge</td><td>queue, limit</td>
 *     <td>slots of a concurrency limit held now; not for limits per key</td></tr>
 * <tr><td>{@code binomic.queue.limit.waiting}</td><td>gauge</td><td>queue, limit, waiting</td>
 *     <td>jobs waiting for a slot ({@code slot}) or for the rate ({@code rate}) of a limit; not for limits per key. The four
 *     gauges of limits are registered once a scrape found the limit, and read NaN while a scrape does not have it (the
 *     limit removed, or the broker did not answer)</td></tr>
 * <tr><td>{@code binomic.broker.up}</td><td>gauge</td><td></td><td>1 when the broker answered the queue queries within 3 s</td></tr>
 * <tr><td>{@code binomic.batches}, {@code binomic.workflows}</td><td>gauge</td><td>state</td>
 *     <td>the broker-wide counts ({@link Binomic#batchCounts()}, {@link Binomic#workflowCounts()}): {@code open}, and how many
 *     ended {@code succeeded}, {@code failed} or {@code cancelled}; registered once a scrape found the broker has them</td></tr>
 * <tr><td>{@code binomic.batches.submitted}, {@code binomic.batches.cancelled}, {@code binomic.workflows.submitted},
 *     {@code binomic.workflows.cancelled}</td><td>function counter</td><td></td>
 *     <td>batches and workflows submitted and cancelled through this client ({@link Binomic#flowCounters()})</td></tr>
 * <tr><td>{@code binomic.batch.callbacks.started}</td><td>counter</td><td>queue, task</td>
 *     <td>batch callbacks (onSuccess, onComplete, onDeath) the workers of this process started, first attempts only</td></tr>
 * <tr><td>{@code binomic.batch.callback.lag}</td><td>timer with histogram buckets</td><td>queue, task</td>
 *     <td>how long each of those callbacks waited from its enqueue (its batch's last job ending, or its first dead letter) to its start</td></tr>
 * </table>
 *
 * <p>The function counters read the client's own counts, so they hold every execution since the
 * client was built. The timers, and the callback counter beside its timer, record from the first
 * {@link #bindTo} on (a registry's timer cannot be given past samples): bind before the workers
 * start, as the Spring Boot starter does.
 * Tasks appear when the client knows them (its registered tasks) or when one of its workers first
 * runs them; queues are those of the registered tasks and of the worker configuration.
 *
 * {@snippet class=io.binomic.micrometer.JavadocSnippetsTest region=bind}
 */
public final class BinomicMeterBinder implements MeterBinder, AutoCloseable {
    /** The upper bounds of {@code /metrics}' duration buckets, so every process's histograms add up. */
    private static final double[] BUCKET_SECONDS = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
    private static final String TASKS_DESCRIPTION = "Task executions by the workers of this process, by outcome (succeeded:"
            + " returned; failed: threw or timed out; cancelled: by its submitter while it ran).";
    /** How long one snapshot of the client's task counts serves the counters of one scrape. */
    private static final long STATS_FRESH_NANOS = Duration.ofMillis(500).toNanos();

    private final Binomic binomic;
    private final QueueDepths depths;
    private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();
    /** Each (queue, task) whose meters are registered, per registry: the run observer adds those it meets. */
    private final Map<MeterRegistry, Set<List<String>>> tasksBound = new ConcurrentHashMap<>();
    private final Map<MeterRegistry, Set<String>> queuesBound = new ConcurrentHashMap<>();
    /** The timers of each (queue, task), one per registry: the worker's path looks them up once per execution. */
    private final Map<List<String>, List<Timer>> timers = new ConcurrentHashMap<>();
    private final RunObserver observer = this::started;
    /** The meters of each callback (queue, task), per registry, bound at its first start. */
    private final Map<MeterRegistry, Map<List<String>, CallbackMeters>> callbackMeters = new ConcurrentHashMap<>();
    /** Whether a reading found the broker has batches (workflows): their gauges are bound to every registry from then on. */
    private volatile boolean batchesOffered;
    private volatile boolean workflowsOffered;
    private final Map<MeterRegistry, Set<String>> flowGaugesBound = new ConcurrentHashMap<>();
    /** The series of flow limits some reading had: bound to every registry from then on (NaN while a reading lacks them). */
    private final Set<LimitMeters.Series> limitsOffered = ConcurrentHashMap.newKeySet();
    private final Map<MeterRegistry, Set<LimitMeters.Series>> limitGaugesBound = new ConcurrentHashMap<>();
    private volatile boolean observing;
    private volatile StatsSnapshot stats;

    private record StatsSnapshot(long atNanos, Map<List<String>, TaskStats> byTask, Map<String, Long> reclaims) { }

    private record CallbackMeters(Counter started, Timer lag) { }

    /** A binder of {@code binomic}'s series; {@link #bindTo} registers them. */
    public BinomicMeterBinder(Binomic binomic) {
        this.binomic = Objects.requireNonNull(binomic, "binomic must not be null");
        this.depths = new QueueDepths(binomic, this::queues, this::flowsRead, this::limitsRead);
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry must not be null");
        if (registries.contains(registry)) {
            return;
        }
        registries.add(registry);
        tasksBound.put(registry, ConcurrentHashMap.newKeySet());
        queuesBound.put(registry, ConcurrentHashMap.newKeySet());
        flowGaugesBound.put(registry, ConcurrentHashMap.newKeySet());
        limitGaugesBound.put(registry, ConcurrentHashMap.newKeySet());
        callbackMeters.put(registry, new ConcurrentHashMap<>());
        synchronized (this) {
            if (!observing) {
                binomic.addRunObserver(observer);
                observing = true;
            }
        }
        Gauge.builder("binomic.tasks.in.flight", this, b -> b.sumWorkers(WorkerCounters::inFlight))
                .description("Tasks running now in the workers of this process.").register(registry);
        FunctionCounter.builder("binomic.stale.settlements", this, b -> b.sumWorkers(WorkerCounters::staleSettlements))
                .description("Outcomes the broker refused because the delivery had been reclaimed, in the workers of this process.")
                .register(registry);
        Gauge.builder("binomic.broker.up", depths, d -> d.brokerUp() ? 1 : 0)
                .description("1 when the broker answered the queue queries of the last scrape within 3 s.").register(registry);
        for (String queue : queues()) {
            bindQueue(registry, queue);
        }
        for (Task<?, ?> task : binomic.tasks().all()) {
            bindTask(registry, task.queue(), task.name());
        }
        for (TaskStats s : binomic.taskStats()) {
            bindTask(registry, s.queue(), s.task());
        }
        FlowMeters.bindCounters(registry, binomic);
        // Known from the broker's capabilities, without a call: the first scrape has these gauges.
        batchesOffered |= FlowCapabilities.batches(binomic);
        workflowsOffered |= FlowCapabilities.workflows(binomic);
        bindFlowGauges(registry);
        bindLimitGauges(registry);
    }

    /** A reading found what the broker has: the gauges of batches and workflows are bound once it is known it has them. */
    private void flowsRead(QueueDepths.Flows flows) {
        boolean more = false;
        if (!batchesOffered && flows.batches() != null && flows.batches().isPresent()) {
            batchesOffered = more = true;
        }
        if (!workflowsOffered && flows.workflows() != null && flows.workflows().isPresent()) {
            workflowsOffered = more = true;
        }
        if (more) {
            registries.forEach(this::bindFlowGauges);
        }
    }

    private void bindFlowGauges(MeterRegistry r) {
        Set<String> bound = flowGaugesBound.get(r);
        if (batchesOffered && bound.add("batches")) {
            FlowMeters.bindGauges(r, "binomic.batches", depths, QueueDepths.Flows::batches, FlowMeters.BATCHES_DESCRIPTION);
        }
        if (workflowsOffered && bound.add("workflows")) {
            FlowMeters.bindGauges(r, "binomic.workflows", depths, QueueDepths.Flows::workflows, FlowMeters.WORKFLOWS_DESCRIPTION);
        }
    }

    /** A reading found these series of flow limits: the new ones are bound to every registry. */
    private void limitsRead(Set<LimitMeters.Series> series) {
        if (limitsOffered.addAll(series)) {
            registries.forEach(this::bindLimitGauges);
        }
    }

    private void bindLimitGauges(MeterRegistry r) {
        Set<LimitMeters.Series> bound = limitGaugesBound.get(r);
        for (LimitMeters.Series s : limitsOffered) {
            if (bound.add(s)) {
                LimitMeters.bind(r, depths, s);
            }
        }
    }

    /** Stops recording run times; the registered meters stay (a registry removes its own). */
    @Override
    public synchronized void close() {
        binomic.removeRunObserver(observer);
        observing = false;
    }

    private List<String> queues() {
        List<String> all = new ArrayList<>(binomic.tasks().queues());
        for (String q : binomic.config().worker().queues()) {
            if (!all.contains(q)) {
                all.add(q);
            }
        }
        return all;
    }

    private RunObserver.Run started(TaskContext job) {
        List<String> key = List.of(job.queue(), job.task());
        for (MeterRegistry r : registries) {
            if (!tasksBound.get(r).contains(key)) {
                bindTask(r, job.queue(), job.task());
            }
        }
        if (job.attempt() == 1 && job.headers().containsKey(Message.BATCH_CALLBACK)) {
            callbackStarted(key, job);
        }
        return new TimedRun(key);
    }

    /**
     * A batch callback starts its first attempt: as {@code /metrics} counts it, its lag is from its
     * enqueue, done by the step that ended its batch's last job (or its first dead letter), to now.
     */
    private void callbackStarted(List<String> key, TaskContext job) {
        long lagNanos = Math.max(0, Duration.between(job.enqueuedAt(), Instant.now()).toNanos());
        for (MeterRegistry r : registries) {
            CallbackMeters m = callbackMeters.get(r).computeIfAbsent(key, k -> new CallbackMeters(
                    FlowMeters.callbacksStarted(r, k.get(0), k.get(1)), FlowMeters.callbackLag(r, k.get(0), k.get(1), BUCKET_SECONDS)));
            m.started().increment();
            m.lag().record(lagNanos, TimeUnit.NANOSECONDS);
        }
    }

    /** Times one run from just before its handler to just after, and records it once its outcome is known. */
    private final class TimedRun implements RunObserver.Run {
        private final List<String> key;
        private volatile long nanos = -1;

        TimedRun(List<String> key) {
            this.key = key;
        }

        @Override
        public Runnable enter() {
            long start = System.nanoTime();
            return () -> nanos = System.nanoTime() - start;
        }

        @Override
        public void ended(RunOutcome outcome, Optional<Throwable> failure) {
            // As on /metrics: a run cancelled or cut by a stopping worker says nothing of how long the task takes.
            if (nanos < 0 || outcome == RunOutcome.CANCELLED || outcome == RunOutcome.LEFT_PENDING) {
                return;
            }
            for (Timer t : timers.getOrDefault(key, List.of())) {
                t.record(nanos, TimeUnit.NANOSECONDS);
            }
        }
    }

    private void bindTask(MeterRegistry r, String queue, String task) {
        List<String> key = List.of(queue, task);
        if (!tasksBound.get(r).add(key)) {
            return;
        }
        bindQueue(r, queue);
        Tags tags = Tags.of("queue", queue, "task", task);
        // Every series of a name carries the description: a registry may take its help text from any one of them.
        taskCounter(r, "binomic.tasks", tags.and("outcome", "succeeded"), key, TaskStats::succeeded, TASKS_DESCRIPTION);
        taskCounter(r, "binomic.tasks", tags.and("outcome", "failed"), key, TaskStats::failed, TASKS_DESCRIPTION);
        taskCounter(r, "binomic.tasks", tags.and("outcome", "cancelled"), key, TaskStats::cancelled, TASKS_DESCRIPTION);
        taskCounter(r, "binomic.task.retries", tags, key, TaskStats::retried,
                "Messages scheduled for another attempt by the workers of this process.");
        taskCounter(r, "binomic.dead.letters", tags, key, TaskStats::deadLettered,
                "Messages dead-lettered by the workers of this process.");
        Duration[] buckets = new Duration[BUCKET_SECONDS.length];
        for (int i = 0; i < buckets.length; i++) {
            buckets[i] = Duration.ofNanos((long) (BUCKET_SECONDS[i] * 1e9));
        }
        Timer timer = Timer.builder("binomic.task.duration").tags(tags).serviceLevelObjectives(buckets)
                .description("How long task executions took, by the workers of this process.").register(r);
        timers.compute(key, (k, list) -> {
            List<Timer> more = list == null ? new ArrayList<>() : new ArrayList<>(list);
            more.add(timer);
            return List.copyOf(more);
        });
    }

    private void taskCounter(MeterRegistry r, String name, Tags tags, List<String> key, ToLongFunction<TaskStats> count,
                             String description) {
        FunctionCounter.Builder<BinomicMeterBinder> b = FunctionCounter.builder(name, this, self -> {
            TaskStats s = self.stats().byTask().get(key);
            return s == null ? 0 : count.applyAsLong(s);
        }).tags(tags).description(description);
        b.register(r);
    }

    private void bindQueue(MeterRegistry r, String queue) {
        if (!queuesBound.get(r).add(queue)) {
            return;
        }
        Tags tags = Tags.of("queue", queue);
        String messages = "Messages of a queue by state: ready (waiting), pending (delivered, not settled), delayed (due later: a retry,"
                + " a schedule, a limit's turn), parked (held back by a pause of the queue or of their task until resumed), dead (dead letters).";
        depthGauge(r, "binomic.queue.messages", tags.and("state", "ready"), queue, d -> d.stats().ready(), messages);
        depthGauge(r, "binomic.queue.messages", tags.and("state", "pending"), queue, d -> d.stats().pending(), messages);
        depthGauge(r, "binomic.queue.messages", tags.and("state", "delayed"), queue, d -> d.counts().delayed(), messages);
        depthGauge(r, "binomic.queue.messages", tags.and("state", "parked"), queue, d -> d.counts().parked(), messages);
        depthGauge(r, "binomic.queue.messages", tags.and("state", "dead"), queue, d -> d.stats().deadLetters(), messages);
        depthGauge(r, "binomic.queue.consumers", tags, queue, d -> d.stats().consumers(), "Consumers the broker knows for a queue.");
        depthGauge(r, "binomic.queue.paused", tags, queue, d -> d.paused() ? 1 : 0, "1 when the queue is paused.");
        FunctionCounter.builder("binomic.reclaims", this, self -> self.stats().reclaims().getOrDefault(queue, 0L)).tags(tags)
                .description("Stranded deliveries (their worker stopped renewing) taken over by the workers of this process.")
                .register(r);
    }

    private void depthGauge(MeterRegistry r, String name, Tags tags, String queue, ToDoubleFunction<QueueDepths.Depth> value,
                            String description) {
        Gauge.builder(name, depths, d -> {
            QueueDepths.Depth depth = d.of(queue);
            return depth == null ? Double.NaN : value.applyAsDouble(depth);
        }).tags(tags).description(description).register(r);
    }

    private StatsSnapshot stats() {
        StatsSnapshot s = stats;
        long now = System.nanoTime();
        if (s != null && now - s.atNanos() < STATS_FRESH_NANOS) {
            return s;
        }
        Map<List<String>, TaskStats> byTask = new ConcurrentHashMap<>();
        for (TaskStats t : binomic.taskStats()) {
            byTask.put(List.of(t.queue(), t.task()), t);
        }
        s = new StatsSnapshot(now, Map.copyOf(byTask), Map.copyOf(binomic.reclaims()));
        stats = s;
        return s;
    }

    private double sumWorkers(ToLongFunction<WorkerCounters> field) {
        long sum = 0;
        for (Worker w : binomic.workers()) {
            sum += field.applyAsLong(w.counters());
        }
        return sum;
    }
}

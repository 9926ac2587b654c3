package io.binomic.core;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.JobHandle;
import io.binomic.api.JobStatus;
import io.binomic.api.Message;
import io.binomic.api.PayloadTooLargeException;
import io.binomic.api.QueueStats;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.TaskHandler;
import io.binomic.api.TaskMode;
import io.binomic.api.TaskRegistry;
import io.binomic.api.TraceContext;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.PayloadCodec;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SchedulerProvider;
import io.binomic.api.spi.TaskProvider;
import io.binomic.api.spi.TickResult;
import io.binomic.core.internal.FlowSubmits;
import io.binomic.core.internal.Providers;
import io.binomic.core.internal.StatsRecorder;
import io.binomic.core.internal.Uuid7;
import io.binomic.core.internal.codec.WorkerCodec;
import io.binomic.core.internal.jobs.JobHandles;
import io.binomic.core.internal.schedule.PeriodicScheduler;
import io.binomic.core.internal.schedule.Trigger;
import io.binomic.core.internal.worker.WorkerRuntime;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A Binomic instance: submits tasks, fires periodic ones, runs workers and manages dead letters.
 * Holds no static state; {@link #close()} stops its workers and releases the broker.
 *
 * <pre>{@code
 * try (Binomic binomic = Binomic.builder().handle(greet, g -> "Hello " + g.name()).build().start()) {
 *     binomic.startWorker();
 *     JobHandle<String> job = binomic.submit(greet, new Greeting("Ada"));
 *     String greeting = job.await(Duration.ofSeconds(5));
 * }
 * }</pre>
 */
public final class Binomic implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Binomic.class.getName());
    /** A tick's claim lives this many periods... */
    private static final int CLAIM_PERIODS = 3;
    /** ...and at least this long. */
    private static final Duration MIN_CLAIM_LIFETIME = Duration.ofMinutes(1);
    /** A clock this far ahead of the broker's is worth a warning (a few ms are normal between hosts). */
    private static final Duration CLOCK_SKEW_WARNING = Duration.ofSeconds(1);

    private final BinomicConfig config;
    private final TaskRegistry registry;
    private final Map<String, TaskBinding<?, ?>> handlers;
    private final JobHandles jobs;
    private final Broker broker;
    private final PayloadCodec codec;
    private final WorkerCodec workerCodec;
    /** The scheduler given to the builder, if any; otherwise the provider that creates one for the started broker. */
    private final Scheduler givenScheduler;
    private final SchedulerProvider schedulerProvider;
    /** The broker's store of deferred work: DELAY submissions, retries, tick claims. Set by {@link #start()}. */
    private volatile Scheduler scheduler;
    /** Sleeps until each periodic task's next tick, in this process. */
    private final PeriodicScheduler ticker;
    private final Clock clock;
    private final StatsRecorder stats = new StatsRecorder();
    private final List<WorkerRuntime> workers = new CopyOnWriteArrayList<>();
    /** Sends the workers' counts to the broker's per-minute activity; started with the first worker. */
    private io.binomic.core.internal.ActivityFlusher activity;
    private final DeadLetters deadLetters;
    private final Queues queues;
    /** The partitions of partitioned queues: where a submit goes, what a worker reads. */
    private final io.binomic.core.internal.PartitionRouter partitions;
    private volatile State state = State.NEW;
    private volatile boolean clockSkewWarned;
    private final boolean prepareQueues;
    /** Gives a submit without a traceparent the submitting thread's trace context; null when the application has none. */
    private final io.binomic.api.spi.TraceContextProvider traceContexts;

    private enum State { NEW, STARTED, CLOSED }

    private Binomic(Builder b) {
        this.config = b.config;
        this.registry = TaskRegistry.of(b.tasks);
        this.handlers = Map.copyOf(b.handlers);
        this.clock = b.clock;
        this.broker = b.broker != null ? b.broker : Providers.createBroker(config.broker());
        this.codec = b.codec != null ? b.codec : Providers.selectCodec(config.payloadCodec());
        this.workerCodec = new WorkerCodec(codec, Providers.codecsById());
        this.givenScheduler = b.scheduler;
        // Selected now, so a missing provider fails the build as a missing broker provider does.
        this.schedulerProvider = b.scheduler != null ? null : Providers.selectScheduler(config.broker(),
                Providers.load(SchedulerProvider.class, ServiceLoader.load(SchedulerProvider.class)));
        this.ticker = new PeriodicScheduler(clock);
        this.partitions = new io.binomic.core.internal.PartitionRouter(broker);
        this.deadLetters = new DeadLetters(broker, registry, config.worker().queues(), partitions);
        this.queues = new Queues(broker, partitions);
        this.prepareQueues = b.prepareQueues;
        this.jobs = new JobHandles(broker, workerCodec, clock);
        this.traceContexts = b.traceContextsGiven ? b.traceContexts : Providers.selectTraceContextProvider(
                Providers.load(io.binomic.api.spi.TraceContextProvider.class,
                        ServiceLoader.load(io.binomic.api.spi.TraceContextProvider.class)));
    }

    static {
        io.binomic.core.internal.CoreAccess.install(new io.binomic.core.internal.CoreAccess.Bridge() {
            @Override
            public StatsRecorder stats(Binomic binomic) {
                return binomic.stats;
            }

            @Override
            public List<Worker> workers(Binomic binomic) {
                return binomic.workers.stream().filter(w -> !w.isStopped()).map(w -> (Worker) w).toList();
            }

            @Override
            public List<String> queues(Binomic binomic) {
                return binomic.allQueues();
            }

            @Override
            public Broker broker(Binomic binomic) {
                binomic.requireStarted();
                return binomic.broker;
            }

            @Override
            public Scheduler scheduler(Binomic binomic) {
                binomic.requireStarted();
                return binomic.scheduler;
            }
        });
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * A builder for the HTTP {@link Dashboard} of this client: {@code /metrics} for Prometheus and
     * the operators' pages. Nothing listens until {@link Dashboard.Builder#start()}.
     */
    public Dashboard.Builder dashboard() {
        requireStarted();
        return new Dashboard.Builder(this);
    }

    /**
     * Connects the broker, prepares every queue, creates the broker's scheduler and, when
     * configured, starts firing CRON and INTERVAL tasks. Returns this instance.
     *
     * @throws IllegalArgumentException when the scheduler provider of the URL's kind cannot serve the
     *         broker given to {@link Builder#broker(Broker)} (give its scheduler with {@link Builder#scheduler(Scheduler)})
     */
    public synchronized Binomic start() {
        if (state != State.NEW) {
            throw new IllegalStateException("Binomic can be started once; it is " + state);
        }
        List<String> queues = allQueues();
        broker.start(prepareQueues ? queues : List.of());
        try {
            scheduler = givenScheduler != null ? givenScheduler : Providers.createScheduler(schedulerProvider, broker);
        } catch (RuntimeException e) {
            broker.close();
            throw e;
        }
        state = State.STARTED;
        if (config.schedulePeriodicTasks()) {
            for (Task<?, ?> task : registry.all()) {
                schedulePeriodic(task);
            }
        }
        LOG.log(Level.INFO, "Binomic started: broker {0}, {1} task(s), queues {2}",
                config.broker().redactedUrl(), registry.all().size(), queues);
        return this;
    }

    private void schedulePeriodic(Task<?, ?> task) {
        Trigger trigger = switch (task.mode()) {
            case CRON -> Trigger.cron(task.cron().orElseThrow(), task.zone());
            case INTERVAL -> Trigger.every(task.interval().orElseThrow());
            default -> null;
        };
        if (trigger == null) {
            return;
        }
        ticker.schedule(task.name(), trigger, tick -> fireTick(task, trigger, tick));
    }

    /**
     * Fires one tick through the scheduler, which claims it and enqueues its message in one step.
     * The scheduler judges by its broker's clock: when it says the tick is not due yet, this
     * process's clock runs ahead, and the tick is tried again once the broker's clock reaches it (by
     * then another client may have fired it, which is fine: each tick fires once).
     */
    private void fireTick(Task<?, ?> task, Trigger trigger, Instant tick) throws InterruptedException {
        Message message = newMessage(task, null, SubmitOptions.builder().headers(Map.of("tick", tick.toString())).build(), null);
        Duration claimLifetime = claimLifetime(trigger, tick);
        while (true) {
            TickResult result = scheduler.fireTick(task.name(), tick, message, claimLifetime);
            switch (result.outcome()) {
                case FIRED -> {
                    LOG.log(Level.DEBUG, "fired {0} tick {1} as {2}", task.name(), tick, message.id());
                    return;
                }
                case ALREADY_FIRED -> {
                    return;
                }
                case NOT_DUE -> {
                    Duration early = Duration.between(result.brokerTime(), tick);
                    if (early.compareTo(CLOCK_SKEW_WARNING) > 0 && !clockSkewWarned) {
                        clockSkewWarned = true;
                        LOG.log(Level.WARNING, "this process''s clock runs about {0} ms ahead of the broker''s:"
                                + " periodic ticks wait for the broker''s clock; synchronise the clocks (NTP)", early.toMillis());
                    }
                    Thread.sleep(early.plusMillis(1));
                }
            }
        }
    }

    /**
     * How long the broker keeps a tick's claim: several periods, and at least a minute, so that a
     * client a little late never fires a tick again, while a job that is gone leaves nothing behind.
     */
    static Duration claimLifetime(Trigger trigger, Instant tick) {
        Duration period = Duration.between(tick, trigger.nextAfter(tick));
        Duration several = period.multipliedBy(CLAIM_PERIODS);
        return several.compareTo(MIN_CLAIM_LIFETIME) < 0 ? MIN_CLAIM_LIFETIME : several;
    }

    /**
     * Submits a DIRECT task (enqueued now) or a DELAY task (enqueued after its delay, durably) and
     * returns its handle. The queue is the task's. The task need not be registered with this
     * instance: a producer submits definitions it has no handler for.
     *
     * @throws IllegalArgumentException for a CRON or INTERVAL task, or one that clashes with a registered task of the same name
     * @throws PayloadTooLargeException when the encoded argument exceeds the broker's limit
     */
    public <A, R> JobHandle<R> submit(Task<A, R> task, A argument) {
        return submit(task, argument, Map.of());
    }

    /** {@link #submit(Task, Object)} for a task without argument. */
    public <R> JobHandle<R> submit(Task<Void, R> task) {
        return submit(task, null, Map.of());
    }

    /** {@link #submit(Task, Object)} with headers (trace context, idempotency key...). */
    public <A, R> JobHandle<R> submit(Task<A, R> task, A argument, Map<String, String> headers) {
        return submit(task, argument, SubmitOptions.builder().headers(headers).build());
    }

    /** {@link #submit(Task, Object)} with options for this one job ({@link SubmitOptions}). */
    public <A, R> JobHandle<R> submit(Task<A, R> task, A argument, SubmitOptions options) {
        requireSubmittable(task);
        Message message = newMessage(task, argument, options, traceFor(options));
        Instant due = FlowSubmits.dueAt(task, options, clock);
        if (FlowSubmits.applies(task, options)) {
            FlowSubmits.Submitted submitted = FlowSubmits.submit(task, argument, options, message, due, broker, partitions);
            return jobs.handle(submitted.queue(), submitted.id(), task.name(), task.resultType(), task.isTracked());
        }
        message = partitions.route(message, options.partitionKey().orElse(null));
        if (due != null) {
            scheduler.schedule(message, due);
        } else {
            broker.enqueue(message);
        }
        return jobs.handle(message.queue(), message.id(), task.name(), task.resultType(), task.isTracked());
    }

    /**
     * Submits one job per argument, pipelined: the fast path for producers. Returns the handles in
     * argument order.
     */
    public <A, R> List<JobHandle<R>> submitAll(Task<A, R> task, Collection<? extends A> arguments) {
        return submitAll(task, arguments, SubmitOptions.NONE);
    }

    /** {@link #submitAll(Task, Collection)} with the same options for every job. */
    public <A, R> List<JobHandle<R>> submitAll(Task<A, R> task, Collection<? extends A> arguments, SubmitOptions options) {
        requireSubmittable(task);
        List<Message> messages = new ArrayList<>(arguments.size());
        TraceContext trace = traceFor(options);
        for (A argument : arguments) {
            messages.add(newMessage(task, argument, options, trace));
        }
        Instant due = FlowSubmits.dueAt(task, options, clock);
        if (FlowSubmits.applies(task, options)) {
            return FlowSubmits.submitAll(task, List.copyOf(arguments), options, messages, due, broker, partitions).stream()
                    .map(s -> jobs.handle(s.queue(), s.id(), task.name(), task.resultType(), task.isTracked())).toList();
        }
        String partitionKey = options.partitionKey().orElse(null);
        messages.replaceAll(m -> partitions.route(m, partitionKey));
        if (due != null) {
            scheduler.scheduleAll(messages, due);
        } else {
            broker.enqueueAll(messages);
        }
        List<JobHandle<R>> handles = new ArrayList<>(messages.size());
        for (Message message : messages) {
            handles.add(jobs.handle(message.queue(), message.id(), task.name(), task.resultType(), task.isTracked()));
        }
        return handles;
    }

    /**
     * Submits a job by task name with its argument as JSON text, for a process that does not have
     * the task's definition (the CLI, a service in another language's shadow). The job is tracked
     * for {@link Task#DEFAULT_RESULT_RETENTION}, so its status and result can be read; the worker
     * validates the argument against the task's type and dead-letters it ({@code DECODE_ERROR})
     * when it does not fit, or ({@code TASK_NOT_FOUND}) when no worker knows the task.
     *
     * @param queue the task's queue
     * @param task the task name
     * @param jsonArgument the argument as JSON, such as {@code {"name":"Ada"}}; {@code null} for a task without argument
     * @throws IllegalArgumentException when the name is not a valid task name or the text is not JSON
     */
    public JobHandle<String> submitJson(String queue, String task, String jsonArgument) {
        return submitJson(queue, task, jsonArgument, io.binomic.api.Priority.DEFAULT);
    }

    /**
     * {@link #submitJson(String, String, String)} at {@code priority} ({@link io.binomic.api.Priority}:
     * 0 lowest to 9 highest, default 5).
     *
     * @throws IllegalArgumentException also when {@code priority} is out of range
     */
    public JobHandle<String> submitJson(String queue, String task, String jsonArgument, int priority) {
        io.binomic.api.Priority.require("priority", priority);
        return submitJson(queue, task, jsonArgument, SubmitOptions.builder().priority(priority).build());
    }

    /**
     * {@link #submitJson(String, String, String)} with {@code options}: headers, priority, a delay,
     * uniqueness (the key is the option's, else the JSON text itself) or a debounce key, as for
     * {@link #submit(Task, Object, SubmitOptions)}. A duplicate of a unique job returns its handle.
     *
     * @throws IllegalArgumentException also when an option is invalid (debounce without a delay, unique with debounce, a reserved header)
     */
    public JobHandle<String> submitJson(String queue, String task, String jsonArgument, SubmitOptions options) {
        Objects.requireNonNull(options, "options must not be null (SubmitOptions.NONE for none)");
        requireStarted();
        // Validates the names as a definition would, with the same messages; tracked like a task that returns a value.
        Task<Void, String> definition = Task.builder(task, Void.class, String.class).queue(queue).build();
        FlowSubmits.requireNoReservedHeaders(options);
        for (String reserved : List.of(Message.CODEC, Message.TRACK)) {
            if (options.headers().containsKey(reserved)) {
                throw new IllegalArgumentException("header '" + reserved + "' is reserved: submit sets it; remove it from the headers");
            }
        }
        byte[] payload;
        if (jsonArgument == null) {
            payload = codec.encode(null);
        } else {
            io.binomic.core.internal.codec.JsonText.requireJson(jsonArgument);
            payload = jsonArgument.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }
        int limit = config.broker().maxPayloadBytes();
        if (payload.length > limit) {
            throw new PayloadTooLargeException(task, payload.length, limit);
        }
        int priority = io.binomic.core.internal.PriorityHeaders.priorityOf(definition, options);
        Map<String, String> headers = new HashMap<>(options.headers());
        TraceContext trace = traceFor(options);
        if (trace != null) {
            headers.putAll(trace.headers());
        }
        headers.put(Message.CODEC, codec.id());
        headers.put(Message.TRACK, Long.toString(Task.DEFAULT_RESULT_RETENTION.toMillis()));
        headers = io.binomic.core.internal.PriorityHeaders.withPriority(headers, priority);
        Message message = new Message(Uuid7.next(clock), task, queue, 1, clock.instant(), payload, headers);
        Instant due = FlowSubmits.dueAt(definition, options, clock);
        if (FlowSubmits.applies(definition, options)) {
            FlowSubmits.Submitted submitted = FlowSubmits.submit(definition, null, options, message, due, broker, partitions);
            return new JsonResultHandle(jobs.handle(submitted.queue(), submitted.id(), null, Void.class, true));
        }
        message = partitions.route(message, options.partitionKey().orElse(null));
        if (due != null) {
            scheduler.schedule(message, due);
        } else {
            broker.enqueue(message);
        }
        return new JsonResultHandle(jobs.handle(message.queue(), message.id(), null, Void.class, true));
    }

    /**
     * The handle of job {@code id} of {@code task}, from any process, at any time while its status
     * is kept ({@link Task#statusRetention()}).
     */
    public <R> JobHandle<R> job(Task<?, R> task, UUID id) {
        requireStarted();
        return jobs.handle(partitionOf(task.queue(), id), id, task.name(), task.resultType(), true);
    }

    /**
     * The handle of job {@code id} of {@code queue}, for a process that does not know its task (the
     * CLI, another service): its result reads as JSON text.
     */
    public JobHandle<String> job(String queue, UUID id) {
        requireStarted();
        return new JsonResultHandle(jobs.handle(partitionOf(queue, id), id, null, Void.class, true));
    }

    /**
     * The physical queue holding the record of job {@code id} of {@code queue}: the queue itself
     * unless it is partitioned, else the partition that has the record (the queue when none has).
     * A handle names its partition ({@link JobHandle#queue()}), so this look-up is needed only for
     * an id without its handle.
     */
    private String partitionOf(String queue, UUID id) {
        io.binomic.api.spi.QueuePartitions p = partitions.of(queue);
        if (!p.partitioned()) {
            return queue;
        }
        for (String partition : p.all(queue)) {
            if (broker.capability(JobStore.class).flatMap(store -> store.readJob(partition, id)).isPresent()) {
                return partition;
            }
        }
        return queue;
    }

    /**
     * The handle of job {@code id}, looked up on the queues this instance knows (its tasks' and its
     * worker's): the first queue that has a record of it. A job of another queue, or one whose status
     * is not kept, is {@link io.binomic.api.JobState#UNKNOWN} on the first queue; use
     * {@link #job(String, UUID)} for it.
     *
     * @throws IllegalStateException when this instance knows no queue
     */
    public JobHandle<String> job(UUID id) {
        requireStarted();
        List<String> queues = allQueues();
        if (queues.isEmpty()) {
            throw new IllegalStateException("this instance knows no queue to look for job " + id + " in: use job(queue, id)");
        }
        for (String queue : partitions.physical(queues)) {
            if (broker.capability(JobStore.class).flatMap(store -> store.readJob(queue, id)).isPresent()) {
                return new JsonResultHandle(jobs.handle(queue, id, null, Void.class, true));
            }
        }
        return job(queues.getFirst(), id);
    }

    /** A handle whose result is the stored JSON text, for callers that do not know the result type. */
    private record JsonResultHandle(JobHandle<Void> inner) implements JobHandle<String> {
        @Override
        public UUID id() {
            return inner.id();
        }

        @Override
        public String queue() {
            return inner.queue();
        }

        @Override
        public JobStatus status() {
            return inner.status();
        }

        @Override
        public java.util.concurrent.CompletableFuture<String> result() {
            return inner.result().thenApply(ignored -> inner.status().result().orElse(null));
        }

        @Override
        public String await(Duration timeout) {
            inner.await(timeout);
            return inner.status().result().orElse(null);
        }

        @Override
        public CancelOutcome cancel() {
            return inner.cancel();
        }
    }

    private void requireSubmittable(Task<?, ?> task) {
        Objects.requireNonNull(task, "task must not be null");
        requireStarted();
        if (task.mode() == TaskMode.CRON || task.mode() == TaskMode.INTERVAL) {
            throw new IllegalArgumentException("task '" + task.name() + "' is a " + task.mode()
                    + " task: the scheduler fires it, it cannot be submitted; declare a DIRECT task to run it on demand");
        }
        Task<?, ?> registered = registry.find(task.name()).orElse(null);
        if (registered != null && registered != task && !registered.queue().equals(task.queue())) {
            throw new IllegalArgumentException("task '" + task.name() + "' is registered with this instance on queue '"
                    + registered.queue() + "' but submitted on queue '" + task.queue() + "': share one definition");
        }
        if (!task.limits().isEmpty() && partitions.of(task.queue()).partitioned()) {
            throw new IllegalArgumentException("task '" + task.name() + "' has rate or concurrency limits, and its queue '" + task.queue()
                    + "' is partitioned: limits are counted per partition (one Redis slot each), so they would not hold; keep"
                    + " limited tasks on a queue of one partition (binomic queue partitions " + task.queue() + " 1, once drained)");
        }
    }

    /**
     * The trace context to add to a submit's headers: the one its options name, else none when its
     * headers carry a traceparent already, else the provider's. Asked once per submit call.
     */
    private TraceContext traceFor(SubmitOptions options) {
        if (options.traceContext().isPresent()) {
            return options.traceContext().get();
        }
        if (traceContexts == null || options.headers().containsKey(TraceContext.TRACEPARENT)) {
            return null;
        }
        return traceContexts.current().orElse(null);
    }

    private Message newMessage(Task<?, ?> task, Object argument, SubmitOptions options, TraceContext trace) {
        Map<String, String> headers = options.headers();
        if (trace != null) {
            Map<String, String> traced = new HashMap<>(headers);
            traced.putAll(trace.headers());
            headers = traced;
        }
        FlowSubmits.requireNoReservedHeaders(options);
        requireArgumentFits(task, argument);
        if (headers.containsKey(Message.CODEC)) {
            throw new IllegalArgumentException("header '" + Message.CODEC + "' is reserved: submit records the payload codec"
                    + " that wrote the message there (BinomicConfig.payloadCodec); remove it from the headers");
        }
        byte[] payload = codec.encode(argument);
        int limit = config.broker().maxPayloadBytes();
        if (payload.length > limit) {
            throw new PayloadTooLargeException(task.name(), payload.length, limit);
        }
        if (headers.containsKey(Message.TRACK)) {
            throw new IllegalArgumentException("header '" + Message.TRACK + "' is reserved: it is set for tasks whose status is kept"
                    + " (Task.Builder.keepStatusFor); remove it from the headers");
        }
        int priority = io.binomic.core.internal.PriorityHeaders.priorityOf(task, options); // refuses the header among the caller's
        Map<String, String> withCodec;
        if (priority != io.binomic.api.Priority.DEFAULT) {
            withCodec = io.binomic.core.internal.PriorityHeaders.with(headers, codec.id(), task, priority);
        } else if (headers.isEmpty() && !task.isTracked()) {
            withCodec = Map.of(Message.CODEC, codec.id());
        } else {
            withCodec = new HashMap<>(headers);
            withCodec.put(Message.CODEC, codec.id());
            if (task.isTracked()) {
                withCodec.put(Message.TRACK, Long.toString(task.statusRetention().toMillis()));
            }
        }
        withCodec = io.binomic.core.internal.worker.FlowLimiter.withKeyHeader(task, argument, withCodec);
        return new Message(Uuid7.next(clock), task.name(), task.queue(), 1, clock.instant(), payload, withCodec);
    }

    /**
     * Refuses at submit what could only fail in the worker: a missing argument, or one of another
     * type (possible through raw types), would otherwise be retried to the dead-letter queue.
     */
    private static void requireArgumentFits(Task<?, ?> task, Object argument) {
        if (task.hasNoArgument()) {
            if (argument != null) {
                throw new IllegalArgumentException("task '" + task.name() + "' takes no argument, got a "
                        + argument.getClass().getName() + "; submit it with submit(task)");
            }
        } else if (argument == null) {
            throw new IllegalArgumentException("task '" + task.name() + "' takes a " + task.argumentType().getName()
                    + ", got null; pass an argument (an empty record if there is nothing to say)");
        } else if (!task.argumentType().isInstance(argument)) {
            throw new IllegalArgumentException("task '" + task.name() + "' takes a " + task.argumentType().getName()
                    + ", got a " + argument.getClass().getName());
        }
    }

    /** Starts a worker in this JVM with the configured {@link WorkerConfig}. */
    public Worker startWorker() {
        return startWorker(config.worker());
    }

    /** Starts a worker in this JVM with {@code workerConfig}. */
    public Worker startWorker(WorkerConfig workerConfig) {
        requireStarted();
        if (!prepareQueues) {
            throw new IllegalStateException("this instance was built with prepareQueues(false), for inspection only:"
                    + " build the instance that runs workers without it");
        }
        List<String> queues = workerConfig.queues().isEmpty() ? registry.queues() : workerConfig.queues();
        if (queues.isEmpty()) {
            throw new IllegalStateException("the worker has no queue to read: bind handlers or set WorkerConfig.queues");
        }
        List<String> missing = new ArrayList<>();
        for (Task<?, ?> task : registry.all()) {
            if (queues.contains(task.queue()) && !handlers.containsKey(task.name())) {
                missing.add(task.name() + " (queue " + task.queue() + ")");
            }
        }
        if (!missing.isEmpty()) {
            throw new IllegalStateException("the worker reads queues " + queues + " but has no handler for task(s) " + missing
                    + ": bind each with Binomic.builder().handle(task, handler) (or a TaskProvider), or leave its queue out of"
                    + " WorkerConfig.queues");
        }
        WorkerRuntime worker = new WorkerRuntime(workerConfig, queues, config.taskDefaults(), handlers, broker, scheduler,
                workerCodec, clock, stats, config.broker().maxPayloadBytes(), partitions);
        workers.add(worker);
        synchronized (this) {
            if (activity == null) {
                activity = io.binomic.core.internal.ActivityFlusher.start(stats, broker, clock);
            }
        }
        worker.start();
        return worker;
    }

    /** Pause, resume and drain queues and tasks, across every worker. */
    public Queues queues() {
        requireStarted();
        return queues;
    }

    /** Inspect, replay and purge dead letters. */
    public DeadLetters deadLetters() {
        requireStarted();
        return deadLetters;
    }

    /**
     * Broker-side counts of {@code queue}: ready, pending, delayed, dead letters, consumers. For a
     * partitioned queue, the sums over its partitions (consumers: the most any partition has, as
     * every worker of the queue reads all of them).
     */
    public QueueStats queueStats(String queue) {
        requireStarted();
        return queues.stats(queue);
    }

    /** Execution statistics per queue and task, from the workers of this process. */
    public List<TaskStats> taskStats() {
        return stats.snapshot();
    }

    /** The registered tasks. */
    public TaskRegistry tasks() {
        return registry;
    }

    /** The configuration. */
    public BinomicConfig config() {
        return config;
    }

    private List<String> allQueues() {
        List<String> queues = new ArrayList<>(registry.queues());
        for (String q : config.worker().queues()) {
            if (!queues.contains(q)) {
                queues.add(q);
            }
        }
        return queues;
    }

    private void requireStarted() {
        if (state != State.STARTED) {
            throw new IllegalStateException("Binomic is " + state + "; call start() first" + (state == State.CLOSED ? " on a new instance" : ""));
        }
    }

    /** Stops firing periodic tasks and every worker (each with its shutdown grace), then closes the scheduler and the broker. */
    @Override
    public synchronized void close() {
        if (state == State.CLOSED) {
            return;
        }
        state = State.CLOSED;
        ticker.close();
        jobs.close();
        for (WorkerRuntime worker : workers) {
            worker.close();
        }
        if (activity != null) {
            activity.close();
        }
        if (scheduler != null) {
            scheduler.close();
        }
        try {
            broker.close();
        } catch (BrokerException e) {
            LOG.log(Level.WARNING, "closing the broker failed: {0}", e.getMessage());
        }
    }

    /** Builds a {@link Binomic}. */
    public static final class Builder {
        private BinomicConfig config = BinomicConfig.defaults();
        private final List<Task<?, ?>> tasks = new ArrayList<>();
        private final Map<String, TaskBinding<?, ?>> handlers = new java.util.LinkedHashMap<>();
        private Broker broker;
        private PayloadCodec codec;
        private Scheduler scheduler;
        private Clock clock = Clock.systemUTC();
        private boolean prepareQueues = true;
        private io.binomic.api.spi.TraceContextProvider traceContexts;
        private boolean traceContextsGiven;

        private Builder() { }

        /** Configuration. Defaults to {@link BinomicConfig#defaults()}: embedded broker, 5 concurrent tasks. */
        public Builder config(BinomicConfig config) {
            this.config = Objects.requireNonNull(config, "config must not be null");
            return this;
        }

        /**
         * Declares a task this instance knows without running it: a CRON or INTERVAL task it fires,
         * or one whose handler another process binds (a worker of this instance refuses to start on
         * a queue with a declared task it has no handler for). Submitting needs no declaration.
         * Names must be unique.
         */
        public Builder task(Task<?, ?> task) {
            tasks.add(Objects.requireNonNull(task, "task must not be null"));
            return this;
        }

        /** Declares tasks ({@link #task(Task)}). */
        public Builder tasks(Collection<? extends Task<?, ?>> more) {
            more.forEach(this::task);
            return this;
        }

        /** Binds {@code task} to {@code handler}, for this instance's workers (and declares it). */
        public <A, R> Builder handle(Task<A, R> task, TaskHandler<A, R> handler) {
            return handle(Objects.requireNonNull(task, "task must not be null").handledBy(handler));
        }

        /** Binds {@code task}, which takes no argument, to {@code handler}, for this instance's workers (and declares it). */
        public Builder handle(Task<?, ?> task, TaskHandler.NoArgument handler) {
            return handle(Objects.requireNonNull(task, "task must not be null").handledBy(handler));
        }

        /**
         * Binds a task to its handler, for this instance's workers (and declares it).
         *
         * @throws IllegalArgumentException when a handler for the task's name is bound already
         */
        public Builder handle(TaskBinding<?, ?> binding) {
            Objects.requireNonNull(binding, "binding must not be null");
            TaskBinding<?, ?> previous = handlers.putIfAbsent(binding.task().name(), binding);
            if (previous != null) {
                throw new IllegalArgumentException("task '" + binding.task().name() + "' has two handlers bound; bind one");
            }
            if (!tasks.contains(binding.task())) {
                tasks.add(binding.task());
            }
            return this;
        }

        /** Binds every task of every {@link TaskProvider} visible to this module's ServiceLoader. */
        public Builder discoverTasks() {
            for (TaskProvider provider : ServiceLoader.load(TaskProvider.class)) {
                provider.tasks().forEach(this::handle);
            }
            return this;
        }

        /** Uses this broker instance instead of the one the URL selects. Defaults to the URL's provider. */
        public Builder broker(Broker broker) {
            this.broker = broker;
            return this;
        }

        /**
         * Uses this codec instance instead of the one {@link BinomicConfig#payloadCodec()} names
         * (for a codec that is not a registered provider, or a test double); its {@link PayloadCodec#id()}
         * is what messages record. Defaults to the provider {@code BinomicConfig.payloadCodec} names,
         * {@code json-jdk} unless set.
         */
        public Builder codec(PayloadCodec codec) {
            this.codec = codec;
            return this;
        }

        /**
         * Uses this scheduler (DELAY submissions, retries, periodic ticks) instead of the one the
         * {@link io.binomic.api.spi.SchedulerProvider} of the broker's kind creates. It must share
         * storage with the broker, since a retry is scheduled inside the broker's settle: give it
         * together with {@link #broker(Broker)}, for a broker wrapped by a test double.
         */
        public Builder scheduler(Scheduler scheduler) {
            this.scheduler = scheduler;
            return this;
        }

        /**
         * Whether {@link Binomic#start()} creates each queue's stream and consumer group in the
         * broker. Defaults to true. Tools that only look at queues (the CLI's {@code queues} and
         * {@code dlq} commands) turn it off, so that looking at a queue, or at a mistyped name,
         * creates nothing; such an instance cannot start workers.
         */
        public Builder prepareQueues(boolean prepare) {
            this.prepareQueues = prepare;
            return this;
        }

        /**
         * Where a submit without a trace context of its own takes the submitting thread's
         * ({@link io.binomic.api.spi.TraceContextProvider}); {@code null} for nowhere. Defaults to the
         * provider found by {@link ServiceLoader}, if exactly one is (several are an error), else none.
         */
        public Builder traceContextProvider(io.binomic.api.spi.TraceContextProvider provider) {
            this.traceContexts = provider;
            this.traceContextsGiven = true;
            return this;
        }

        /** Clock. Defaults to the UTC system clock. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /**
         * Builds the instance (not started).
         *
         * @throws IllegalArgumentException when two tasks share a name
         * @throws io.binomic.api.ProviderNotFoundException when no broker, or no scheduler, matches the URL
         */
        public Binomic build() {
            return new Binomic(this);
        }
    }
}

package io.binomic.core;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.spi.Message;
import io.binomic.api.PayloadTooLargeException;
import io.binomic.api.Priority;
import io.binomic.api.ProviderNotFoundException;
import io.binomic.api.QueueStats;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.TaskHandler;
import io.binomic.api.TaskRegistry;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.FlowCounts;
import io.binomic.api.spi.PayloadCodec;
import io.binomic.api.spi.RunObserver;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SchedulerProvider;
import io.binomic.api.spi.TaskProvider;
import io.binomic.api.spi.TraceContextProvider;
import io.binomic.api.spi.Workflows;
import io.binomic.core.internal.CoreAccess;
import io.binomic.core.internal.Providers;
import io.binomic.core.internal.StatsRecorder;
import io.binomic.core.internal.client.WorkflowSubmitter;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.UUID;

/**
 * A Binomic instance: submits tasks, fires periodic ones, runs workers and manages dead letters.
 * Holds no static state, but for its running workers being known JVM-wide so that a pause made by
 * any instance holds for them when it returns ({@link Queues}); {@link #close()} stops its workers
 * and releases the broker.
 *
 * {@snippet class=io.binomic.core.JavadocSnippetsTest region=binomic}
 */
public final class Binomic implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Binomic.class.getName());

    private final BinomicConfig config;
    private final TaskRegistry registry;
    private final BinomicParts parts;
    private volatile State state = State.NEW;

    private enum State { NEW, STARTED, CLOSED }

    private Binomic(Builder b) {
        this.parts = new BinomicParts(b);
        this.config = parts.config;
        this.registry = parts.registry;
    }

    static {
        CoreAccess.install(new CoreAccess.Bridge() {
            @Override
            public StatsRecorder stats(Binomic binomic) { return binomic.parts.stats; }

            @Override
            public List<String> queues(Binomic binomic) { return binomic.allQueues(); }

            @Override
            public Broker broker(Binomic binomic) { return binomic.started(binomic.parts.broker); }

            @Override
            public Scheduler scheduler(Binomic binomic) { return binomic.started(binomic.parts.scheduler); }

            @Override
            public List<OutboxMonitor> outboxes(Binomic binomic) { return List.copyOf(binomic.parts.outboxes); }

            @Override
            public void setTaskPausedAsTyped(Binomic binomic, String queue, String task, boolean paused) {
                if (paused) {
                    binomic.queues().pauseTask(queue, task, false);
                } else {
                    binomic.queues().resumeTask(queue, task, false);
                }
            }
        });
    }

    public static Builder builder() { return new Builder(); }

    /**
     * A builder for the HTTP {@link Dashboard} of this client: {@code /metrics} for Prometheus and
     * the operators' pages. Nothing listens until {@link Dashboard.Builder#start()}.
     */
    public Dashboard.Builder dashboard() { return new Dashboard.Builder(started(this)); }

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
        parts.broker.start(parts.prepareQueues ? queues : List.of());
        try {
            parts.scheduler = parts.givenScheduler != null ? parts.givenScheduler
                    : Providers.createScheduler(parts.schedulerProvider, parts.broker);
        } catch (RuntimeException e) {
            parts.broker.close();
            throw e;
        }
        state = State.STARTED;
        if (config.schedulePeriodicTasks()) {
            parts.periodic.start(registry.all());
        }
        LOG.log(Level.INFO, "Binomic started: broker {0}, {1} task(s), queues {2}",
                config.broker().redactedUrl(), registry.all().size(), queues);
        return this;
    }

    /**
     * Submits a DIRECT task (enqueued now) or a DELAY task (enqueued after its delay, durably) and
     * returns its handle. The queue is the task's. The task need not be registered with this
     * instance: a producer submits definitions it has no handler for.
     *
     * @throws IllegalArgumentException for a CRON or INTERVAL task, or one that clashes with a registered task of the same name
     * @throws PayloadTooLargeException when the encoded argument exceeds the broker's limit
     */
    public <A, R> JobHandle<R> submit(Task<A, R> task, A argument) { return submit(task, argument, Map.of()); }

    /** {@link #submit(Task, Object)} for a task without argument. */
    public <R> JobHandle<R> submit(Task<Void, R> task) { return submit(task, null, Map.of()); }

    /** {@link #submit(Task, Object)} with headers (trace context, idempotency key...). */
    public <A, R> JobHandle<R> submit(Task<A, R> task, A argument, Map<String, String> headers) {
        return submit(task, argument, SubmitOptions.builder().headers(headers).build());
    }

    /** {@link #submit(Task, Object)} with options for this one job ({@link SubmitOptions}). */
    public <A, R> JobHandle<R> submit(Task<A, R> task, A argument, SubmitOptions options) {
        Objects.requireNonNull(task, "task must not be null");
        return started(parts.submitter).submit(task, argument, options);
    }

    /** Submits one job per argument, pipelined: the fast path for producers. Returns the handles in argument order. */
    public <A, R> List<JobHandle<R>> submitAll(Task<A, R> task, Collection<? extends A> arguments) {
        return submitAll(task, arguments, SubmitOptions.NONE);
    }

    /** {@link #submitAll(Task, Collection)} with the same options for every job. */
    public <A, R> List<JobHandle<R>> submitAll(Task<A, R> task, Collection<? extends A> arguments, SubmitOptions options) {
        Objects.requireNonNull(task, "task must not be null");
        return started(parts.submitter).submitAll(task, arguments, options);
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
        return submitJson(queue, task, jsonArgument, Priority.DEFAULT);
    }

    /**
     * {@link #submitJson(String, String, String)} at {@code priority} ({@link Priority}:
     * 0 lowest to 9 highest, default 5).
     *
     * @throws IllegalArgumentException also when {@code priority} is out of range
     */
    public JobHandle<String> submitJson(String queue, String task, String jsonArgument, int priority) {
        Priority.require("priority", priority);
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
        return started(parts.submitter).submitJson(queue, task, jsonArgument, options);
    }

    /**
     * A new batch: jobs submitted atomically, with callbacks enqueued exactly once when every job
     * succeeded, every job ended, or the first was dead-lettered. See {@link BatchBuilder}.
     */
    public BatchBuilder batch() { return new BatchBuilder(started(parts.batches)); }

    /** The batch {@code id}, from any process: its status, and while it is open, more jobs and its close. */
    public BatchHandle batch(UUID id) {
        Objects.requireNonNull(id, "id must not be null");
        return new BatchHandle(started(parts.batches), id);
    }

    /**
     * Submits a workflow: its record and every job's record stored, and the jobs that depend on
     * nothing enqueued, in one atomic step; each other job is enqueued once the jobs it depends on
     * succeeded (a job with a delay that long after). See {@link Workflow}.
     *
     * @throws IllegalArgumentException for a job whose task this client cannot submit, or whose
     *     argument does not encode (what {@link Workflow.Builder#add} checks it checked already)
     * @throws UnsupportedOperationException when the broker has no workflows (naming it)
     */
    public WorkflowHandle submit(Workflow workflow) {
        Objects.requireNonNull(workflow, "workflow must not be null");
        WorkflowSubmitter w = started(parts.workflows);
        return new WorkflowHandle(w, w.submit(workflow));
    }

    /** The workflow {@code id}, from any process: its status and its cancel. */
    public WorkflowHandle workflow(UUID id) {
        Objects.requireNonNull(id, "id must not be null");
        return new WorkflowHandle(started(parts.workflows), id);
    }

    /**
     * Builds the message that {@link #submit(Task, Object, SubmitOptions)} would store for one job,
     * without storing it: its id chosen, its argument encoded with this instance's codec, its
     * headers (priority, tracking, trace context, unique claim) set. For a transactional outbox,
     * which keeps the message in the application's database and stores it with
     * {@link #submitPrepared} once committed. The delay is not part of the message: give the due time
     * to {@link #submitPrepared}.
     *
     * @throws IllegalArgumentException as submit does, and for a debounce or a partition key, which
     *         only a submit straight to the broker can honour
     */
    public <A, R> Message prepare(Task<A, R> task, A argument, SubmitOptions options) {
        Objects.requireNonNull(task, "task must not be null");
        Objects.requireNonNull(options, "options must not be null (SubmitOptions.NONE for none)");
        return started(parts.submitter).prepare(task, argument, options);
    }

    /**
     * Stores messages built by {@link #prepare}, in order, each at most once: a message stored again
     * within {@code window} of its first store (a relay that crashed after the store and before it
     * recorded it) is a duplicate, and stores nothing; a unique job, while its own claim is held.
     *
     * @param dueAt when the jobs are due; null for at once
     * @param window how long a job's id is remembered after its store
     * @return for each message, the id of the job it stands for: its own, the earlier job's for a
     *         duplicate of a unique job, null when it was stored before (nothing stored)
     */
    public List<UUID> submitPrepared(List<Message> messages, Instant dueAt, Duration window) {
        Objects.requireNonNull(messages, "messages must not be null");
        Objects.requireNonNull(window, "window must not be null");
        return started(parts.submitter).submitPrepared(messages, dueAt, window);
    }

    /**
     * The handle of job {@code id} of {@code task}, from any process, at any time while its status
     * is kept ({@link Task#statusRetention()}).
     */
    public <R> JobHandle<R> job(Task<?, R> task, UUID id) { return started(parts.lookup).job(task, id); }

    /**
     * The handle of job {@code id} of {@code queue}, for a process that does not know its task (the
     * CLI, another service): its result reads as JSON text.
     */
    public JobHandle<String> job(String queue, UUID id) { return started(parts.lookup).job(queue, id); }

    /**
     * The handle of job {@code id}, looked up on the queues this instance knows (its tasks' and its
     * worker's): the first queue that has a record of it. A job of another queue, or one whose status
     * is not kept, is {@link JobState#UNKNOWN} on the first queue; use
     * {@link #job(String, UUID)} for it.
     *
     * @throws IllegalStateException when this instance knows no queue
     */
    public JobHandle<String> job(UUID id) { return started(parts.lookup).job(allQueues(), id); }

    /** Starts a worker in this JVM with the configured {@link WorkerConfig}. */
    public Worker startWorker() { return startWorker(config.worker()); }

    /** Starts a worker in this JVM with {@code workerConfig}. */
    public Worker startWorker(WorkerConfig workerConfig) {
        requireStarted();
        if (!parts.prepareQueues) {
            throw new IllegalStateException("this instance was built with prepareQueues(false), for inspection only:"
                    + " build the instance that runs workers without it");
        }
        return parts.workers.start(workerConfig);
    }

    /** Pause, resume and drain queues and tasks, across every worker. */
    public Queues queues() { return started(parts.queues); }

    /** Inspect, replay and purge dead letters. */
    public DeadLetters deadLetters() { return started(parts.deadLetters); }

    /**
     * Broker-side counts of {@code queue}: ready, pending, delayed, dead letters, consumers. For a
     * partitioned queue, the sums over its partitions (consumers: the most any partition has, as
     * every worker of the queue reads all of them).
     */
    public QueueStats queueStats(String queue) { return started(parts.queues).stats(queue); }

    /** Execution statistics per queue and task, from the workers of this process. */
    public List<TaskStats> taskStats() { return parts.stats.snapshot(); }

    /** Stranded deliveries (their worker stopped renewing) that the workers of this process took over, per queue. */
    public Map<String, Long> reclaims() { return parts.stats.reclaims(); }

    /** The batches and workflows submitted and cancelled through this process: no broker call. */
    public FlowCounters flowCounters() { return FlowCounters.of(parts.stats.flows()); }

    /**
     * The broker-wide counts of batches by state ({@link FlowCounts}): one small broker read.
     * Empty, without a broker call, when the broker has no batches.
     */
    public Optional<FlowCounts> batchCounts() { return started(parts.broker).capability(Batches.class).map(Batches::counts); }

    /**
     * The broker-wide counts of workflows by state ({@link FlowCounts}): one small broker read.
     * Empty, without a broker call, when the broker has no workflows.
     */
    public Optional<FlowCounts> workflowCounts() { return started(parts.broker).capability(Workflows.class).map(Workflows::counts); }

    /** The workers this instance started in this JVM and that have not stopped. */
    public List<Worker> workers() { return parts.workers.running(); }

    /**
     * Adds {@code observer} beside those of the builder: it is told of every handler run the
     * workers of this instance start from now on, to its end (for a library bound after the client
     * is built, such as a metrics registry).
     */
    public void addRunObserver(RunObserver observer) { parts.runObservers.add(Objects.requireNonNull(observer, "observer must not be null")); }

    /** Stops telling {@code observer} of runs that start from now on; no-op when it was not added. */
    public void removeRunObserver(RunObserver observer) { parts.runObservers.remove(observer); }

    /** Shows {@code monitor}'s outbox on this client's {@code /metrics} and dashboard (binomic-jdbc's relay adds itself). */
    public void addOutboxMonitor(OutboxMonitor monitor) { parts.outboxes.add(Objects.requireNonNull(monitor, "monitor must not be null")); }

    /** Stops showing {@code monitor}'s outbox; no-op when it was not added. */
    public void removeOutboxMonitor(OutboxMonitor monitor) { parts.outboxes.remove(monitor); }

    /** The registered tasks. */
    public TaskRegistry tasks() { return registry; }

    /** The configuration. */
    public BinomicConfig config() { return config; }

    private List<String> allQueues() { return parts.allQueues(); }

    /** {@code value}, once this instance is started: what a method that needs the broker returns through. */
    private <T> T started(T value) {
        requireStarted();
        return value;
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
        parts.periodic.close();
        parts.jobs.close();
        parts.workers.close();
        if (parts.scheduler != null) {
            parts.scheduler.close();
        }
        try {
            parts.broker.close();
        } catch (BrokerException e) {
            LOG.log(Level.WARNING, "closing the broker failed: {0}", e.getMessage());
        }
    }

    /** Builds a {@link Binomic}. */
    public static final class Builder {
        // Read by BinomicParts, which wires the instance from them.
        BinomicConfig config = BinomicConfig.defaults();
        final List<Task<?, ?>> tasks = new ArrayList<>();
        final Map<String, TaskBinding<?, ?>> handlers = new LinkedHashMap<>();
        Broker broker;
        PayloadCodec codec;
        Scheduler scheduler;
        Clock clock = Clock.systemUTC();
        boolean prepareQueues = true;
        TraceContextProvider traceContexts;
        boolean traceContextsGiven;
        final List<RunObserver> runObservers = new ArrayList<>();
        boolean runObserversGiven;

        private Builder() { }

        /** Configuration. Defaults to {@link BinomicConfig#defaults()}: embedded broker, 5 concurrent tasks. */
        public Builder config(BinomicConfig config) { return set(() -> this.config = Objects.requireNonNull(config, "config must not be null")); }

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
            ServiceLoader.load(TaskProvider.class).forEach(provider -> provider.tasks().forEach(this::handle));
            return this;
        }

        /** Uses this broker instance instead of the one the URL selects. Defaults to the URL's provider. */
        public Builder broker(Broker broker) { return set(() -> this.broker = broker); }

        /**
         * Uses this codec instance instead of the one {@link BinomicConfig#payloadCodec()} names
         * (for a codec that is not a registered provider, or a test double); its {@link PayloadCodec#id()}
         * is what messages record. Defaults to the provider {@code BinomicConfig.payloadCodec} names,
         * {@code json-jdk} unless set.
         */
        public Builder codec(PayloadCodec codec) { return set(() -> this.codec = codec); }

        /**
         * Uses this scheduler (DELAY submissions, retries, periodic ticks) instead of the one the
         * {@link SchedulerProvider} of the broker's kind creates. It must share
         * storage with the broker, since a retry is scheduled inside the broker's settle: give it
         * together with {@link #broker(Broker)}, for a broker wrapped by a test double.
         */
        public Builder scheduler(Scheduler scheduler) { return set(() -> this.scheduler = scheduler); }

        /**
         * Whether {@link Binomic#start()} creates each queue's stream and consumer group in the
         * broker. Defaults to true. Tools that only look at queues (the CLI's {@code queues} and
         * {@code dlq} commands) turn it off, so that looking at a queue, or at a mistyped name,
         * creates nothing; such an instance cannot start workers.
         */
        public Builder prepareQueues(boolean prepare) { return set(() -> this.prepareQueues = prepare); }

        /**
         * Where a submit without a trace context of its own takes the submitting thread's
         * ({@link TraceContextProvider}); {@code null} for nowhere. Defaults to the
         * provider found by {@link ServiceLoader}, if exactly one is (several are an error), else none.
         */
        public Builder traceContextProvider(TraceContextProvider provider) {
            this.traceContexts = provider;
            this.traceContextsGiven = true;
            return this;
        }

        /**
         * Adds an observer of the workers' handler runs ({@link RunObserver}: a tracer's span around
         * each run, for example). Once one is given, those {@link ServiceLoader} finds are not used;
         * without any, every one it finds is.
         */
        public Builder runObserver(RunObserver observer) {
            this.runObservers.add(Objects.requireNonNull(observer, "observer must not be null"));
            this.runObserversGiven = true;
            return this;
        }

        /** Clock. Defaults to the UTC system clock. */
        public Builder clock(Clock clock) { return set(() -> this.clock = Objects.requireNonNull(clock, "clock must not be null")); }

        /** Runs a setter's assignment and returns this builder: each setter is then one line. */
        private Builder set(Runnable assignment) {
            assignment.run();
            return this;
        }

        /**
         * Builds the instance (not started).
         *
         * @throws IllegalArgumentException when two tasks share a name
         * @throws ProviderNotFoundException when no broker, or no scheduler, matches the URL
         */
        public Binomic build() { return new Binomic(this); }
    }
}

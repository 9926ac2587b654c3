package io.binomic.core.testing;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.TaskDefaults;
import io.binomic.api.TaskHandler;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Settlement;
import io.binomic.core.Binomic;
import io.binomic.core.internal.Providers;
import io.binomic.core.internal.StatsRecorder;
import io.binomic.core.internal.codec.WorkerCodec;
import io.binomic.core.internal.memory.MemoryBroker;
import io.binomic.core.internal.memory.MemoryScheduler;
import io.binomic.core.internal.worker.DeliveryProcessor;
import io.binomic.core.internal.worker.JobTracking;
import io.binomic.core.internal.worker.Outcome;
import io.binomic.core.internal.worker.TaskInvokers;
import io.binomic.core.internal.worker.WorkerTasks;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.random.RandomGenerator;
import java.util.stream.Stream;

/**
 * Binomic for an application's own unit tests: no broker to run, no worker threads, no sleeps.
 * The code under test submits through {@link #binomic()} as it would in production; the test then
 * asserts what was submitted ({@link #enqueued()}) and runs the jobs when it chooses.
 *
 * <ul>
 *   <li>{@link #manual()}: jobs are collected; {@link #drain()} runs every one (DELAY jobs and
 *       retries too, without waiting for their due time) until none is left.</li>
 *   <li>{@link #inline()}: each job runs inside {@code submit}, before it returns, with its retries;
 *       its handle's result is ready at once.</li>
 * </ul>
 *
 * Jobs go through the same state machine as on a worker: retries up to the attempt budget, dead
 * letters (readable through {@code binomic().deadLetters()}), job status and results.
 *
 * {@snippet class=io.binomic.core.JavadocSnippetsTest region=test-mode}
 */
public final class TestMode implements AutoCloseable {
    /** A job runs at most this many rounds of retries in one drain: a handler that always fails still ends. */
    private static final int MAX_ROUNDS = 10_000;

    private final boolean inline;
    private final MemoryBroker broker;
    private final MemoryScheduler scheduler;
    private final Binomic binomic;
    private final DeliveryProcessor processor;
    private final List<SubmittedJob> submitted = new CopyOnWriteArrayList<>();
    private final ThreadLocal<Boolean> draining = ThreadLocal.withInitial(() -> false);
    private final List<String> queues;
    /** The names of the tasks with a handler bound. */
    private final Set<String> bound;

    private TestMode(Builder b) {
        this.inline = b.inline;
        BinomicConfig config = BinomicConfig.builder().broker(BrokerConfig.builder().url("memory://test-mode").build())
                .schedulePeriodicTasks(false).taskDefaults(b.defaults).build();
        this.broker = new MemoryBroker(config.broker());
        this.scheduler = new MemoryScheduler(broker);
        Binomic.Builder builder = Binomic.builder().config(config).broker(broker).scheduler(scheduler);
        b.bindings.values().forEach(builder::handle);
        this.binomic = builder.build();
        this.bound = Set.copyOf(b.bindings.keySet());
        this.queues = b.bindings.values().stream().map(t -> t.task().queue()).distinct().toList();
        var codec = new WorkerCodec(Providers.selectCodec(config.payloadCodec()), Providers.codecsById());
        var tasks = new WorkerTasks(queues, b.defaults, Map.copyOf(b.bindings), codec, config.broker().maxPayloadBytes());
        this.processor = new DeliveryProcessor(tasks, TaskInvokers.forWorkers(), Clock.systemUTC(), new StatsRecorder(),
                RandomGenerator.getDefault(), JobTracking.through(broker, "test-mode", receipt -> false, null, tasks.maxResultBytes()));
        broker.onSubmission(this::stored);
        // What a test leaves queued is the test's business: the close need not warn that it is lost.
        broker.dropOnCloseQuietly();
        binomic.start();
    }

    /** Jobs are collected and run by {@link #drain()}. */
    public static Builder manual() { return new Builder(false); }

    /** Jobs run inside {@code submit}, before it returns. */
    public static Builder inline() { return new Builder(true); }

    /** The instance the code under test submits through. */
    public Binomic binomic() { return binomic; }

    /** Every job submitted so far, in order (those already run included). */
    public List<SubmittedJob> enqueued() { return List.copyOf(submitted); }

    /** The arguments of the jobs of {@code task} submitted so far, in order. */
    public <A> List<A> enqueued(Task<A, ?> task) {
        return submitted.stream().filter(j -> j.task().equals(task.name())).map(j -> j.argument(task)).toList();
    }

    /** Forgets what was submitted (the jobs themselves stay queued). */
    public void clearEnqueued() { submitted.clear(); }

    /**
     * Drops every job still queued, scheduled or waiting to retry, without running it, and forgets
     * what was submitted: the state a test starts from when it shares this test mode with the tests
     * before it (a cached Spring context does). Dead letters and the statuses of tracked jobs stay.
     */
    public void reset() {
        broker.settle("test-mode", fetchAll("resetting the test mode").stream().<Settlement>map(Settlement.Ack::new).toList());
        submitted.clear();
    }

    /** Runs every queued and scheduled job, and the retries they cause, until nothing is left; due times are not waited for. */
    public DrainResult drain() {
        int succeeded = 0;
        int retried = 0;
        int deadLettered = 0;
        int cancelled = 0;
        int notRun = 0;
        boolean outer = !draining.get();
        draining.set(true);
        try {
            for (int round = 0; round < MAX_ROUNDS; round++) {
                List<Delivery> deliveries = fetchAll("draining");
                if (deliveries.isEmpty()) {
                    break;
                }
                for (Delivery d : deliveries) {
                    if (d.message().isPresent() && !bound.contains(d.message().get().task())) {
                        // dead-lettered as a worker would, without its log line: the exception says it all
                        if (processor.unknownTask(d) instanceof Outcome.Settle(var dead)) {
                            broker.settle("test-mode", List.of(dead));
                        }
                        throw unbound(d);
                    }
                    Outcome outcome;
                    try {
                        outcome = process(d);
                    } catch (RuntimeException | Error e) {
                        outcome = processor.unexpectedFailure(d, e); // as a worker does: a failed attempt, not an escape
                    }
                    if (outcome instanceof Outcome.Settle(var settlement)) {
                        broker.settle("test-mode", List.of(settlement));
                        boolean skipped = settlement instanceof Settlement.Ack ack && ack.job() == null
                                && d.message().map(Message::isTracked).orElse(false);
                        switch (settlement) {
                            // A tracked job acked without a record update was not run: it had been cancelled.
                            case Settlement.Ack ack when skipped -> cancelled++;
                            case Settlement.Ack ack -> succeeded++;
                            case Settlement.RetryLater retry -> retried++;
                            case Settlement.DeadLetter dead -> deadLettered++;
                        }
                    } else {
                        notRun++;
                        broker.settle("test-mode", List.of(new Settlement.Ack(d)));
                    }
                }
            }
        } finally {
            if (outer) {
                draining.set(false);
            }
        }
        return new DrainResult(succeeded, retried, deadLettered, cancelled, notRun);
    }

    /** Every job of the known queues, scheduled ones moved in first without waiting for their due time. */
    private List<Delivery> fetchAll(String doing) {
        List<String> names = knownQueues();
        names.forEach(queue -> scheduler.moveDue(queue, Instant.now().plus(Duration.ofDays(365_000)), Integer.MAX_VALUE));
        try {
            return broker.fetch(names, "test-mode", Integer.MAX_VALUE, Duration.ZERO);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while " + doing, e);
        }
    }

    /**
     * Processes a delivery as a worker does, its handler on this thread. A job the handler submits
     * in inline mode runs inside that submit, as any inline submit does: the drain in progress is
     * set aside while the handler runs.
     */
    private Outcome process(Delivery d) {
        draining.set(false);
        try {
            return processor.process(d);
        } finally {
            draining.set(true);
        }
    }

    /** A test that forgot to bind a handler would otherwise see only a dead letter it may never look at. */
    private static IllegalStateException unbound(Delivery delivery) {
        String task = delivery.message().map(Message::task).orElse("?");
        return new IllegalStateException("task '" + task + "' was submitted but the test mode has no handler bound to it:"
                + " bind it with TestMode.manual().handle(task, handler) (or inline()), before start()");
    }

    private List<String> knownQueues() {
        return Stream.concat(queues.stream(), submitted.stream().map(SubmittedJob::queue)).distinct().toList();
    }

    private void stored(List<Message> messages, Instant due) {
        messages.forEach(m -> submitted.add(new SubmittedJob(m, due)));
        if (inline && !draining.get()) {
            drain();
        }
    }

    @Override
    public void close() { binomic.close(); }

    /**
     * What one {@link #drain()} did.
     *
     * @param succeeded runs whose handler returned
     * @param retried runs that failed and were scheduled again
     * @param deadLettered runs that ended in the dead-letter queue
     * @param cancelled jobs not run because they had been cancelled
     * @param notRun deliveries left without an outcome (a handler interrupted)
     */
    public record DrainResult(int succeeded, int retried, int deadLettered, int cancelled, int notRun) { }

    /** Builds a {@link TestMode}. */
    public static final class Builder {
        private final boolean inline;
        private final Map<String, TaskBinding<?, ?>> bindings = new LinkedHashMap<>();
        private TaskDefaults defaults = TaskDefaults.builder().build();

        private Builder(boolean inline) { this.inline = inline; }

        /** Binds {@code task} to {@code handler}. */
        public <A, R> Builder handle(Task<A, R> task, TaskHandler<A, R> handler) {
            return handle(Objects.requireNonNull(task, "task must not be null").handledBy(handler));
        }

        /** Binds {@code task}, which takes no argument, to {@code handler}. */
        public Builder handle(Task<?, ?> task, TaskHandler.NoArgument handler) {
            return handle(Objects.requireNonNull(task, "task must not be null").handledBy(handler));
        }

        /** Binds a task to its handler. */
        public Builder handle(TaskBinding<?, ?> binding) {
            if (bindings.putIfAbsent(binding.task().name(), binding) != null) {
                throw new IllegalArgumentException("task '" + binding.task().name() + "' has two handlers bound; bind one");
            }
            return this;
        }

        /**
         * The retry policy and timeout of tasks that do not declare their own. Defaults to
         * {@code TaskDefaults.builder().build()}: the production defaults (backoff is not waited for).
         */
        public Builder taskDefaults(TaskDefaults defaults) {
            this.defaults = Objects.requireNonNull(defaults, "defaults must not be null");
            return this;
        }

        /** Starts the test mode. */
        public TestMode start() { return new TestMode(this); }
    }
}

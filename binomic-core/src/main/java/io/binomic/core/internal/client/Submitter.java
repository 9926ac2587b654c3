package io.binomic.core.internal.client;

import io.binomic.api.BrokerException;
import io.binomic.api.JobHandle;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TaskMode;
import io.binomic.api.TaskRegistry;
import io.binomic.api.TraceContext;
import io.binomic.api.Uniqueness;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.UniqueClaim;
import io.binomic.api.spi.UniqueSubmits;
import io.binomic.core.internal.Capabilities;
import io.binomic.core.internal.DueTimes;
import io.binomic.core.internal.FlowSubmits;
import io.binomic.core.internal.FlowSubmits.Submitted;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Submits jobs: every typed and JSON submit of the client goes through {@link #send}, which stores
 * a job as unique or debounced, deferred or ready, on the partition it belongs to. It is separate
 * from the message's content ({@link JobMessages}) so that the choice of broker call is made once.
 */
public final class Submitter {
    private final ClientContext context;
    private final TaskRegistry registry;
    private final JobMessages messages;

    public Submitter(ClientContext context, TaskRegistry registry, JobMessages messages) {
        this.context = context;
        this.registry = registry;
        this.messages = messages;
    }

    /** One job of a DIRECT or DELAY task. */
    public <A, R> JobHandle<R> submit(Task<A, R> task, A argument, SubmitOptions options) {
        long began = System.nanoTime();
        try {
            requireSubmittable(task);
            UUID id = messages.newId();
            Message message = messages.ofArgument(task, argument, options, messages.traceFor(options, task, 1, id), id);
            return handleOf(task, sendOne(task, argument, options, message));
        } catch (BrokerException e) {
            throw context.partitions().withFailedFirstRead(task.queue(), began, e);
        }
    }

    /** One job per argument, sent in one batch; the handles in argument order. */
    public <A, R> List<JobHandle<R>> submitAll(Task<A, R> task, Collection<? extends A> arguments, SubmitOptions options) {
        long began = System.nanoTime();
        try {
            requireSubmittable(task);
            TraceContext trace = arguments.isEmpty() ? null : messages.traceFor(options, task, arguments.size(), null);
            List<Message> built = messages.ofArguments(task, arguments, options, trace);
            List<JobHandle<R>> handles = new ArrayList<>(built.size());
            for (Submitted submitted : send(task, arguments, options, built)) {
                handles.add(handleOf(task, submitted));
            }
            return handles;
        } catch (BrokerException e) {
            throw context.partitions().withFailedFirstRead(task.queue(), began, e);
        }
    }

    /**
     * One job of a task named, its argument JSON text; tracked, its result read as JSON text. When
     * this client knows the task (registered, on that queue, submittable), the JSON is decoded to its
     * argument type and the job is submitted as a typed submit of that argument would be, so what the
     * definition declares (uniqueness and its key, a debounce, a delay, a limit key) holds for it too;
     * otherwise it goes as it is and the worker decodes it.
     */
    public JobHandle<String> submitJson(String queue, String task, String jsonArgument, SubmitOptions options) {
        // Validates the names as a definition would, with the same messages; tracked like a task that returns a value.
        Task<Void, String> definition = Task.builder(task, Void.class, String.class).queue(queue).build();
        Task<?, ?> known = registry.find(task).filter(t -> t.queue().equals(queue) && t.mode() != TaskMode.CRON
                && t.mode() != TaskMode.INTERVAL).orElse(null);
        long began = System.nanoTime();
        Submitted submitted;
        try {
            submitted = known != null ? sendJsonOf(known, jsonArgument, options, definition.statusRetention())
                    : sendJson(definition, jsonArgument, options);
        } catch (BrokerException e) {
            throw context.partitions().withFailedFirstRead(queue, began, e);
        }
        return new JsonResultHandle(context.jobs().handle(submitted.queue(), submitted.id(), null, Void.class, true), submitted.merge());
    }

    private Submitted sendJson(Task<Void, String> definition, String jsonArgument, SubmitOptions options) {
        UUID id = messages.newId();
        Message message = messages.ofJson(definition, jsonArgument, options, messages.traceFor(options, definition, 1, id), id);
        return sendOne(definition, null, options, message);
    }

    private <A> Submitted sendJsonOf(Task<A, ?> task, String jsonArgument, SubmitOptions options, Duration retention) {
        requireSubmittable(task);
        A argument = messages.argumentOfJson(task, jsonArgument);
        UUID id = messages.newId();
        Message message = messages.ofArgument(task, argument, options, messages.traceFor(options, task, 1, id), id);
        if (message.trackFor().isEmpty()) {
            message = message.toBuilder().trackFor(retention).build(); // a JSON submit's handle reads the result
        }
        return sendOne(task, argument, options, message);
    }

    /**
     * The message of one job, built and validated as {@link #submit} would, not stored; unique
     * jobs carry their claim. Refuses what only a submit to the broker can decide.
     */
    public <A> Message prepare(Task<A, ?> task, A argument, SubmitOptions options) {
        requireSubmittable(task);
        if (options.debounceKey().isPresent() || (options.uniqueness().isEmpty() && task.uniqueness().isEmpty() && task.isDebounced())) {
            throw new IllegalArgumentException("task '" + task.name() + "': a debounced job replaces the one waiting in the broker,"
                    + " which a job prepared ahead (an outbox row) cannot do; submit it with Binomic.submit after the commit, or without"
                    + " a debounce key");
        }
        if (options.partitionKey().isPresent()) {
            throw new IllegalArgumentException("task '" + task.name() + "': a prepared job is stored once by its id on its queue's"
                    + " first partition, as unique jobs are, so it takes no partition key; leave SubmitOptions.partitionKey out");
        }
        UUID id = messages.newId();
        Message message = messages.ofArgument(task, argument, options, messages.traceFor(options, task, 1, id), id);
        Optional<Uniqueness> uniqueness = options.uniqueness().or(task::uniqueness);
        return uniqueness.isPresent() ? FlowSubmits.withUniqueClaim(task, argument, options, uniqueness.get(), message) : message;
    }

    /**
     * Stores prepared messages, in order, each at most once per id: a message without a unique claim
     * claims its own id for {@code window}, so a second store of it within the window is a duplicate.
     * Returns the id of the job each stands for, null for a message stored before.
     */
    public List<UUID> submitPrepared(List<Message> prepared, Instant dueAt, Duration window) {
        if (window.isNegative() || window.toMillis() < 1) {
            throw new IllegalArgumentException("the window of a prepared job's id must be at least 1 ms, got " + window);
        }
        List<Message> claimed = prepared.stream().map(m -> m.unique().isPresent() ? m
                : m.toBuilder().unique(new UniqueClaim(Uniqueness.Scope.FOR_PERIOD, window, "job:" + m.id())).build()).toList();
        UniqueSubmits unique = Capabilities.require(context.broker(), UniqueSubmits.class, "a prepared job cannot be stored once by its id");
        return unique.submitAllUnique(claimed, dueAt == null ? null : DueTimes.notBefore(dueAt));
    }

    /**
     * Stores the one job of a single submit as {@link #send} stores a batch's, with the broker's
     * single calls. Kept apart from {@code send} because every single submit takes this path: it
     * builds no lists and no streams around its one message.
     */
    private <A> Submitted sendOne(Task<A, ?> task, A argument, SubmitOptions options, Message message) {
        Instant due = FlowSubmits.dueAt(task, options, context.clock());
        if (FlowSubmits.applies(task, options)) {
            List<A> argumentList = new ArrayList<>(1); // null for a task without argument, which List.of refuses
            argumentList.add(argument);
            return FlowSubmits.submitAll(task, argumentList, options, List.of(message), due, context.broker(), context.partitions())
                    .getFirst();
        }
        Message routed = context.partitions().route(message, options.partitionKey().orElse(null));
        if (due != null) {
            context.scheduler().get().schedule(routed, due);
        } else {
            context.broker().enqueue(routed);
        }
        return new Submitted(routed.id(), routed.queue());
    }

    /**
     * Stores the jobs of one submitAll call: unique or debounced ones through {@link FlowSubmits},
     * the rest routed to their partition and enqueued, or scheduled when they have a delay, with
     * the broker's batch calls.
     */
    private <A> List<Submitted> send(Task<A, ?> task, Collection<? extends A> arguments, SubmitOptions options, List<Message> built) {
        Instant due = FlowSubmits.dueAt(task, options, context.clock());
        if (FlowSubmits.applies(task, options)) {
            return FlowSubmits.submitAll(task, List.copyOf(arguments), options, built, due, context.broker(), context.partitions());
        }
        String partitionKey = options.partitionKey().orElse(null);
        List<Message> routed = built.stream().map(message -> context.partitions().route(message, partitionKey)).toList();
        if (due != null) {
            context.scheduler().get().scheduleAll(routed, due);
        } else {
            context.broker().enqueueAll(routed);
        }
        return routed.stream().map(m -> new Submitted(m.id(), m.queue())).toList();
    }

    private <R> JobHandle<R> handleOf(Task<?, R> task, Submitted submitted) {
        return context.jobs().handle(submitted.queue(), submitted.id(), task.name(), task.resultType(), task.isTracked(),
                submitted.merged() ? submitted.merge().key() : null);
    }

    void requireSubmittable(Task<?, ?> task) {
        if (task.mode() == TaskMode.CRON || task.mode() == TaskMode.INTERVAL) {
            throw new IllegalArgumentException("task '" + task.name() + "' is " + (task.mode() == TaskMode.INTERVAL ? "an " : "a ")
                    + task.mode() + " task: the scheduler fires it, it cannot be submitted; declare a DIRECT task to run it on demand");
        }
        Task<?, ?> registered = registry.find(task.name()).orElse(null);
        if (registered != null && registered != task && !registered.queue().equals(task.queue())) {
            throw new IllegalArgumentException("task '" + task.name() + "' is registered with this instance on queue '"
                    + registered.queue() + "' but submitted on queue '" + task.queue() + "': share one definition");
        }
        if (!task.limits().isEmpty() && context.partitions().of(task.queue()).partitioned()) {
            throw new IllegalArgumentException("task '" + task.name() + "' has rate or concurrency limits, and its queue '" + task.queue()
                    + "' is partitioned: limits are counted per partition (one Redis slot each), so they would not hold; keep"
                    + " limited tasks on a queue of one partition (binomic queue partitions " + task.queue() + " 1, once drained)");
        }
    }
}

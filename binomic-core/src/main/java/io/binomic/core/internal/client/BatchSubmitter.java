package io.binomic.core.internal.client;

import io.binomic.api.BatchNotFoundException;
import io.binomic.api.BatchStatus;
import io.binomic.api.BrokerException;
import io.binomic.api.JobHandle;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.NewBatch;
import io.binomic.core.internal.Capabilities;
import io.binomic.core.internal.FlowStats;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * Builds the messages of batches and hands batches to the broker's {@link Batches}: the client's
 * side of {@code Binomic.batch()}. The jobs of a batch are tracked (their records let a cancel reach
 * them, and tell the broker a job the worker did not run was cancelled).
 */
public final class BatchSubmitter {
    private static final System.Logger LOG = System.getLogger(BatchSubmitter.class.getName());
    /**
     * How long what one read of a callback queue's consumers said is taken as still true: a client
     * that submits batch after batch to the same callback queues reads each once in that time, not
     * once per submit. A worker that starts (or the last that stops) within it is seen that late.
     */
    static final Duration CONSUMERS_FRESH = Duration.ofSeconds(30);
    /**
     * The longest a submit that succeeded waits for the reads of its queues' consumers, all of them,
     * each sent once ({@code Broker.statsOnce}): only a warning hangs on them, not worth a broker's
     * retries. A queue whose read finds the bound spent is not read, and not warned of, this time.
     */
    static final Duration CONSUMERS_READ_BOUND = Duration.ofSeconds(1);
    private final ClientContext context;
    /** What the last read of each callback queue's consumers said, and when (the client clock's millis). */
    private final Map<String, ConsumersRead> consumersRead = new ConcurrentHashMap<>();
    private final Predicate<String> readHere;
    private final JobMessages messages;
    private final Submitter submitter;
    private final FlowStats stats;
    /**
     * What the warnings of an unread queue add on the embedded broker, empty on any other: a producer built with
     * {@code Binomic.builder()} alone is on {@code memory://}, whose queues no worker of another process reads,
     * while the workers it meant to reach read a Redis.
     */
    private final String embeddedNote;

    private record ConsumersRead(boolean none, long atMillis) { }

    /**
     * @param readHere whether a worker this instance started reads a queue: a worker becomes a consumer
     *                 the broker counts only at its first fetch, some time after its start returned
     */
    public BatchSubmitter(ClientContext context, JobMessages messages, Submitter submitter, FlowStats stats, Predicate<String> readHere,
                          String brokerUrl) {
        this.context = context;
        this.embeddedNote = brokerUrl.startsWith("memory:") ? "; this client's broker is memory://, embedded in this JVM"
                + " (Binomic.builder() without a broker URL): no worker of another process reads it; for a Redis, build the"
                + " client with BinomicConfig.builder().brokerUrl(...)" : "";
        this.readHere = readHere;
        this.stats = stats;
        this.messages = messages;
        this.submitter = submitter;
    }

    /** A new batch id. */
    public UUID newId() { return messages.newId(); }

    /**
     * The message of one job of batch {@code batch}: tracked for the task's retention, or for
     * {@code retention} when the task keeps no status. On its task's queue: {@link #submit} and
     * {@link #add} route it to its partition.
     */
    public Message job(UUID batch, Task<?, ?> task, Object argument, SubmitOptions options, Duration retention) {
        requireBatchable(task, options, "add");
        UUID id = messages.newId();
        Message m = messages.ofArgument(task, argument, options, messages.traceFor(options, task, 1, id), id);
        return m.toBuilder().batch(batch).trackFor(m.trackFor().orElse(retention)).build();
    }

    /** The message of a callback of batch {@code batch}, on its task's queue ({@link #submit} routes it). */
    public Message callback(UUID batch, BatchStatus.Callback kind, Task<?, ?> task, Object argument) {
        String method = switch (kind) {
            case SUCCESS -> "onSuccess";
            case COMPLETE -> "onComplete";
            case DEATH -> "onDeath";
        };
        requireBatchable(task, SubmitOptions.NONE, method);
        UUID id = messages.newId();
        Message m = messages.ofArgument(task, argument, SubmitOptions.NONE, messages.traceFor(SubmitOptions.NONE, task, 1, id), id);
        return m.toBuilder().batchCallback(batch).build();
    }

    private void requireBatchable(Task<?, ?> task, SubmitOptions options, String method) {
        submitter.requireSubmittable(task);
        String setting = options.delay().isPresent() ? "a delay (SubmitOptions.delay)"
                : options.uniqueness().isPresent() ? "a unique key (SubmitOptions.unique)"
                : task.uniqueness().isPresent() ? "a task that is unique (Task.Builder.unique)"
                : options.debounceKey().isPresent() ? "a debounce key (SubmitOptions.debounce)"
                : task.isDebounced() ? "a task that is debounced (Task.Builder.debounce)"
                : options.partitionKey().isPresent() ? "a partition key (SubmitOptions.partitionKey)" : null;
        if (setting != null) {
            String fix = setting.contains("Task.Builder") ? "use a task without it for this job"
                    : "leave it out of this job's options";
            throw new IllegalArgumentException("batch " + method + "(" + task.name() + ", ...): " + setting + " cannot be part of"
                    + " a batch: a batch's jobs and callbacks are enqueued at once, each exactly once; " + fix
                    + ", or submit such a job from a job of the batch");
        }
    }

    /** Submits {@code unrouted} (its jobs and callbacks on their tasks' queues), each routed to its partition. */
    public void submit(NewBatch unrouted, List<Message> unroutedJobs) {
        Map<BatchStatus.Callback, Message> callbacks = new LinkedHashMap<>();
        long began = System.nanoTime();
        List<Message> jobs = routed(unroutedJobs, unrouted.callbacks().values());
        unrouted.callbacks().forEach((kind, m) -> callbacks.put(kind, context.partitions().route(m, null)));
        NewBatch batch = new NewBatch(unrouted.id(), unrouted.open(), unrouted.retention(), callbacks);
        try {
            batches().submitBatch(batch, jobs);
        } catch (BrokerException e) {
            throw context.partitions().withFailedFirstRead(queues(unroutedJobs, unrouted.callbacks().values()), began, e);
        }
        stats.batchSubmitted();
        long readsDeadline = System.nanoTime() + CONSUMERS_READ_BOUND.toNanos();
        warnOfUnreadJobQueues(batch.id(), jobs, readsDeadline);
        warnOfUnreadCallbackQueues(batch, readsDeadline);
    }

    /**
     * Logs a warning for each queue of {@code jobs} that has no consumer: its jobs wait there, and the
     * batch does not complete, until a worker of that queue starts (a mistyped queue would hold it silently).
     */
    private void warnOfUnreadJobQueues(UUID batch, List<Message> jobs, long readsDeadline) {
        if (!LOG.isLoggable(Level.WARNING)) {
            return;
        }
        Map<String, Set<String>> tasksByQueue = new LinkedHashMap<>();
        jobs.forEach(m -> tasksByQueue.computeIfAbsent(m.queue(), q -> new LinkedHashSet<>()).add(m.task()));
        tasksByQueue.forEach((queue, tasks) -> {
            if (hasNoConsumer(queue, readsDeadline)) {
                LOG.log(Level.WARNING, "batch {0}: its jobs of task(s) {1} go to queue ''{2}'', which no worker reads (it has no"
                        + " consumer): they wait there, and the batch does not complete, until a worker of that queue starts{3}", batch,
                        String.join(", ", tasks), queue, embeddedNote);
            }
        });
    }

    /**
     * Logs a warning for each callback whose queue has no consumer: no worker reads it now (none
     * ever did, or those that did are gone), so the callback would wait there. Not refused: the
     * workers of that queue may start later, and then run it.
     */
    private void warnOfUnreadCallbackQueues(NewBatch batch, long readsDeadline) {
        batch.callbacks().forEach((kind, callback) -> {
            if (LOG.isLoggable(Level.WARNING) && hasNoConsumer(callback.queue(), readsDeadline)) {
                String method = switch (kind) {
                    case SUCCESS -> "onSuccess";
                    case COMPLETE -> "onComplete";
                    case DEATH -> "onDeath";
                };
                LOG.log(Level.WARNING, "batch {0}: its {1} callback (task {2}) goes to queue ''{3}'', which no worker reads (it has"
                        + " no consumer): the callback waits there until a worker of that queue starts{4}", batch.id(),
                        method, callback.task(), callback.queue(), embeddedNote);
            }
        });
    }

    /**
     * Whether no worker reads {@code queue}, as a read within {@link #CONSUMERS_FRESH} said; false
     * when that cannot be read in one try by {@code readsDeadline} ({@link System#nanoTime()}, the
     * end of the submit's {@link #CONSUMERS_READ_BOUND}): a producer whose ACL user may not read a
     * queue's groups, Redis slow, frozen or away;
     * the batch is submitted, and a warning is not worth failing the submit that succeeded. A failed
     * read is remembered as well, so that such a producer does not pay a failing round trip per submit.
     */
    private boolean hasNoConsumer(String queue, long readsDeadline) {
        if (readHere.test(queue)) {
            return false;
        }
        long now = context.clock().millis();
        ConsumersRead last = consumersRead.get(queue);
        if (last != null && now - last.atMillis() >= 0 && now - last.atMillis() < CONSUMERS_FRESH.toMillis()) {
            return last.none();
        }
        long left = readsDeadline - System.nanoTime();
        if (left <= 0) {
            return false;
        }
        boolean none;
        try {
            none = context.broker().statsOnce(queue, Duration.ofNanos(left)).consumers() == 0;
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "could not read the consumers of queue " + queue + " to check a batch's queue", e);
            none = false;
        }
        consumersRead.put(queue, new ConsumersRead(none, now));
        return none;
    }

    /**
     * {@code jobs} routed to their partitions, after one read of the partitions of their queues and
     * {@code alsoRead}'s: a submit waits for at most one read before its write (the partitions' own
     * refresh period keeps the routing of the rest from reading them again).
     */
    private List<Message> routed(List<Message> jobs, Collection<Message> alsoRead) {
        context.partitions().of(queues(jobs, alsoRead));
        return jobs.stream().map(m -> context.partitions().route(m, null)).toList();
    }

    private static List<String> queues(List<Message> jobs, Collection<Message> alsoRead) {
        return Stream.concat(jobs.stream(), alsoRead.stream()).map(Message::queue).distinct().toList();
    }

    /**
     * Adds jobs (on their tasks' queues, routed here) to an open batch; refuses a closed one
     * ({@link IllegalStateException}) and an unknown one ({@link BatchNotFoundException}). Which of
     * the two is read after the broker refused: a refusal costs a read, an add does not.
     */
    public void add(UUID batch, List<Message> unroutedJobs) {
        long began = System.nanoTime();
        List<Message> jobs = routed(unroutedJobs, List.of());
        boolean added;
        try {
            added = batches().addToBatch(batch, jobs);
        } catch (BrokerException e) {
            throw context.partitions().withFailedFirstRead(queues(unroutedJobs, List.of()), began, e);
        }
        if (!added) {
            BatchStatus closed = batches().readBatch(batch).orElseThrow(() -> notFound(batch, "add a job to it"));
            throw new IllegalStateException("batch " + batch + " is closed (" + closed.state() + "): jobs are added only to a"
                    + " batch submitted with keepOpen() and not closed yet; add them before its close()");
        }
        warnOfUnreadJobQueues(batch, jobs, System.nanoTime() + CONSUMERS_READ_BOUND.toNanos());
    }

    /** Closes a batch: true when it was open; a {@link BatchNotFoundException} when there is no such batch. */
    public boolean close(UUID batch) {
        boolean wasOpen = status(batch).map(s -> s.state() == BatchStatus.State.OPEN).orElse(false);
        if (!batches().closeBatch(batch)) {
            throw notFound(batch, "close it");
        }
        return wasOpen;
    }

    private static BatchNotFoundException notFound(UUID batch, String what) {
        return new BatchNotFoundException(batch, "no batch " + batch + ": a wrong id, or a batch past its retention"
                + " (BatchBuilder.retention, one day unless set), so nothing can " + what + "; its status() is empty and"
                + " its cancel() returns NOT_FOUND");
    }

    public Optional<BatchStatus> status(UUID batch) { return batches().readBatch(batch); }

    /**
     * Cancels a batch: closed, marked cancelled, and each job that has not ended cancelled as a job
     * cancel does (a queued one never runs, a running one is interrupted). What it did, as a job
     * cancel (and a workflow's) says it: NOT_FOUND for no such batch; CANCEL_REQUESTED when a job of
     * it was running (its worker interrupts it); CANCELLED when it closed or marked the batch or
     * stopped a queued job; else ALREADY_ENDED (every job had ended and the batch was closed, or it
     * was cancelled already and each job ended: nothing changed).
     */
    public JobHandle.CancelOutcome cancel(UUID batch) {
        Batches b = batches();
        BatchStatus before = b.readBatch(batch).orElse(null);
        if (before == null) {
            return JobHandle.CancelOutcome.NOT_FOUND;
        }
        if (!before.open() && before.pending() == 0) {
            return JobHandle.CancelOutcome.ALREADY_ENDED;
        }
        Map<UUID, String> unfinished = b.cancelBatch(batch);
        boolean changed = !before.cancelRequested();
        if (changed && unfinished.isEmpty()) {
            // Its last job may have ended between the read and the cancel: a batch that ended first is left
            // as it ended (not marked cancelled), and this cancel changed nothing.
            Optional<BatchStatus> after = b.readBatch(batch);
            if (after.isEmpty()) {
                return JobHandle.CancelOutcome.NOT_FOUND;
            }
            changed = after.get().cancelRequested();
        }
        JobStore store = Capabilities.require(context.broker(), JobStore.class, "the jobs of a batch cannot be cancelled");
        JobHandle.CancelOutcome outcome = FlowJobCancels.cancelEach(store, unfinished, context.clock().instant())
                .outcome(changed, before.cancelRequested());
        if (outcome != JobHandle.CancelOutcome.ALREADY_ENDED && !before.cancelRequested()) {
            stats.batchCancelled();
        }
        return outcome;
    }

    private Batches batches() {
        return Capabilities.require(context.broker(), Batches.class, "batches are not supported; use a memory://, a redis://"
                + " or a redis+cluster:// broker");
    }
}

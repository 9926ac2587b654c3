package io.binomic.core.internal.worker;

import io.binomic.api.DeadLetterReason;
import io.binomic.api.PayloadDecodeException;
import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.BatchStatus;
import io.binomic.api.BrokerException;
import io.binomic.api.TaskContext;
import io.binomic.api.TaskDefaults;
import io.binomic.api.TaskHandler;
import io.binomic.api.TaskNotFoundException;
import io.binomic.api.TraceContext;
import io.binomic.api.internal.CurrentTask;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.PayloadCodec;
import io.binomic.api.spi.QueuePartitions;
import io.binomic.api.spi.RunObserver;
import io.binomic.api.spi.RunObserver.RunOutcome;
import io.binomic.api.spi.Settlement;
import io.binomic.core.internal.StatsRecorder;
import io.binomic.core.internal.codec.WorkerCodec;
import io.binomic.core.internal.jobs.JobRecordFormat;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.concurrent.atomic.LongAdder;
import java.util.random.RandomGenerator;

/**
 * The delivery state machine (DESIGN.md section 5), in one place for every broker: runs one
 * delivery and decides how it ends, as an {@link Outcome} value. It never talks to the broker:
 * the worker's {@link Settler} records every outcome, fenced and in batches, so there is one path
 * for acks, retries and dead letters alike. What each end other than a success settles with is
 * built by {@link RunSettlements}.
 *
 * <table>
 *   <caption>Outcomes</caption>
 *   <tr><td>handler returns</td><td>ack</td></tr>
 *   <tr><td>retryable failure or timeout</td><td>attempt &lt; max: retry later, atomically with the ack; else dead-letter MAX_ATTEMPTS</td></tr>
 *   <tr><td>non-retryable failure</td><td>dead-letter NON_RETRYABLE</td></tr>
 *   <tr><td>handler returns a result the codec cannot encode (tracked job)</td><td>dead-letter NON_RETRYABLE</td></tr>
 *   <tr><td>undecodable entry or payload</td><td>dead-letter DECODE_ERROR</td></tr>
 *   <tr><td>unknown task</td><td>dead-letter TASK_NOT_FOUND</td></tr>
 *   <tr><td>stale (if configured)</td><td>not executed; the retry path</td></tr>
 *   <tr><td>attempt already past max (stranded, reclaimed)</td><td>dead-letter MAX_ATTEMPTS, not executed</td></tr>
 *   <tr><td>tracked job whose start mark the broker did not confirm</td><td>not executed; put back, attempt unchanged; after
 *   {@value StartMarks#TRIES} such tries in a row here, a failed attempt (the retry path)</td></tr>
 *   <tr><td>start a rate limit admitted, reaching the handler too late (held up past the worker's allowance)</td><td>not executed;
 *   put back due now, attempt unchanged, to be admitted again</td></tr>
 *   <tr><td>cancelled (worker stopping, past its grace)</td><td>put back due now, attempt unchanged</td></tr>
 *   <tr><td>handler ended by the {@code BrokerException} of a read it made through its context (dependency results, batch
 *   status)</td><td>put back, attempt unchanged, due shortly (held until the broker answers); after
 *   {@value StartMarks#TRIES} such runs in a row here, a failed attempt (the retry path)</td></tr>
 *   <tr><td>interrupted because another worker took it over (its lease lapsed)</td><td>nothing: left to that worker</td></tr>
 * </table>
 */
public final class DeliveryProcessor {
    private static final System.Logger LOG = System.getLogger(DeliveryProcessor.class.getName());
    /** The error class of a job whose result the codec could not encode (the codec's own exception is in the message). */
    public static final String RESULT_NOT_ENCODABLE = "io.binomic.ResultNotEncodable";
    /** The error class of an attempt whose processing threw outside the handler (the exception is in the message). */
    public static final String UNEXPECTED_FAILURE = "io.binomic.UnexpectedFailure";
    /** The error class of an attempt whose start mark failed {@value StartMarks#TRIES} times in a row. */
    public static final String START_MARK_FAILED = "io.binomic.StartMarkFailed";

    private final Map<String, TaskBinding<?, ?>> handlers;
    private final JobTracking tracking;
    private final TaskDefaults defaults;
    private final WorkerCodec codec;
    private final TaskInvoker invoker;
    private final Clock clock;
    private final StatsRecorder stats;
    private final RandomGenerator random;
    /** The settlement each end of a run gets. */
    private final RunSettlements settlements;
    /** The RUNNING marks of tracked jobs, and those the broker did not confirm. */
    private final StartMarks startMarks;
    /** The runs ended by a broker read made for their handlers, put back uncounted. */
    private final HandlerReads reads;
    final LongAdder succeeded = new LongAdder();
    final LongAdder failed = new LongAdder();
    final LongAdder retried = new LongAdder();
    final LongAdder deadLettered = new LongAdder();
    /** Told of each handler run; null for none. Set before the worker's threads start, read by them. */
    private RunObservers observers;

    /** Runs the handlers of {@code tasks} (its queues and result limit are the worker's and {@code tracking}'s business). */
    public DeliveryProcessor(WorkerTasks tasks, TaskInvoker invoker, Clock clock, StatsRecorder stats, RandomGenerator random,
                             JobTracking tracking) {
        this.handlers = Map.copyOf(tasks.handlers());
        this.tracking = tracking;
        this.defaults = tasks.defaults();
        this.codec = WorkerCodec.of(tasks.codec());
        this.invoker = invoker;
        this.clock = clock;
        this.stats = stats;
        this.random = random;
        this.settlements = new RunSettlements(tracking, defaults, clock, stats, random, codec.id(), retried, deadLettered);
        this.startMarks = new StartMarks(tracking, clock, settlements, failed);
        this.reads = new HandlerReads(clock, settlements, failed);
    }

    /** Tells {@code observers} (null for nobody) of each handler run from now on; called before the worker starts. */
    public DeliveryProcessor observedBy(RunObservers observers) {
        this.observers = observers;
        return this;
    }

    private static TaskNotFoundException taskNotFound(Message message) {
        return new TaskNotFoundException(message.task(), "bind its handler in the worker (Binomic.builder().handle(task, handler), or a TaskProvider)");
    }

    /**
     * The dead letter ({@code TASK_NOT_FOUND}) of a delivery whose task has no handler here, not
     * logged: for a caller that reports it its own way.
     */
    public Outcome unknownTask(Delivery delivery) {
        Message message = delivery.message().orElseThrow();
        var error = taskNotFound(message);
        return settlements.deadLetter(delivery, message.task(), null, DeadLetterReason.TASK_NOT_FOUND, error.getClass().getName(),
                error.getMessage(), "");
    }

    /** Runs the state machine for one delivery. Never throws for a task's or a payload's fault. */
    public Outcome process(Delivery delivery) {
        if (delivery.decodeProblem().isPresent()) {
            String problem = delivery.decodeProblem().get();
            LOG.log(Level.ERROR, "dead-lettering undecodable entry {0} of queue {1}: {2}", delivery.receipt(), delivery.queue(), problem);
            return settlements.deadLetter(delivery, "?", null, DeadLetterReason.DECODE_ERROR, PayloadDecodeException.class.getName(), problem, "");
        }
        Message message = delivery.message().orElseThrow();
        TaskBinding<?, ?> binding = handlers.get(message.task());
        if (binding == null) {
            LOG.log(Level.ERROR, "dead-lettering message {0}: {1}", message.id(), taskNotFound(message).getMessage());
            return unknownTask(delivery);
        }
        Task<?, ?> task = binding.task();
        int attempt = delivery.attempt();
        int maxAttempts = defaults.maxAttemptsOf(task);
        if (attempt > maxAttempts && delivery.deliveryCount() == 1) {
            // Not a lease story: the message was queued as an attempt beyond today's budget
            // (maxAttempts lowered since it was retried, or an entry written by another tool).
            String why = "queued as attempt " + attempt + " but task '" + task.name() + "' allows " + maxAttempts
                    + " (maxAttempts lowered since it was retried, or the entry was written by another tool);"
                    + " replay it from the dead-letter queue to run it again as attempt 1";
            LOG.log(Level.ERROR, "dead-lettering message {0}: {1}", message.id(), why);
            return settlements.deadLetter(delivery, task.name(), null, DeadLetterReason.MAX_ATTEMPTS, "io.binomic.AttemptBudgetSpent", why, "");
        }
        if (attempt > maxAttempts) {
            LOG.log(Level.ERROR, "dead-lettering message {0} of task {1}: reclaimed as attempt {2} of {3} (its workers stopped holding it)",
                    message.id(), task.name(), attempt, maxAttempts);
            return settlements.deadLetter(delivery, task.name(), null, DeadLetterReason.MAX_ATTEMPTS, "io.binomic.LeaseExpired",
                    "delivered " + delivery.deliveryCount() + " times without an outcome; attempt budget spent", "");
        }
        var staleAfter = defaults.staleAfter();
        Instant now = staleAfter.isPresent() ? clock.instant() : null; // no clock read per task when staleAfter is off
        if (now != null && Duration.between(message.enqueuedAt(), now).compareTo(staleAfter.get()) > 0) {
            failed.increment();
            Run stale = new Run(delivery, message, binding, attempt, maxAttempts, null);
            stale.started = now;
            return settlements.failure(stale, "io.binomic.Stale",
                    "waited " + Duration.between(message.enqueuedAt(), now) + " in the queue, over staleAfter " + staleAfter.get(), "");
        }
        Object argument;
        try {
            argument = task.hasNoArgument() ? null : codec.decode(message, task.argumentType());
        } catch (PayloadDecodeException | IllegalArgumentException e) {
            LOG.log(Level.ERROR, "dead-lettering message {0} of task {1}: payload does not decode as {2}: {3}",
                    message.id(), task.name(), task.argumentType().getName(), e.getMessage());
            return settlements.deadLetter(delivery, task.name(), null, DeadLetterReason.DECODE_ERROR, e.getClass().getName(), e.getMessage(),
                    RunSettlements.stackHead(e));
        }
        Run run = new Run(delivery, message, binding, attempt, maxAttempts, argument);
        if (message.isTracked()) {
            Outcome notRun = startMarks.start(run);
            if (notRun != null) {
                return notRun;
            }
        }
        if (!tracking.stillOursToRun(delivery)) {
            // Last, after every broker call on its way to the handler: one caught by an outage longer than the lease lands late.
            return new Outcome.LeavePending("taken over by another worker before its handler was called");
        }
        if (tracking.lateForItsStart(delivery)) {
            return givenBack(run);
        }
        return execute(run);
    }

    /**
     * The outcome of a delivery that reached its handler too long after the start a rate limit
     * admitted it for (its start mark held up by an outage, its JVM stalled): put back, due now, its
     * attempt unchanged, to be admitted again. Run on that old admission, it would start together
     * with every start held up with it, on top of those the limit admits on time. A tracked job's
     * record, marked running, says it is scheduled again.
     */
    private Outcome givenBack(Run run) {
        Instant now = clock.instant();
        // marked as admitted by its rate limits: it takes the next start free, not a turn behind the jobs that came after it
        Message next = (run.message.attempt() == run.attempt ? run.message
                : run.message.withAttempt(run.attempt, run.message.enqueuedAt())).withRateAdmitted();
        JobUpdate job = run.tracked() ? JobRecordFormat.givenBack(run.message, run.delivery.queue(), now) : null;
        return new Outcome.Settle(new Settlement.RetryLater(run.delivery, next, now, job));
    }

    /**
     * One execution, and what its job record needs to know about it. It is also what the invoker
     * calls (the handler with this context bound): one object per execution, not three lambdas.
     */
    final class Run implements TaskContext, Callable<Object> {
        private static final AtomicReferenceFieldUpdater<Run, JobUpdate> PENDING_PROGRESS =
                AtomicReferenceFieldUpdater.newUpdater(Run.class, JobUpdate.class,
                        "pendingProgress");
        final Delivery delivery;
        final Message message;
        final TaskBinding<?, ?> binding;
        final int attempt;
        final int maxAttempts;
        private final Object argument;
        /** When it started; read from the clock only when a job record or a failure needs it. */
        Instant started;
        private long lastProgressWrite;
        private volatile JobUpdate pendingProgress;
        /** The observers' view of this run; null when nobody observes. */
        RunObserver.Run observed;
        /** What the handler threw; read once its thread has been joined. */
        volatile Throwable thrown;
        /** Set when the run overran its timeout: what the observers are told it failed with. */
        Throwable timedOut;
        /** Set when its submitter cancelled it while it ran. */
        boolean cancelled;
        /**
         * Set when it was put back with its attempt unchanged: the worker's stop cut it off after its grace,
         * or a broker read made for its handler failed.
         */
        boolean attemptNotSpent;
        /** The last broker read made for the handler through this context that failed; null when none did. */
        volatile BrokerException readFailed;

        Run(Delivery delivery, Message message, TaskBinding<?, ?> binding, int attempt, int maxAttempts, Object argument) {
            this.delivery = delivery;
            this.message = message;
            this.binding = binding;
            this.attempt = attempt;
            this.maxAttempts = maxAttempts;
            this.argument = argument;
        }

        /** The handler, with this context bound (on the handler's own thread, so every invoker sees it). */
        @Override
        public Object call() throws Exception {
            if (observed == null) {
                return CurrentTask.callWith(this, this::invokeHandler);
            }
            try {
                return CurrentTask.callWith(this, this::invokeHandler);
            } catch (Exception | Error e) {
                thrown = e;
                throw e;
            }
        }

        private Object invokeHandler() throws Exception {
            @SuppressWarnings("unchecked")
            var handler = (TaskHandler<Object, ?>) binding.handler();
            return handler.handle(argument);
        }

        /** When it started, read now if nothing needed it before (an untracked run that failed). */
        Instant started() {
            if (started == null) {
                started = clock.instant();
            }
            return started;
        }

        boolean tracked() { return message.isTracked(); }

        @Override
        public UUID messageId() { return message.id(); }

        @Override
        public String task() { return message.task(); }

        @Override
        public String queue() {
            // the logical queue: a handler of a partitioned queue sees the queue its task names
            return QueuePartitions.logical(delivery.queue());
        }

        @Override
        public int attempt() { return attempt; }

        @Override
        public int maxAttempts() { return maxAttempts; }

        @Override
        public Instant enqueuedAt() { return message.enqueuedAt(); }

        /** The envelope's reserved headers beside the submitter's, as they travel. */
        @Override
        public Map<String, String> headers() { return message.wireHeaders(); }

        @Override
        public Optional<TraceContext> traceContext() { return message.traceContext(); }

        @Override
        public Optional<UUID> batchId() { return Optional.ofNullable(message.batch()).or(message::batchCallback); }

        @Override
        public Optional<BatchStatus> batch() {
            Optional<UUID> id = batchId();
            if (id.isEmpty()) {
                return Optional.empty();
            }
            try {
                return tracking.batch(id.get());
            } catch (BrokerException e) {
                readFailed = e;
                throw e;
            }
        }

        @Override
        public Optional<UUID> workflowId() { return Optional.ofNullable(message.workflow()); }

        @Override
        public <R> Optional<R> dependency(String name, Class<R> type) {
            try {
                return DependencyResults.read(tracking, codec, message, name, type);
            } catch (BrokerException e) {
                readFailed = e;
                throw e;
            }
        }

        @Override
        public void progress(int percent, String note) {
            if (percent < 0 || percent > 100) {
                throw new IllegalArgumentException("progress percent must be 0..100, was " + percent);
            }
            if (!tracked()) {
                return;
            }
            long now = System.nanoTime();
            // At most four writes a second: a handler may report in a tight loop.
            if (percent < 100 && lastProgressWrite != 0 && now - lastProgressWrite < 250_000_000L) {
                return;
            }
            lastProgressWrite = now;
            // Written off the handler's thread, latest report first: a slow or unreachable broker
            // must not hold the handler up (nor eat its timeout); a report it cannot take is dropped.
            if (PENDING_PROGRESS.getAndSet(this, JobRecordFormat.progress(message, delivery.queue(), percent, note == null ? "" : note)) == null) {
                Thread.ofVirtual().name("binomic-progress").start(this::writeProgress);
            }
        }

        private void writeProgress() {
            for (var update = pendingProgress; update != null; update = pendingProgress) {
                try {
                    tracking.progress(update);
                } catch (RuntimeException e) {
                    LOG.log(Level.DEBUG, "progress of job {0} not recorded: {1}", message.id(), e.getMessage());
                }
                if (PENDING_PROGRESS.compareAndSet(this, update, null)) {
                    return;
                }
            }
        }

        @Override
        public String toString() {
            return "TaskContext[" + message.id() + ", " + message.task() + ", attempt " + attempt + "/" + maxAttempts + "]";
        }
    }

    private Outcome execute(Run run) {
        run.observed = observers == null ? null : observers.started(run);
        Outcome outcome = null;
        try {
            outcome = executeRun(run);
            if (!run.attemptNotSpent) {
                reads.ended(run);
            }
            return outcome;
        } finally {
            if (run.observed != null) {
                observed(run, outcome);
            }
        }
    }

    /** Tells the observers how a run ended; a null outcome is a run whose processing threw (it is retried). */
    private static void observed(Run run, Outcome outcome) {
        RunOutcome ended = switch (outcome) {
            case null -> RunOutcome.RETRYING;
            case Outcome.LeavePending _ -> RunOutcome.LEFT_PENDING;
            case Outcome.Settle(Settlement.RetryLater _) when run.attemptNotSpent -> RunOutcome.LEFT_PENDING;
            case Outcome.Settle(Settlement.RetryLater _) -> RunOutcome.RETRYING;
            case Outcome.Settle(Settlement.DeadLetter _) -> RunOutcome.DEAD_LETTERED;
            case Outcome.Settle _ when run.cancelled -> RunOutcome.CANCELLED;
            case Outcome.Settle _ -> RunOutcome.SUCCEEDED;
        };
        Throwable failure = run.timedOut != null ? run.timedOut : ended == RunOutcome.SUCCEEDED ? null : run.thrown;
        run.observed.ended(ended, Optional.ofNullable(failure));
    }

    /**
     * The handler under its timeout, the observers' {@code enter} and its undo around it on this
     * same thread (the invoker runs the handler on the caller's thread), outside the timeout: the
     * timeout is the handler's own run time, not an observer's (a tracer starting a span, a slow
     * exporter on a loaded machine).
     */
    private Object invokeObserved(Run run, Duration timeout) throws TimeoutException, ExecutionException, InterruptedException {
        if (run.observed == null || Thread.currentThread().isInterrupted()) {
            return invoker.invoke(run, timeout); // interrupted, it refuses to call the handler: nothing to enter
        }
        Runnable exit = run.observed.enter();
        try {
            return invoker.invoke(run, timeout);
        } finally {
            exit.run();
        }
    }

    private Outcome executeRun(Run run) {
        Delivery delivery = run.delivery;
        Task<?, ?> task = run.binding.task();
        int attempt = run.attempt;
        Message message = run.message;
        if (run.tracked()) {
            run.started(); // its job record says when it started
        }
        Duration timeout = defaults.timeoutOf(task);
        TaskExecutionEvent event = new TaskExecutionEvent();
        event.begin();
        if (attempt == 1 && message.batchCallback().isPresent()) {
            // The broker enqueued it in the step that ended its batch: its wait is the callback's lag.
            stats.flows().callbackStarted(delivery.queue(), task.name(), Duration.between(message.enqueuedAt(), clock.instant()));
        }
        long start = System.nanoTime();
        String outcome = "succeeded";
        try {
            Object result;
            if (run.tracked()) {
                // Only a tracked job can be cancelled: the untracked path stays as cheap as it was.
                tracking.handlerStarted(delivery.key());
                try {
                    if (tracking.cancelRequested(delivery.key())) {
                        // Asked before its handler could be interrupted (between its start mark and here): never called.
                        throw new InterruptedException("cancelled before its handler was called");
                    }
                    result = invokeObserved(run, timeout);
                } finally {
                    tracking.handlerEnded(delivery.key());
                }
            } else {
                result = invokeObserved(run, timeout);
            }
            // A handler that returned has succeeded, whatever its interrupt flag says: a cancel's
            // interrupt can land after its return, before handlerEnded, and its work is done either
            // way. The flag is cleared: left set, it failed the outcome's hand-over to the settler,
            // leaving the delivery pending to run again.
            Thread.interrupted();
            long nanos = System.nanoTime() - start;
            Outcome acked;
            if (!run.tracked()) {
                acked = new Outcome.Settle(new Settlement.Ack(delivery));
            } else {
                String json;
                try {
                    json = task.resultType() == Void.class || result == null ? null
                            : new String(codec.encode(result), StandardCharsets.UTF_8);
                } catch (RuntimeException | Error e) { // an Error too: a cyclic result overflows a recursive codec, a codec asserts
                    if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
                        throw e; // out of memory says nothing about the result
                    }
                    outcome = "non-retryable";
                    failed.increment();
                    stats.failed(delivery.queue(), task.name(), nanos);
                    return settlements.resultNotEncodable(run, result, e);
                }
                acked = new Outcome.Settle(new Settlement.Ack(delivery, JobRecordFormat.succeeded(message, delivery.queue(), attempt,
                        tracking.worker(), run.started(), clock.instant(), json, tracking.maxResultBytes())));
            }
            // Counted once the outcome exists: a throw before this point is not a success.
            succeeded.increment();
            stats.succeeded(delivery.queue(), task.name(), nanos);
            return acked;
        } catch (TimeoutException e) {
            outcome = "timed out";
            run.timedOut = new TimeoutException("task '" + task.name() + "' overran its timeout of " + timeout);
            failed.increment();
            stats.failed(delivery.queue(), task.name(), System.nanoTime() - start);
            return settlements.failure(run, TimeoutException.class.getName(), "overran its timeout of " + timeout, "");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            boolean flagged = Thread.interrupted(); // as on return: never into the settler's hand-over
            if ((cause instanceof InterruptedException || cause instanceof CancellationException || flagged)
                    && tracking.leaseLost(delivery.key())) {
                outcome = "lease lost";
                return settlements.leaseLost(run);
            }
            if (run.tracked() && tracking.cancelRequested(delivery.key())) {
                outcome = "cancelled";
                return settlements.cancelled(run, start);
            }
            if ((cause instanceof InterruptedException || cause instanceof CancellationException || flagged) && tracking.workerStopping()) {
                outcome = "cancelled";
                return settlements.givenBackAtShutdown(run);
            }
            if (HandlerReads.endedByRead(run, cause)) {
                // The broker failed, not the job: a read made on the handler's behalf is not its attempt to spend.
                outcome = "put back";
                return reads.putBack(run);
            }
            // Past here nobody cancelled the run: a CancellationException is the handler's own (a
            // cancelled future it joined), a failure like any other. Left pending, it would be found
            // as a lost read and run again at once, without end, its attempts never spent.
            failed.increment();
            stats.failed(delivery.queue(), task.name(), System.nanoTime() - start);
            if (task.isNonRetryable(cause)) {
                outcome = "non-retryable";
                LOG.log(Level.ERROR, "task {0} (message {1}) failed with non-retryable {2}: {3}; dead-lettering",
                        task.name(), message.id(), cause.getClass().getName(), cause.getMessage());
                return settlements.deadLetter(run, DeadLetterReason.NON_RETRYABLE, cause.getClass().getName(),
                        RunSettlements.failureMessage(cause), RunSettlements.stackHead(cause));
            }
            outcome = "failed";
            return settlements.failure(run, cause.getClass().getName(), RunSettlements.failureMessage(cause), RunSettlements.stackHead(cause));
        } catch (InterruptedException e) {
            outcome = "cancelled";
            if (tracking.leaseLost(delivery.key())) {
                Thread.interrupted();
                outcome = "lease lost";
                return settlements.leaseLost(run);
            }
            if (run.tracked() && tracking.cancelRequested(delivery.key())) {
                // Cancelled by its submitter (not by this worker stopping): it ends here, settled.
                Thread.interrupted();
                return settlements.cancelled(run, start);
            }
            if (tracking.workerStopping()) {
                return settlements.givenBackAtShutdown(run);
            }
            Thread.currentThread().interrupt();
            return new Outcome.LeavePending("interrupted");
        } finally {
            event.end();
            if (event.shouldCommit()) {
                event.queue = delivery.queue();
                event.task = task.name();
                event.messageId = message.id().toString();
                event.attempt = attempt;
                event.outcome = outcome;
                event.commit();
            }
        }
    }

    /**
     * The outcome of a delivery whose processing threw where nothing should (a bug, or a codec,
     * clock or record format that failed unforeseen): a failed attempt, retried while the budget
     * lasts and recorded with its error, so that it neither stays pending unexplained until its
     * lease lapses nor counts as a success. Never throws: if even this fails, the delivery is left
     * pending for reclaim.
     */
    public Outcome unexpectedFailure(Delivery delivery, Throwable e) {
        try {
            Message message = delivery.message().orElse(null);
            TaskBinding<?, ?> binding = message == null ? null : handlers.get(message.task());
            if (binding == null) {
                return new Outcome.LeavePending("unexpected failure: " + e);
            }
            Task<?, ?> task = binding.task();
            failed.increment();
            stats.failed(delivery.queue(), task.name(), 0);
            Run run = new Run(delivery, message, binding, delivery.attempt(), defaults.maxAttemptsOf(task), null);
            return settlements.failure(run, UNEXPECTED_FAILURE, "processing the delivery failed unexpectedly with " + e.getClass().getName()
                    + ": " + e.getMessage(), RunSettlements.stackHead(e));
        } catch (RuntimeException | Error again) {
            LOG.log(Level.ERROR, "recording the unexpected failure of " + delivery.receipt() + " failed too; it stays pending for reclaim",
                    again);
            return new Outcome.LeavePending("unexpected failure: " + e);
        }
    }
}

package io.binomic.core.internal.worker;

import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.Message;
import io.binomic.api.PayloadDecodeException;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.TaskDefaults;
import io.binomic.api.TaskNotFoundException;
import io.binomic.api.TaskRegistry;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.PayloadCodec;
import io.binomic.api.spi.Settlement;
import io.binomic.core.internal.DueTimes;
import io.binomic.core.internal.StatsRecorder;
import io.binomic.core.internal.codec.WorkerCodec;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.random.RandomGenerator;

/**
 * The delivery state machine (DESIGN.md section 5), in one place for every broker: runs one
 * delivery and decides how it ends, as an {@link Outcome} value. It never talks to the broker:
 * the worker's {@link Settler} records every outcome, fenced and in batches, so there is one path
 * for acks, retries and dead letters alike.
 *
 * <table>
 *   <caption>Outcomes</caption>
 *   <tr><td>handler returns</td><td>ack</td></tr>
 *   <tr><td>retryable failure or timeout</td><td>attempt &lt; max: retry later, atomically with the ack; else dead-letter MAX_ATTEMPTS</td></tr>
 *   <tr><td>non-retryable failure</td><td>dead-letter NON_RETRYABLE</td></tr>
 *   <tr><td>undecodable entry or payload</td><td>dead-letter DECODE_ERROR</td></tr>
 *   <tr><td>unknown task</td><td>dead-letter TASK_NOT_FOUND</td></tr>
 *   <tr><td>stale (if configured)</td><td>not executed; the retry path</td></tr>
 *   <tr><td>attempt already past max (stranded, reclaimed)</td><td>dead-letter MAX_ATTEMPTS, not executed</td></tr>
 *   <tr><td>cancelled (worker stopping)</td><td>nothing: stays pending for reclaim</td></tr>
 * </table>
 */
public final class DeliveryProcessor {
    private static final System.Logger LOG = System.getLogger(DeliveryProcessor.class.getName());
    private static final int STACK_HEAD_LINES = 8;

    private final TaskRegistry registry;
    private final TaskDefaults defaults;
    private final WorkerCodec codec;
    private final TaskInvoker invoker;
    private final Clock clock;
    private final StatsRecorder stats;
    private final RandomGenerator random;
    final LongAdder succeeded = new LongAdder();
    final LongAdder failed = new LongAdder();
    final LongAdder retried = new LongAdder();
    final LongAdder deadLettered = new LongAdder();

    public DeliveryProcessor(TaskRegistry registry, TaskDefaults defaults, PayloadCodec codec, TaskInvoker invoker,
                             Clock clock, StatsRecorder stats, RandomGenerator random) {
        this.registry = registry;
        this.defaults = defaults;
        this.codec = WorkerCodec.of(codec);
        this.invoker = invoker;
        this.clock = clock;
        this.stats = stats;
        this.random = random;
    }

    /** Runs the state machine for one delivery. Never throws for a task's or a payload's fault. */
    public Outcome process(Delivery delivery) {
        if (delivery.decodeProblem().isPresent()) {
            String problem = delivery.decodeProblem().get();
            LOG.log(Level.ERROR, "dead-lettering undecodable entry {0} of queue {1}: {2}", delivery.receipt(), delivery.queue(), problem);
            return deadLetter(delivery, "?", DeadLetterReason.DECODE_ERROR, PayloadDecodeException.class.getName(), problem, "");
        }
        Message message = delivery.message().orElseThrow();
        Task<?, ?> task = registry.find(message.task()).orElse(null);
        if (task == null) {
            var error = new TaskNotFoundException(message.task(), "register it in the worker's tasks (Binomic.builder().task(...) or a TaskProvider)");
            LOG.log(Level.ERROR, "dead-lettering message {0}: {1}", message.id(), error.getMessage());
            return deadLetter(delivery, message.task(), DeadLetterReason.TASK_NOT_FOUND, error.getClass().getName(), error.getMessage(), "");
        }
        int attempt = delivery.attempt();
        int maxAttempts = defaults.maxAttemptsOf(task);
        if (attempt > maxAttempts) {
            LOG.log(Level.ERROR, "dead-lettering message {0} of task {1}: reclaimed as attempt {2} of {3} (its workers stopped holding it)",
                    message.id(), task.name(), attempt, maxAttempts);
            return deadLetter(delivery, task.name(), DeadLetterReason.MAX_ATTEMPTS, "io.binomic.LeaseExpired",
                    "delivered " + delivery.deliveryCount() + " times without an outcome; attempt budget spent", "");
        }
        Instant now = clock.instant();
        var staleAfter = defaults.staleAfter();
        if (staleAfter.isPresent() && Duration.between(message.enqueuedAt(), now).compareTo(staleAfter.get()) > 0) {
            failed.increment();
            return failure(delivery, task, attempt, maxAttempts, "io.binomic.Stale",
                    "waited " + Duration.between(message.enqueuedAt(), now) + " in the queue, over staleAfter " + staleAfter.get(), "");
        }
        Object argument;
        try {
            argument = task.hasNoArgument() ? null : codec.decode(message, task.argumentType());
        } catch (PayloadDecodeException | IllegalArgumentException e) {
            LOG.log(Level.ERROR, "dead-lettering message {0} of task {1}: payload does not decode as {2}: {3}",
                    message.id(), task.name(), task.argumentType().getName(), e.getMessage());
            return deadLetter(delivery, task.name(), DeadLetterReason.DECODE_ERROR, e.getClass().getName(), e.getMessage(), stackHead(e));
        }
        return execute(delivery, task, argument, attempt, maxAttempts);
    }

    private Outcome execute(Delivery delivery, Task<?, ?> task, Object argument, int attempt, int maxAttempts) {
        Message message = delivery.message().orElseThrow();
        Duration timeout = defaults.timeoutOf(task);
        TaskExecutionEvent event = new TaskExecutionEvent();
        event.begin();
        long start = System.nanoTime();
        String outcome = "succeeded";
        try {
            TaskContext context = new TaskContext(message.id(), task.name(), delivery.queue(), attempt, maxAttempts,
                    message.enqueuedAt(), message.headers());
            // Bound on the handler's own thread, so both invokers (structured or future) see it.
            invoker.invoke(() -> TaskContext.callWith(context, () -> invokeHandler(task, argument)), timeout);
            long nanos = System.nanoTime() - start;
            succeeded.increment();
            stats.succeeded(delivery.queue(), task.name(), nanos);
            return new Outcome.Settle(new Settlement.Ack(delivery));
        } catch (TimeoutException e) {
            outcome = "timed out";
            failed.increment();
            stats.failed(delivery.queue(), task.name(), System.nanoTime() - start);
            return failure(delivery, task, attempt, maxAttempts, TimeoutException.class.getName(),
                    "overran its timeout of " + timeout, "");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            if (cause instanceof CancellationException) {
                outcome = "cancelled";
                LOG.log(Level.INFO, "task {0} (message {1}) was cancelled; left pending for reclaim", task.name(), message.id());
                return new Outcome.LeavePending("cancelled");
            }
            failed.increment();
            stats.failed(delivery.queue(), task.name(), System.nanoTime() - start);
            if (task.isNonRetryable(cause)) {
                outcome = "non-retryable";
                LOG.log(Level.ERROR, "task {0} (message {1}) failed with non-retryable {2}: {3}; dead-lettering",
                        task.name(), message.id(), cause.getClass().getName(), cause.getMessage());
                return deadLetter(delivery, task.name(), DeadLetterReason.NON_RETRYABLE, cause.getClass().getName(),
                        String.valueOf(cause.getMessage()), stackHead(cause));
            }
            outcome = "failed";
            return failure(delivery, task, attempt, maxAttempts, cause.getClass().getName(), String.valueOf(cause.getMessage()),
                    stackHead(cause));
        } catch (InterruptedException e) {
            outcome = "cancelled";
            Thread.currentThread().interrupt();
            LOG.log(Level.INFO, "task {0} (message {1}) cancelled by worker shutdown; left pending for reclaim", task.name(), message.id());
            return new Outcome.LeavePending("worker shutdown");
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

    private static Object invokeHandler(Task<?, ?> task, Object argument) throws Exception {
        @SuppressWarnings("unchecked")
        var handler = (io.binomic.api.TaskHandler<Object, ?>) task.handler();
        return handler.handle(argument);
    }

    /** The retry path: another attempt after the backoff while the budget lasts, else the DLQ. */
    private Outcome failure(Delivery delivery, Task<?, ?> task, int attempt, int maxAttempts, String errorClass,
                            String errorMessage, String stackHead) {
        Message message = delivery.message().orElseThrow();
        if (attempt >= maxAttempts) {
            LOG.log(Level.ERROR, "task {0} (message {1}) failed attempt {2} of {3} with {4}: {5}; max attempts reached, dead-lettering",
                    task.name(), message.id(), attempt, maxAttempts, errorClass, errorMessage);
            return deadLetter(delivery, task.name(), DeadLetterReason.MAX_ATTEMPTS, errorClass, errorMessage, stackHead);
        }
        Duration wait = defaults.backoffOf(task).delay(attempt, random);
        Instant now = clock.instant();
        var retry = new Settlement.RetryLater(delivery, message.withAttempt(attempt + 1, now), DueTimes.notBefore(now.plus(wait)));
        retried.increment();
        stats.retried(delivery.queue(), task.name());
        LOG.log(Level.WARNING, "task {0} (message {1}) failed attempt {2} of {3} with {4}: {5}; retrying in {6} ms",
                task.name(), message.id(), attempt, maxAttempts, errorClass, errorMessage, String.valueOf(wait.toMillis()));
        return new Outcome.Settle(retry);
    }

    private Outcome deadLetter(Delivery delivery, String taskName, DeadLetterReason reason, String errorClass,
                               String errorMessage, String stackHead) {
        var failure = new DeadLetter.Failure(reason, errorClass, errorMessage, stackHead, delivery.attempt(), clock.instant());
        deadLettered.increment();
        stats.deadLettered(delivery.queue(), taskName);
        return new Outcome.Settle(new Settlement.DeadLetter(delivery, failure));
    }

    static String stackHead(Throwable t) {
        StringWriter out = new StringWriter();
        t.printStackTrace(new PrintWriter(out));
        return out.toString().lines().limit(STACK_HEAD_LINES).collect(java.util.stream.Collectors.joining("\n"));
    }
}

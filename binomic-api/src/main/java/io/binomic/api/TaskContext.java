package io.binomic.api;

import java.time.Instant;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;

/**
 * What a running handler may want to know about its message: the id (stable across attempts and
 * replays, the natural idempotency key), the attempt and the headers. Bound with a
 * {@link ScopedValue} for the duration of one execution.
 *
 * <pre>{@code
 * Task.builder("charge", Charge.class, c -> payments.charge(c, TaskContext.current().messageId().toString()))
 * }</pre>
 *
 * @param messageId the message id
 * @param task the task name
 * @param queue the queue
 * @param attempt this execution's attempt, from 1
 * @param maxAttempts the task's attempt budget
 * @param enqueuedAt when the message was last enqueued
 * @param headers the message headers
 */
public record TaskContext(UUID messageId, String task, String queue, int attempt, int maxAttempts, Instant enqueuedAt,
                          Map<String, String> headers) {

    private static final ScopedValue<TaskContext> CURRENT = ScopedValue.newInstance();

    public TaskContext {
        headers = Map.copyOf(headers);
    }

    /**
     * The context of the execution running on this thread.
     *
     * @throws NoSuchElementException outside a task handler
     */
    public static TaskContext current() {
        if (!CURRENT.isBound()) {
            throw new NoSuchElementException("TaskContext.current() is only available inside a task handler run by a Binomic worker");
        }
        return CURRENT.get();
    }

    /** The context, or empty outside a task handler. */
    public static Optional<TaskContext> find() {
        return CURRENT.isBound() ? Optional.of(CURRENT.get()) : Optional.empty();
    }

    /** True on the last attempt the budget allows. */
    public boolean isLastAttempt() {
        return attempt >= maxAttempts;
    }

    /** Runs {@code body} with {@code context} bound; used by workers. */
    public static <R> R callWith(TaskContext context, Callable<R> body) throws Exception {
        return ScopedValue.where(CURRENT, context).call(body::call);
    }
}

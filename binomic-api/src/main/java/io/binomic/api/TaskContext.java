package io.binomic.api;

import io.binomic.api.internal.CurrentTask;
import java.time.Instant;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.UUID;

/**
 * What a running handler may want to know about its job: the id (stable across attempts and
 * replays, the natural idempotency key), the attempt and the headers; and how it reports progress.
 * Bound for the duration of one execution.
 *
 * <pre>{@code
 * Binomic.builder().handle(charge, c -> payments.charge(c, TaskContext.current().messageId().toString()))
 * }</pre>
 */
public interface TaskContext {

    /** The message id, which is also the job id. */
    UUID messageId();

    String task();

    /** The queue (the task's: for a partitioned queue, the queue's own name, not its partition's). */
    String queue();

    /** This execution's attempt, from 1. */
    int attempt();

    /** The task's attempt budget. */
    int maxAttempts();

    /** When the message was last enqueued. */
    Instant enqueuedAt();

    Map<String, String> headers();

    /**
     * The W3C trace context the job was submitted with ({@link TraceContext}), the same on every
     * attempt and after a replay: a handler that traces starts its span as a child of
     * {@link TraceContext#parentId()}. Empty when the submit had none, or when its
     * {@code traceparent} header is malformed.
     */
    default Optional<TraceContext> traceContext() { return TraceContext.fromHeaders(headers()); }

    /**
     * The id of the batch this job belongs to, or whose callback it is; empty for a job of no batch.
     */
    default Optional<UUID> batchId() { return Optional.empty(); }

    /**
     * The batch this job belongs to, or whose callback it is, read from the broker now: in a
     * callback, its summary (counts per outcome, the ids of the jobs that failed). Empty for a job
     * of no batch, and once the batch's record has expired.
     */
    default Optional<BatchStatus> batch() { return Optional.empty(); }

    /** True on the last attempt the budget allows. */
    default boolean isLastAttempt() { return attempt() >= maxAttempts(); }

    /**
     * Reports how far the job got, shown in its {@link JobStatus#progress() status} (for a tracked
     * task; for one that is not tracked it does nothing). Written to the broker asynchronously and
     * coalesced: a handler may call it often.
     *
     * @param percent 0 to 100
     * @param note a short text, may be empty
     * @throws IllegalArgumentException when {@code percent} is outside 0..100
     */
    void progress(int percent, String note);

    /**
     * The context of the execution running on this thread.
     *
     * @throws NoSuchElementException outside a task handler
     */
    static TaskContext current() {
        return CurrentTask.find().orElseThrow(() -> new NoSuchElementException(
                "TaskContext.current() is only available inside a task handler run by a Binomic worker"));
    }

    /** The context, or empty outside a task handler. */
    static Optional<TaskContext> find() { return CurrentTask.find(); }
}

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

    /**
     * The message's headers: the submitter's, and those the library reserves
     * ({@link io.binomic.api.spi.Message#RESERVED}), such as {@code priority} for a job of a priority
     * other than the default 5 (a job of the default priority has none).
     */
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
     *
     * @throws BrokerException when the broker did not answer the read (Redis down, a dropped
     *     connection). Let it escape the handler: an attempt it ends is not counted, the job is put
     *     back with its attempt unchanged and runs again once the broker answers (a handler that
     *     catches it and throws another exception has failed its attempt with that one)
     */
    default Optional<BatchStatus> batch() { return Optional.empty(); }

    /** The id of the workflow this job belongs to; empty for a job of no workflow. */
    default Optional<UUID> workflowId() { return Optional.empty(); }

    /**
     * The result of the job named {@code name} that this job of a workflow depends on, decoded as
     * {@code type} (the result type of that job's task). Empty when that job returned nothing, or
     * did not succeed (this job runs anyway after its failure, as its workflow allows).
     *
     * @throws IllegalArgumentException when this job has no dependency named {@code name} (the message
     *     names those it has), or the result does not decode as {@code type}
     * @throws IllegalStateException in a job of no workflow, or once the workflow's record expired
     * @throws BrokerException when the broker did not answer the read (Redis down, a dropped
     *     connection). Let it escape the handler: an attempt it ends is not counted, the job is put
     *     back with its attempt unchanged and runs again once the broker answers, so a job on its
     *     last attempt is not dead-lettered by an outage (a handler that catches it and throws
     *     another exception has failed its attempt with that one)
     */
    default <R> Optional<R> dependency(String name, Class<R> type) {
        throw new IllegalStateException("job " + messageId() + " is not a job of a workflow: dependency(\"" + name
                + "\", ...) reads the results of the jobs a workflow's job depends on (Workflow.builder())");
    }

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

package io.binomic.api;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.UUID;

/**
 * A snapshot of what became of a job. Which of the optional parts are present depends on the
 * {@link #state()} (each {@link JobState} says which).
 */
public interface JobStatus {

    /** The job (message) id. */
    UUID id();

    String queue();

    /** The task name; empty when {@link #state()} is {@link JobState#UNKNOWN}. */
    String task();

    JobState state();

    /** The current or last attempt, from 1; 0 before the first. */
    int attempt();

    /** When a SCHEDULED or RETRYING job is due. */
    Optional<Instant> due();

    /** The consumer that runs (or last ran) it. */
    Optional<String> worker();

    /** When the current or last attempt started. */
    Optional<Instant> startedAt();

    /** When it ended (succeeded, dead-lettered or cancelled). */
    Optional<Instant> endedAt();

    /** How long the successful attempt ran. */
    Optional<Duration> duration();

    /** The result, as the JSON the worker's codec wrote, for a SUCCEEDED job of a task with a result. */
    Optional<String> result();

    /** Why a DEAD_LETTERED job was dead-lettered. */
    Optional<DeadLetterReason> deadLetterReason();

    /** The last failure: exception class and message ({@code "java.io.IOException: timed out"}). */
    Optional<String> error();

    /** The progress the handler last reported, 0 to 100. */
    OptionalInt progress();

    /** The note the handler last reported with its progress. */
    Optional<String> progressNote();

    /**
     * The W3C trace context the job was submitted with ({@link TraceContext}), recorded when it
     * first starts; empty before that, and for a job submitted without one.
     */
    default Optional<TraceContext> traceContext() { return Optional.empty(); }

    /**
     * The batch the job belongs to ({@code Binomic.batch(id)} reads it); empty for a job of no batch,
     * and for one whose record was written before records named their batch and that has not started since.
     */
    default Optional<UUID> batchId() { return Optional.empty(); }

    /**
     * The workflow the job belongs to ({@code Binomic.workflow(id)} reads it); empty for a job of no
     * workflow, and for one whose record was written before records named their workflow and that has not started since.
     */
    default Optional<UUID> workflowId() { return Optional.empty(); }

    /** True when a cancel was asked while the job ran. */
    boolean cancelRequested();

    /** The attempts so far, oldest first; the last {@value #MAX_HISTORY} at most. */
    List<Attempt> attempts();

    /** How many attempts the history keeps. */
    int MAX_HISTORY = 20;

    /**
     * One attempt.
     *
     * @param attempt the attempt number, from 1
     * @param worker the consumer that ran it
     * @param startedAt when it started
     * @param endedAt when it ended
     * @param outcome {@code succeeded}, {@code failed}, {@code timed out}, {@code dead-lettered}, {@code cancelled}
     * @param error the failure, {@code class: message}, empty on success
     */
    record Attempt(int attempt, String worker, Instant startedAt, Instant endedAt, String outcome, String error) { }
}

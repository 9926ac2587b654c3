package io.binomic.api;

import io.binomic.api.spi.QueuePartitions;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * A submitted job: its id, what became of it, its result, and a way to cancel it. Returned by
 * {@code submit}, and obtained later from any process by {@code Binomic.job(id)}. Status and
 * result are kept for a tracked task ({@link Task#isTracked()}: by default a task with a result
 * type, for one hour); for another, {@link #status()} says {@link JobState#UNKNOWN}.
 *
 * @param <R> the result type
 */
public interface JobHandle<R> {

    /** The job id (the message id): stable across attempts and replays. */
    UUID id();

    /**
     * The queue the job is on; for a partitioned queue, the partition ({@code queue@i} for
     * partition {@code i > 0}: see {@link QueuePartitions}), where its record is.
     */
    String queue();

    /** What became of the job, read from the broker now. */
    JobStatus status();

    /**
     * The key under which this handle's submit found a job stored before and returned that job's
     * handle instead of queueing one of its own: the unique key the job holds (the submit, a
     * duplicate, was dropped), or the debounce key it waited under (it took the submit's argument
     * and due time). Empty when the submit queued a job of its own, and for a handle that was not
     * returned by a submit ({@code Binomic.job}, an outbox's relayed handle): it cannot tell.
     *
     * <p>The key is as stored: the one given with the submit, the one the task derives from the
     * argument, or else the encoded argument itself ({@code sha256:} and its SHA-256 in hex when
     * it is longer than 200 bytes).
     */
    default Optional<String> mergedKey() { return Optional.empty(); }

    /**
     * Completes with the handler's return value when the job succeeds; exceptionally with a
     * {@link JobFailedException} when it is dead-lettered, or a {@link JobCancelledException} when
     * it is cancelled. Waiting costs no polling per job: the broker notifies the submitter.
     *
     * @throws IllegalStateException when the task is not tracked (nothing would ever complete it)
     */
    CompletableFuture<R> result();

    /**
     * Waits up to {@code timeout} for the result.
     *
     * @throws JobFailedException when the job was dead-lettered
     * @throws JobCancelledException when it was cancelled
     * @throws JobTimeoutException when it did not end in time (it goes on)
     * @throws JobNotFoundException when the broker keeps no record of the job (a wrong id or queue,
     *     a task that is not tracked, a status past its retention)
     * @throws IllegalStateException as {@link #result()} does, when the task is known not to be tracked
     */
    R await(Duration timeout);

    /**
     * Cancels the job. A queued or scheduled job never runs; a running one is interrupted on
     * whichever worker runs it and ends cancelled, not retried and not dead-lettered.
     */
    CancelOutcome cancel();

    /** What {@link #cancel()} did. */
    enum CancelOutcome {
        /** The job was queued, scheduled or waiting to retry: it will not run. */
        CANCELLED,
        /** The job was running: its worker is told to interrupt it, and it ends cancelled. */
        CANCEL_REQUESTED,
        /** The job had already ended; nothing changed. */
        ALREADY_ENDED,
        /** No such job is known (wrong id, a task that is not tracked, or its status expired); nothing changed. */
        NOT_FOUND
    }
}

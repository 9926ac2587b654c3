package io.binomic.api.spi;

import io.binomic.api.JobHandle;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * A {@link Broker} capability: records kept for messages with the {@link Message#TRACK}
 * header. A broker with it also creates the record when it stores a tracked message
 * ({@link Broker#enqueue}, {@link Broker#enqueueAll}, {@link Scheduler#schedule} and
 * {@link Scheduler#scheduleAll}), in the same atomic step: {state: QUEUED (SCHEDULED with due for a
 * scheduled one), task, enqueuedAt, retention (the TRACK header)}, without expiry until the job
 * ends. A message that is not tracked costs nothing more. Without it tracked jobs run, but their
 * status and results are not kept.
 */
public interface JobStore {

    /** The record of job {@code id} of {@code queue}, or empty when there is none. */
    Optional<JobRecord> readJob(String queue, UUID id);

    /**
     * Marks jobs as started, in one round trip: each update is applied unless the job's record says
     * it ended or was cancelled (a missing record is created). A job whose record has
     * {@link JobRecords#CANCEL_REQUESTED} (a cancel asked while an earlier attempt ran on a worker
     * that then stopped) is ended CANCELLED instead, with its {@link JobEvent.Kind#ENDED} event. A
     * RUNNING record means the attempt it names never ended (its worker stopped): that attempt goes
     * into the history as {@code abandoned}. Returns the ids that were not applied: the worker does
     * not run those, and acks their deliveries.
     */
    Set<UUID> startJobs(List<JobUpdate> starts);

    /** Applies {@code update} to a job that is RUNNING (progress reports); does nothing otherwise. */
    void updateRunningJob(JobUpdate update);

    /**
     * Cancels a job atomically. No record: {@code NOT_FOUND}. A final state: {@code ALREADY_ENDED}.
     * RUNNING: sets {@link JobRecords#CANCEL_REQUESTED}, publishes
     * {@link JobEvent.Kind#CANCEL_REQUESTED}, and returns {@code CANCEL_REQUESTED}. Otherwise
     * (QUEUED, SCHEDULED, RETRYING) applies {@code cancelled} (which sets state CANCELLED; the record
     * then expires after its {@link JobRecords#RETENTION}), publishes
     * {@link JobEvent.Kind#ENDED} and returns {@code CANCELLED}: a worker that fetches the message
     * later finds the record cancelled in {@link #startJobs} and never runs it.
     */
    JobHandle.CancelOutcome cancelJob(JobUpdate cancelled);

    /**
     * Delivers the {@link JobEvent}s of {@code queue} to {@code listener} until the returned handle
     * is closed. Events published while a subscriber is disconnected are lost: a subscriber reads
     * the records it cares about after subscribing. {@code listener} must not block.
     */
    AutoCloseable subscribeJobEvents(String queue, Consumer<JobEvent> listener);
}

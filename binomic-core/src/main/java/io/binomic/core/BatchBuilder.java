package io.binomic.core;

import io.binomic.api.BatchStatus.Callback;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.NewBatch;
import io.binomic.core.internal.client.BatchSubmitter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * Builds a batch: jobs on any queues, submitted atomically (all are enqueued or none), and
 * callbacks, each an ordinary task with an argument, enqueued exactly once when its condition is
 * met. From {@link Binomic#batch()}.
 *
 * {@snippet class=io.binomic.core.BatchSnippetsTest region=batch}
 *
 * <p>A callback reads the batch's summary from {@code TaskContext.current().batch()}. A builder is
 * used once, by one thread.
 */
public final class BatchBuilder {
    /** How long a batch's record, and the record of a job of it whose task keeps no status, are kept: one day. */
    public static final Duration DEFAULT_RETENTION = Duration.ofDays(1);

    private final BatchSubmitter batches;
    private final UUID id;
    private final List<Message> jobs = new ArrayList<>();
    private final Map<Callback, Message> callbacks = new EnumMap<>(Callback.class);
    private boolean open;
    private Duration retention = DEFAULT_RETENTION;
    private boolean submitted;

    BatchBuilder(BatchSubmitter batches) {
        this.batches = batches;
        this.id = batches.newId();
    }

    /** The id the batch will have. */
    public UUID id() { return id; }

    /**
     * Adds a job: {@code task} with {@code argument}, on the task's queue.
     *
     * @throws IllegalArgumentException as {@code submit} does, and for a CRON, INTERVAL, unique or debounced task
     */
    public <A> BatchBuilder add(Task<A, ?> task, A argument) { return add(task, argument, SubmitOptions.NONE); }

    /**
     * {@link #add(Task, Object)} with options: priority and headers; a delay, uniqueness, a debounce
     * or a partition key are refused (a batch's jobs are enqueued at once, each exactly once).
     */
    public <A> BatchBuilder add(Task<A, ?> task, A argument, SubmitOptions options) {
        requireUnsubmitted();
        Objects.requireNonNull(task, "task must not be null");
        Objects.requireNonNull(options, "options must not be null (SubmitOptions.NONE for none)");
        jobs.add(batches.job(id, task, argument, options, retention));
        return this;
    }

    /** Enqueues {@code task} with {@code argument} once every job of the batch succeeded. */
    public <A> BatchBuilder onSuccess(Task<A, ?> task, A argument) { return callback(Callback.SUCCESS, task, argument); }

    /** Enqueues {@code task} with {@code argument} once every job of the batch ended, whatever the outcome. */
    public <A> BatchBuilder onComplete(Task<A, ?> task, A argument) { return callback(Callback.COMPLETE, task, argument); }

    /** Enqueues {@code task} with {@code argument} when the first job of the batch is dead-lettered (once per batch). */
    public <A> BatchBuilder onDeath(Task<A, ?> task, A argument) { return callback(Callback.DEATH, task, argument); }

    /**
     * Keeps the batch open after submit: jobs may be added ({@link BatchHandle#add}) until
     * {@link BatchHandle#close()}, and the success and completion callbacks wait for the close. A
     * batch that is not kept open is closed when submitted.
     */
    public BatchBuilder keepOpen() {
        requireUnsubmitted();
        open = true;
        return this;
    }

    /**
     * How long the batch's status is kept once it completed ({@link #DEFAULT_RETENTION} unless set);
     * also the retention of the records of its jobs whose task keeps no status, for jobs added after this call.
     */
    public BatchBuilder retention(Duration retention) {
        requireUnsubmitted();
        Objects.requireNonNull(retention, "retention must not be null");
        if (retention.toMillis() < 1) {
            throw new IllegalArgumentException("retention must be at least 1 ms, was " + retention
                    + "; leave it out for the default of " + DEFAULT_RETENTION);
        }
        this.retention = retention;
        return this;
    }

    /**
     * Submits the batch: its record and every job stored in one atomic step.
     *
     * @throws IllegalStateException when the batch has no job and is not kept open, or was submitted already
     * @throws UnsupportedOperationException when the broker has no batches (naming it)
     */
    public BatchHandle submit() {
        requireUnsubmitted();
        if (jobs.isEmpty() && !open) {
            throw new IllegalStateException("batch " + id + " has no job: add(task, argument) before submit(), or keepOpen()"
                    + " to add jobs after it");
        }
        submitted = true;
        batches.submit(new NewBatch(id, open, retention, callbacks), List.copyOf(jobs));
        return new BatchHandle(batches, id);
    }

    private <A> BatchBuilder callback(Callback kind, Task<A, ?> task, A argument) {
        requireUnsubmitted();
        Objects.requireNonNull(task, "task must not be null");
        if (callbacks.containsKey(kind)) {
            throw new IllegalStateException("the " + kind.name().toLowerCase(java.util.Locale.ROOT) + " callback of batch " + id
                    + " is set already: a batch has at most one callback of each kind; set it once");
        }
        callbacks.put(kind, batches.callback(id, kind, task, argument));
        return this;
    }

    private void requireUnsubmitted() {
        if (submitted) {
            throw new IllegalStateException("batch " + id + " was submitted already: build another with Binomic.batch(), or add"
                    + " jobs to this one through its BatchHandle (keepOpen())");
        }
    }
}

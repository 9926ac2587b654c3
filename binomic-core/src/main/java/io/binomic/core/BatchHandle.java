package io.binomic.core;

import io.binomic.api.BatchNotFoundException;
import io.binomic.api.BatchStatus;
import io.binomic.api.JobHandle;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.core.internal.client.BatchSubmitter;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * A submitted batch, by id: its status, and, while it is open, more jobs and its close. From
 * {@link BatchBuilder#submit()} or {@link Binomic#batch(UUID)}, in any process.
 *
 * {@snippet class=io.binomic.core.BatchSnippetsTest region=grow}
 */
public final class BatchHandle {
    private final BatchSubmitter batches;
    private final UUID id;

    BatchHandle(BatchSubmitter batches, UUID id) {
        this.batches = batches;
        this.id = id;
    }

    /** The batch id. */
    public UUID id() { return id; }

    /** The batch's status now; empty when there is no such batch (never was, or its record expired). */
    public Optional<BatchStatus> status() { return batches.status(id); }

    /**
     * Adds a job to the batch, enqueued at once; the batch must be open ({@link BatchBuilder#keepOpen()},
     * not yet {@linkplain #close() closed}). A job of the batch may add jobs to it: this is how a batch
     * grows while it runs.
     *
     * @return the new job's id
     * @throws IllegalStateException when the batch is closed; nothing was added
     * @throws BatchNotFoundException when there is no such batch (a wrong id, or one past its
     *     retention); nothing was added
     */
    public <A> UUID add(Task<A, ?> task, A argument) { return add(task, argument, SubmitOptions.NONE); }

    /**
     * {@link #add(Task, Object)} with options (priority, headers; no delay, uniqueness, debounce or
     * partition key); it throws as that does.
     */
    public <A> UUID add(Task<A, ?> task, A argument, SubmitOptions options) {
        Objects.requireNonNull(task, "task must not be null");
        Objects.requireNonNull(options, "options must not be null (SubmitOptions.NONE for none)");
        var job = batches.job(id, task, argument, options, BatchBuilder.DEFAULT_RETENTION);
        batches.add(id, List.of(job));
        return job.id();
    }

    /**
     * Closes the batch: no job may be added from now, and once every job ended its callbacks are
     * enqueued (at once, if they all have). Closing a closed batch changes nothing: a batch not
     * built with {@link BatchBuilder#keepOpen()} was closed by its submit, so its close returns false.
     *
     * @return true when this call closed the batch; false when it was closed already (at its submit,
     *         not being kept open, or by an earlier close or a cancel)
     * @throws BatchNotFoundException when there is no such batch (a wrong id, or one past its
     *     retention), unlike {@link #cancel()}, which returns {@code NOT_FOUND}: a close that found
     *     nothing to close must not read as done
     */
    public boolean close() { return batches.close(id); }

    /**
     * Cancels the batch: it is closed, and each of its jobs that has not ended is cancelled as
     * {@code JobHandle.cancel()} does (a queued one never runs, a running one is interrupted). The
     * batch then completes, and its {@code onComplete} callback runs, once those jobs ended. A batch
     * whose jobs all ended (and that is closed) is left as it ended. Like {@link #status()} for an
     * unknown id, and like {@code WorkflowHandle.cancel()}, it does not throw: it says what it did.
     *
     * @return what it did, as {@code JobHandle.cancel()} says it: {@code CANCELLED} (it closed the
     *     batch or stopped queued jobs: nothing more of it will run), {@code CANCEL_REQUESTED} (a job
     *     of it was running, or returned while the cancel went on: its worker interrupts it, and it
     *     counts as cancelled unless its handler returns), {@code ALREADY_ENDED} (every job had ended and
     *     the batch was closed, or it was cancelled already and so was each job not ended; nothing
     *     changed) or {@code NOT_FOUND}
     *     (never submitted, or its record expired; nothing changed)
     */
    public JobHandle.CancelOutcome cancel() { return batches.cancel(id); }

    @Override
    public String toString() { return "BatchHandle[" + id + "]"; }
}

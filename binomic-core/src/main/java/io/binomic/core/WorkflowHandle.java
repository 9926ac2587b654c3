package io.binomic.core;

import io.binomic.api.JobHandle;
import io.binomic.api.WorkflowStatus;
import io.binomic.core.internal.client.WorkflowSubmitter;
import java.util.Optional;
import java.util.UUID;

/**
 * A submitted workflow, by id: its status and its cancel. From {@link Binomic#submit(Workflow)} or
 * {@link Binomic#workflow(UUID)}, in any process.
 */
public final class WorkflowHandle {
    private final WorkflowSubmitter workflows;
    private final UUID id;

    WorkflowHandle(WorkflowSubmitter workflows, UUID id) {
        this.workflows = workflows;
        this.id = id;
    }

    /** The workflow id. */
    public UUID id() { return id; }

    /**
     * The workflow's status now: each job's name, id, state and dependencies, and the state they
     * make; empty when there is no such workflow (never was, or its record expired).
     */
    public Optional<WorkflowStatus> status() { return workflows.status(id); }

    /**
     * Cancels the workflow: its held jobs never run, and each enqueued one is cancelled as
     * {@code JobHandle.cancel()} does (a queued one never runs, a running one is interrupted). A
     * workflow none of whose jobs is held or enqueued is left as it ended. Like {@link #status()} for
     * an unknown id, it does not throw: it says what it did.
     *
     * @return what it did, as {@code JobHandle.cancel()} says it: {@code CANCELLED} (it stopped held
     *     or queued jobs: nothing of it will run), {@code CANCEL_REQUESTED} (one of its jobs was
     *     running, or returned while the cancel went on: its worker interrupts it, and it ends cancelled
     *     unless its handler returns normally, which ends it succeeded; the workflow ends cancelled
     *     either way), {@code ALREADY_ENDED} (no job of it
     *     was held or enqueued, or each was cancelled already; nothing changed) or {@code NOT_FOUND}
     *     (never submitted, or its record expired; nothing changed)
     */
    public JobHandle.CancelOutcome cancel() { return workflows.cancel(id); }

    @Override
    public String toString() { return "WorkflowHandle[" + id + "]"; }
}

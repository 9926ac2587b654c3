package io.binomic.core;

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
     * workflow none of whose jobs is held or enqueued is left as it ended.
     *
     * @return how many enqueued jobs were asked to cancel
     * @throws IllegalStateException when there is no such workflow
     */
    public int cancel() {
        int n = workflows.cancel(id);
        if (n < 0) {
            throw new IllegalStateException("workflow " + id + " is unknown (never submitted, or its record expired)");
        }
        return n;
    }

    @Override
    public String toString() { return "WorkflowHandle[" + id + "]"; }
}

package io.binomic.api;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * Where a workflow stands, as {@code Binomic.workflow(id).status()} reads it: each job of its graph
 * (its name, job id, state and dependencies), and the state they make.
 *
 * @param id the workflow id
 * @param cancelRequested true once the workflow was cancelled
 * @param createdAt when the workflow was submitted
 * @param nodes its jobs, in the order they were added (each after the jobs it depends on)
 */
public record WorkflowStatus(UUID id, boolean cancelRequested, Instant createdAt, List<Node> nodes) {

    /** A workflow's state, derived from its jobs' states. */
    public enum State {
        /** A job is held or enqueued (queued, running, or waiting for a retry). */
        RUNNING,
        /** Every job succeeded. */
        SUCCEEDED,
        /**
         * No job is held or enqueued, and one was dead-lettered, cancelled or skipped. A dead letter
         * replayed that then succeeds resumes the workflow: it is {@link #RUNNING} again.
         */
        FAILED,
        /** The workflow was cancelled, and every job it had enqueued has ended. */
        CANCELLED
    }

    /** Where one job of a workflow stands, as the workflow's record says. */
    public enum NodeState {
        /** Held: some job it depends on has not ended yet. */
        WAITING,
        /** Enqueued (queued, running or waiting for a retry: {@code JobHandle} tells which). */
        ENQUEUED,
        SUCCEEDED,
        DEAD_LETTERED,
        CANCELLED,
        /**
         * Not run, because a job it depends on was dead-lettered, cancelled or skipped: its job record
         * says CANCELLED. A replayed dead letter that succeeds releases it again.
         */
        SKIPPED;

        /** True while the job may still run: held or enqueued. */
        public boolean isActive() { return this == WAITING || this == ENQUEUED; }
    }

    /**
     * One job of a workflow.
     *
     * @param name its name in the workflow
     * @param jobId its job id (a {@code JobHandle} reads its status and result)
     * @param queue its queue
     * @param task its task's name
     * @param state where it stands
     * @param dependsOn the names of the jobs it depends on
     */
    public record Node(String name, UUID jobId, String queue, String task, NodeState state, List<String> dependsOn) {
        public Node {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(jobId, "jobId");
            Objects.requireNonNull(state, "state");
            dependsOn = List.copyOf(dependsOn);
        }
    }

    public WorkflowStatus {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(createdAt, "createdAt");
        nodes = List.copyOf(nodes);
    }

    /** The job named {@code name}; empty when the workflow has none of that name. */
    public Optional<Node> node(String name) { return nodes.stream().filter(n -> n.name().equals(name)).findFirst(); }

    /** The state the jobs' states make. */
    public State state() {
        if (nodes.stream().anyMatch(n -> n.state().isActive())) {
            return State.RUNNING;
        }
        if (cancelRequested) {
            return State.CANCELLED;
        }
        return nodes.stream().allMatch(n -> n.state() == NodeState.SUCCEEDED) ? State.SUCCEEDED : State.FAILED;
    }
}

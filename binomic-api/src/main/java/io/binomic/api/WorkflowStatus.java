package io.binomic.api;

import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
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
     * @param ignoringFailureOf those of {@code dependsOn} whose failure (dead letter, cancel, skip) it
     *        ignores: it waits for them to end, whatever the outcome; the failure of any other one
     *        skips it. Empty by default (any failure skips it); every dependency when it runs anyway
     *        ({@link #runsAnyway()})
     */
    public record Node(String name, UUID jobId, String queue, String task, NodeState state, List<String> dependsOn,
                       Set<String> ignoringFailureOf) {
        public Node {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(jobId, "jobId");
            Objects.requireNonNull(state, "state");
            dependsOn = List.copyOf(dependsOn);
            ignoringFailureOf = Set.copyOf(ignoringFailureOf);
        }

        /** A job that ignores no dependency's failure: the failure of any skips it (the default). */
        public Node(String name, UUID jobId, String queue, String task, NodeState state, List<String> dependsOn) {
            this(name, jobId, queue, task, state, dependsOn, Set.of());
        }

        /**
         * True when it runs once each of its dependencies ended, whatever the outcome (it ignores the
         * failure of every one); false for a job without dependencies.
         */
        public boolean runsAnyway() { return !dependsOn.isEmpty() && ignoringFailureOf.containsAll(dependsOn); }
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

    /**
     * The derived state first, then how many jobs stand in each node state, then each job as
     * {@code name=STATE} (the first ones only, for a large graph): a log line or an assertion message
     * then says where the workflow stands without the full node records. {@link #node(String)} and
     * {@link #nodes()} give those.
     */
    @Override
    public String toString() {
        Map<NodeState, Integer> byState = new EnumMap<>(NodeState.class);
        nodes.forEach(n -> byState.merge(n.state(), 1, Integer::sum));
        StringBuilder out = new StringBuilder("WorkflowStatus[id=").append(id)
                .append(", state=").append(state())
                .append(", cancelRequested=").append(cancelRequested)
                .append(", jobs=").append(nodes.size()).append(' ').append(byState)
                .append(", nodes=[");
        int shown = Math.min(nodes.size(), SHOWN_NODES);
        for (int i = 0; i < shown; i++) {
            out.append(i == 0 ? "" : ", ").append(nodes.get(i).name()).append('=').append(nodes.get(i).state());
        }
        if (nodes.size() > shown) {
            out.append(", ... (").append(nodes.size() - shown).append(" more)");
        }
        return out.append("], createdAt=").append(createdAt).append(']').toString();
    }

    private static final int SHOWN_NODES = 20;
}

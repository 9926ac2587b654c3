package io.binomic.api.spi;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

/**
 * A workflow as the core asks a broker to create it ({@link Workflows#submitWorkflow}): checked
 * already (names unique, every dependency a node before it, so no cycle).
 *
 * @param id the workflow id (a UUIDv7); every job of it carries it ({@link Message#workflow()})
 * @param retention how long the workflow's record is kept once no job of it is held or enqueued
 * @param nodes the jobs, each after the nodes it depends on
 */
public record NewWorkflow(UUID id, Duration retention, List<Node> nodes) {

    /**
     * One job of a workflow.
     *
     * @param name its name, unique in the workflow
     * @param job its message: tracked, carrying the workflow's id
     * @param dependsOn the names of the nodes it waits for; none for a root, enqueued at submit
     * @param ignoringFailureOf those of {@code dependsOn} whose failure (dead letter, cancel, skip) it
     *        ignores: it waits for them to end, whatever the outcome; the failure of any other one
     *        skips it
     * @param delay how long after its release (after the submit, for a root) it is due: zero to
     *        enqueue it then, else it goes to its queue's delayed set, its record SCHEDULED; whole
     *        milliseconds
     */
    public record Node(String name, Message job, List<String> dependsOn, Set<String> ignoringFailureOf, Duration delay) {
        public Node {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(job, "job");
            Objects.requireNonNull(delay, "delay");
            if (delay.isNegative()) {
                throw new IllegalArgumentException("node '" + name + "' has a negative delay " + delay);
            }
            dependsOn = List.copyOf(dependsOn);
            ignoringFailureOf = Set.copyOf(ignoringFailureOf);
            if (!dependsOn.containsAll(ignoringFailureOf)) {
                throw new IllegalArgumentException("node '" + name + "' ignores the failure of " + ignoringFailureOf
                        + " but depends only on " + dependsOn);
            }
        }

        /** A node enqueued as soon as it is released (at the submit, for a root). */
        public Node(String name, Message job, List<String> dependsOn, Set<String> ignoringFailureOf) {
            this(name, job, dependsOn, ignoringFailureOf, Duration.ZERO);
        }
    }

    public NewWorkflow {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(retention, "retention");
        if (retention.toMillis() < 1) {
            throw new IllegalArgumentException("retention must be at least 1 ms, was " + retention);
        }
        nodes = List.copyOf(nodes);
        if (nodes.isEmpty()) {
            throw new IllegalArgumentException("workflow " + id + " has no node");
        }
    }
}

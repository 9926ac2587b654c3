package io.binomic.core;

import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A graph of jobs with dependencies, on any queues: a job is enqueued only once the jobs it depends
 * on succeeded. Immutable; built once with {@link #builder()} (or {@link Builder#then} for a chain)
 * and submitted with {@link Binomic#submit(Workflow)}, as many times as wanted (each submit is a new
 * workflow with new job ids).
 *
 * {@snippet class=io.binomic.core.WorkflowSnippetsTest region=diamond}
 *
 * <p>When a job a node depends on is dead-lettered or cancelled, the node is skipped (never run),
 * and so, transitively, are the nodes that depend on it, unless the node ignores that failure
 * ({@link Dependencies#ignoringFailureOf}, {@link Dependencies#whenDependencyFails}).
 */
public final class Workflow {
    /**
     * How long a workflow's record is kept once it ended, and with it the records of its jobs (each
     * for this or its task's keepStatusFor, whichever is longer): one day.
     */
    public static final Duration DEFAULT_RETENTION = Duration.ofDays(1);

    /** What a node does when a job it depends on is dead-lettered, cancelled or skipped. */
    public enum DependencyFailure {
        /** It is skipped (not run; its record says CANCELLED), and so are the nodes that depend on it: the default. */
        SKIP,
        /** It runs once each of its dependencies ended, whatever the outcome. */
        RUN_ANYWAY
    }

    /**
     * The jobs a node depends on, and what it does when one of them fails. Immutable; from
     * {@link #dependsOn(String...)}.
     */
    public static final class Dependencies {
        private final List<String> names;
        private final Set<String> ignored;

        private Dependencies(List<String> names, Set<String> ignored) {
            this.names = names;
            this.ignored = ignored;
        }

        /** The names of the jobs depended on, in the order given. */
        public List<String> names() { return names; }

        /** Those whose failure is ignored: the node waits for them to end, whatever the outcome. */
        public Set<String> ignoringFailure() { return ignored; }

        /**
         * These dependencies, where the failure (dead letter, cancel, skip) of each of {@code names}
         * is ignored: the node runs once it ended, whatever the outcome, and its result is then empty.
         *
         * @throws IllegalArgumentException naming a name that is not among the dependencies
         */
        public Dependencies ignoringFailureOf(String... names) {
            Set<String> more = new LinkedHashSet<>(ignored);
            for (String name : names) {
                if (!this.names.contains(name)) {
                    throw new IllegalArgumentException("ignoringFailureOf(\"" + name + "\"): not among the dependencies " + this.names
                            + "; name one of those, or add it to dependsOn(...)");
                }
                more.add(name);
            }
            return new Dependencies(names(), Set.copyOf(more));
        }

        /** These dependencies, with {@code policy} for the failure of any of them ({@link DependencyFailure#SKIP} unless set). */
        public Dependencies whenDependencyFails(DependencyFailure policy) {
            Objects.requireNonNull(policy, "policy must not be null");
            return new Dependencies(names, policy == DependencyFailure.RUN_ANYWAY ? Set.copyOf(names) : Set.of());
        }

        @Override
        public String toString() { return "dependsOn" + names + (ignored.isEmpty() ? "" : " ignoringFailureOf" + ignored); }
    }

    /**
     * One job of a workflow.
     *
     * @param name its name, unique in the workflow
     * @param task its task
     * @param argument its argument (null for a task without one)
     * @param options its priority, headers and delay
     * @param dependencies the jobs it depends on; none for a root
     */
    public record Node(String name, Task<?, ?> task, Object argument, SubmitOptions options, Dependencies dependencies) { }

    private final List<Node> nodes;
    private final Duration retention;

    private Workflow(List<Node> nodes, Duration retention) {
        this.nodes = nodes;
        this.retention = retention;
    }

    /** A builder of a workflow. */
    public static Builder builder() { return new Builder(); }

    /** The dependencies of a node: the jobs named, each of which must succeed first. */
    public static Dependencies dependsOn(String... names) {
        Objects.requireNonNull(names, "names must not be null");
        if (names.length == 0) {
            throw new IllegalArgumentException("dependsOn() names no job: name at least one, or add a root job"
                    + " without it: add(name, task, argument) or add(name, task, argument, options)");
        }
        Set<String> unique = new LinkedHashSet<>();
        for (String name : names) {
            requireName(name);
            if (!unique.add(name)) {
                throw new IllegalArgumentException("dependsOn" + Arrays.toString(names) + " names '" + name + "' twice; name it once");
            }
        }
        return new Dependencies(List.copyOf(unique), Set.of());
    }

    /** The jobs, each after the jobs it depends on. */
    public List<Node> nodes() { return nodes; }

    /** How long the workflow's status is kept once it ended ({@link #DEFAULT_RETENTION} unless set). */
    public Duration retention() { return retention; }

    @Override
    public String toString() {
        return "Workflow" + nodes.stream().map(n -> n.name() + (n.dependencies().names().isEmpty() ? "" : "<-" + n.dependencies().names()))
                .toList();
    }

    private static void requireName(String name) {
        Objects.requireNonNull(name, "a job's name must not be null");
        if (name.isBlank() || name.length() > 200) {
            throw new IllegalArgumentException("a job's name must be 1 to 200 characters and not blank, was '" + name + "'");
        }
    }

    /** Builds a {@link Workflow}; {@link #build()} checks the graph. A builder is used by one thread. */
    public static final class Builder {
        private static final Dependencies NONE = new Dependencies(List.of(), Set.of());
        private final List<Node> nodes = new ArrayList<>();
        private Duration retention = DEFAULT_RETENTION;

        private Builder() { }

        /** Adds a root job: {@code task} with {@code argument}, enqueued when the workflow is submitted. */
        public <A> Builder add(String name, Task<A, ?> task, A argument) { return add(name, task, argument, SubmitOptions.NONE, NONE); }

        /**
         * Adds a root job with {@code options}: its priority, headers and delay (a job with a delay,
         * given here or by its task, is enqueued that long after the submit).
         *
         * @throws IllegalArgumentException as {@link #add(String, Task, Object, SubmitOptions, Dependencies)}
         */
        public <A> Builder add(String name, Task<A, ?> task, A argument, SubmitOptions options) {
            return add(name, task, argument, options, NONE);
        }

        /** Adds a job enqueued once its {@code dependencies} succeeded ({@link Workflow#dependsOn}). */
        public <A> Builder add(String name, Task<A, ?> task, A argument, Dependencies dependencies) {
            return add(name, task, argument, SubmitOptions.NONE, dependencies);
        }

        /**
         * {@link #add(String, Task, Object, Dependencies)} with options: its priority, headers and
         * delay (a job with a delay, given here or by its task, is enqueued that long after its
         * dependencies allow it, or after the submit for a root).
         *
         * @throws IllegalArgumentException naming the job: an argument its task does not take (null
         *     for a task that takes one), or a unique key, a debounce or a partition key (in
         *     {@code options} or declared by {@code task}), which a workflow's jobs do not take
         */
        public <A> Builder add(String name, Task<A, ?> task, A argument, SubmitOptions options, Dependencies dependencies) {
            requireName(name);
            Objects.requireNonNull(task, "task must not be null");
            Objects.requireNonNull(options, "options must not be null (SubmitOptions.NONE for none)");
            Objects.requireNonNull(dependencies, "dependencies must not be null (use the add without them for a root)");
            requireArgument(name, task, argument);
            requireWorkflowOptions(name, task, options);
            nodes.add(new Node(name, task, argument, options, dependencies));
            return this;
        }

        /** Refuses here, naming the job, an argument an ordinary submit of {@code task} would refuse. */
        private static void requireArgument(String name, Task<?, ?> task, Object argument) {
            String job = "job '" + name + "' (task '" + task.name() + "')";
            if (task.hasNoArgument()) {
                if (argument != null) {
                    throw new IllegalArgumentException(job + " takes no argument, got a " + argument.getClass().getName()
                            + "; pass null");
                }
            } else if (argument == null) {
                throw new IllegalArgumentException(job + " takes a " + task.argumentType().getName() + ", got null; pass an argument"
                        + " (an empty record if there is nothing to say)");
            } else if (!task.argumentType().isInstance(argument)) {
                throw new IllegalArgumentException(job + " takes a " + task.argumentType().getName() + ", got a "
                        + argument.getClass().getName());
            }
        }

        /**
         * Refuses the options that contradict a workflow, naming the job and the fix: a workflow
         * enqueues each of its jobs exactly once, when its dependencies allow it.
         */
        private static void requireWorkflowOptions(String name, Task<?, ?> task, SubmitOptions options) {
            String job = "job '" + name + "' (task '" + task.name() + "')";
            String why = ": a workflow enqueues each of its jobs exactly once, when its dependencies allow it; ";
            if (options.uniqueness().isPresent()) {
                throw new IllegalArgumentException(job + " has a unique key (SubmitOptions.unique)" + why
                        + "remove unique(...) from its options");
            }
            if (task.uniqueness().isPresent()) {
                throw new IllegalArgumentException(job + " is of a unique task (Task.Builder.unique)" + why
                        + "use a task without unique(...) for this job");
            }
            if (options.debounceKey().isPresent()) {
                throw new IllegalArgumentException(job + " has a debounce key (SubmitOptions.debounce)" + why
                        + "remove debounce(...) from its options");
            }
            if (task.isDebounced()) {
                throw new IllegalArgumentException(job + " is of a debounced task (Task.Builder.debounce)" + why
                        + "use a task without debounce(...) for this job");
            }
            if (options.partitionKey().isPresent()) {
                throw new IllegalArgumentException(job + " has a partition key (SubmitOptions.partitionKey): a workflow's jobs go"
                        + " to the partitions of their queue in turn; remove partitionKey(...) from its options");
            }
        }

        /**
         * Adds a job that depends on the job added just before (a root when it is the first): a chain,
         * {@code builder().then("a", ...).then("b", ...).then("c", ...)}, runs a, then b, then c.
         */
        public <A> Builder then(String name, Task<A, ?> task, A argument) {
            return nodes.isEmpty() ? add(name, task, argument) : add(name, task, argument, dependsOn(nodes.getLast().name()));
        }

        /**
         * How long the workflow's status is kept once no job of it is held or enqueued
         * ({@link #DEFAULT_RETENTION} unless set); the records of its jobs are kept while it is, each
         * for at least this long (longer if its task's keepStatusFor is).
         */
        public Builder retention(Duration retention) {
            Objects.requireNonNull(retention, "retention must not be null");
            if (retention.toMillis() < 1) {
                throw new IllegalArgumentException("retention must be at least 1 ms, was " + retention
                        + "; leave it out for the default of " + DEFAULT_RETENTION);
            }
            this.retention = retention;
            return this;
        }

        /**
         * The workflow, its jobs ordered so that each comes after those it depends on.
         *
         * @throws IllegalArgumentException for no job, two jobs of one name, a dependency on a job the
         *     workflow does not have, or a cycle; the message names the jobs
         */
        public Workflow build() {
            if (nodes.isEmpty()) {
                throw new IllegalArgumentException("a workflow needs at least one job: add(name, task, argument) before build()");
            }
            Map<String, Node> byName = new HashMap<>();
            for (Node n : nodes) {
                if (byName.putIfAbsent(n.name(), n) != null) {
                    throw new IllegalArgumentException("two jobs are named '" + n.name() + "': a workflow's job names are unique;"
                            + " rename one");
                }
            }
            for (Node n : nodes) {
                for (String d : n.dependencies().names()) {
                    if (!byName.containsKey(d)) {
                        throw new IllegalArgumentException("job '" + n.name() + "' depends on '" + d + "', which the workflow does"
                                + " not have; its jobs are " + nodes.stream().map(Node::name).toList());
                    }
                    if (d.equals(n.name())) {
                        throw new IllegalArgumentException("job '" + d + "' depends on itself: a cycle; remove it from its dependsOn");
                    }
                }
            }
            return new Workflow(topologicalOrder(byName), retention);
        }

        /** The nodes, each after its dependencies (otherwise in the order added); refuses a cycle naming it. */
        private List<Node> topologicalOrder(Map<String, Node> byName) {
            List<Node> ordered = new ArrayList<>();
            Set<String> done = new HashSet<>();
            Set<String> visiting = new LinkedHashSet<>();
            for (Node n : nodes) {
                visit(n, byName, done, visiting, ordered);
            }
            return List.copyOf(ordered);
        }

        private static void visit(Node n, Map<String, Node> byName, Set<String> done, Set<String> visiting, List<Node> ordered) {
            if (done.contains(n.name())) {
                return;
            }
            if (!visiting.add(n.name())) {
                List<String> path = new ArrayList<>(visiting);
                List<String> cycle = new ArrayList<>(path.subList(path.indexOf(n.name()), path.size()));
                cycle.add(n.name());
                throw new IllegalArgumentException("the workflow has a cycle: " + cycle.stream().collect(Collectors.joining(" -> "))
                        + " (each depends on the next); a job may depend only on jobs that do not depend on it");
            }
            for (String d : n.dependencies().names()) {
                visit(byName.get(d), byName, done, visiting, ordered);
            }
            visiting.remove(n.name());
            done.add(n.name());
            ordered.add(n);
        }
    }
}

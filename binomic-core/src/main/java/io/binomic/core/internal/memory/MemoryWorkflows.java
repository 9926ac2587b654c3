package io.binomic.core.internal.memory;

import io.binomic.api.JobState;
import io.binomic.api.WorkflowStatus;
import io.binomic.api.WorkflowStatus.NodeState;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.FlowCounts;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.NewWorkflow;
import io.binomic.api.spi.Settlement;
import io.binomic.api.spi.Workflows;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The memory broker's {@link Workflows}: each workflow's record under the broker's one lock, so the
 * bookkeeping of a job's settlement and the enqueue of the jobs it releases ({@link #settled}, called
 * by {@link MemoryBroker#settle} for an applied settlement) are atomic with it, as on Redis.
 */
final class MemoryWorkflows implements Workflows {

    /**
     * One node: its job's message, held here until released, where it stands, and how many of its
     * dependencies are held or enqueued ({@code unfinished}) and have failed without being ignored
     * ({@code failed}): kept by {@link #setState} on every change of a dependency's state, so that
     * evaluating a node costs the same however many dependencies it has.
     */
    private static final class Node {
        final NewWorkflow.Node spec;
        final List<String> dependents = new ArrayList<>();
        NodeState state;
        int unfinished;
        int failed;

        Node(NewWorkflow.Node spec, NodeState state) {
            this.spec = spec;
            this.state = state;
            this.unfinished = (int) spec.dependsOn().stream().distinct().count(); // a dependency named twice ends once
        }
    }

    private static final class Stored {
        final UUID id;
        final Instant createdAt;
        final long retentionMillis;
        final Map<String, Node> nodes = new LinkedHashMap<>();
        final Map<UUID, Node> byJob = new HashMap<>();
        boolean cancelRequested;
        /** When its record goes, once no node is held or enqueued; 0 while one is. */
        long expiresAtMillis;
        /** The state the broker-wide counts have it in. */
        MemoryFlowCounts.State counted = MemoryFlowCounts.State.OPEN;

        Stored(NewWorkflow w, Instant now) {
            id = w.id();
            createdAt = now;
            retentionMillis = w.retention().toMillis();
        }

        /** How many nodes are held or enqueued. */
        int active;
        /** How many nodes succeeded: with {@link #active}, what {@link #endIfDone} needs without a pass over the nodes. */
        int succeeded;
        /** The nodes whose state changed since the last {@link #endIfDone}: the only records a step of an active workflow touches. */
        final List<Node> changed = new ArrayList<>();

        boolean active() { return active > 0; }
    }

    /** A node put in its queue's delayed set, to announce once the lock is released. */
    private record Delayed(Message message, Instant due) { }

    private final MemoryState state;
    private final MemoryJobStore jobs;
    private final Map<UUID, Stored> workflows = new HashMap<>();
    private final MemoryFlowCounts counted = new MemoryFlowCounts();
    /** Delayed nodes not announced yet, under the lock. */
    private final List<Delayed> unannounced = new ArrayList<>();

    MemoryWorkflows(MemoryState state, MemoryJobStore jobs) {
        this.state = state;
        this.jobs = jobs;
    }

    @Override
    public void submitWorkflow(NewWorkflow workflow) {
        List<Message> enqueued = new ArrayList<>();
        state.locked(() -> {
            if (live(workflow.id()) != null) {
                throw new IllegalStateException("workflow " + workflow.id() + " exists already");
            }
            Stored w = new Stored(workflow, state.clock.instant());
            for (NewWorkflow.Node spec : workflow.nodes()) {
                if (!workflow.id().equals(spec.job().workflow()) || !spec.job().isTracked()) {
                    throw new IllegalArgumentException("message " + spec.job().id() + " is not a tracked job of workflow " + w.id);
                }
                for (String d : spec.dependsOn()) {
                    if (!w.nodes.containsKey(d)) {
                        throw new IllegalArgumentException("node '" + spec.name() + "' depends on '" + d + "', not a node before it");
                    }
                }
                Node n = new Node(spec, spec.dependsOn().isEmpty() ? NodeState.ENQUEUED : NodeState.WAITING);
                w.nodes.put(spec.name(), n);
                w.active++;
                w.byJob.put(spec.job().id(), n);
                spec.dependsOn().stream().distinct().forEach(d -> w.nodes.get(d).dependents.add(spec.name()));
            }
            workflows.put(w.id, w);
            counted.move(null, MemoryFlowCounts.State.OPEN);
            for (Node n : w.nodes.values()) {
                Message m = n.spec.job();
                if (n.state == NodeState.ENQUEUED) {
                    enqueue(n, m, enqueued);
                } else {
                    jobs.createJob(m, JobState.WAITING, null);
                }
            }
        });
        notify(enqueued);
    }

    /**
     * Puts released node {@code n}'s message {@code m} on its queue, or in its queue's delayed set
     * for its delay, and starts its record again as QUEUED or SCHEDULED.
     */
    private void enqueue(Node n, Message m, List<Message> enqueued) {
        if (n.spec.delay().isZero()) {
            state.addReady(m.queue(), m);
            enqueued.add(m);
            jobs.createJob(m, JobState.QUEUED, null);
            return;
        }
        Instant due = state.clock.instant().plus(n.spec.delay());
        state.delay(m.queue(), m, due.toEpochMilli());
        unannounced.add(new Delayed(m, due));
        jobs.createJob(m, JobState.SCHEDULED, due);
    }

    @Override
    public Map<UUID, String> cancelWorkflow(UUID id) {
        Map<UUID, String> enqueued = state.locked(() -> {
            Stored w = live(id);
            if (w == null || !w.active()) {
                return Map.<UUID, String>of(); // none, or ended: left as it ended
            }
            w.cancelRequested = true;
            Map<UUID, String> left = new LinkedHashMap<>();
            for (Node n : w.nodes.values()) {
                Message m = n.spec.job();
                if (n.state == NodeState.ENQUEUED) {
                    left.put(m.id(), m.queue());
                    jobs.requestCancel(m.queue(), m.id());
                } else if (n.state == NodeState.WAITING || n.state == NodeState.SKIPPED) {
                    setState(w, n, NodeState.CANCELLED);
                    jobs.endCancelled(m.queue(), m.id());
                }
            }
            endIfDone(w);
            return left;
        });
        jobs.deliverJobEvents();
        return enqueued;
    }

    @Override
    public Optional<WorkflowStatus> readWorkflow(UUID id) {
        return state.locked(() -> Optional.ofNullable(live(id)).map(w -> new WorkflowStatus(w.id, w.cancelRequested, w.createdAt,
                w.nodes.values().stream().map(n -> new WorkflowStatus.Node(n.spec.name(), n.spec.job().id(), n.spec.job().queue(),
                        n.spec.job().task(), n.state, n.spec.dependsOn(), n.spec.ignoringFailureOf())).toList())));
    }

    @Override
    public FlowCounts counts() { return state.locked(counted::read); }

    /**
     * Records an applied settlement of a job of a workflow and releases what it releases; called under
     * the lock by the broker's settle, in the step that applies it. Adds the jobs it enqueued to
     * {@code enqueued}, for the caller to announce.
     */
    void settled(Settlement settlement, Message job, List<Message> enqueued) {
        Batches.Outcome outcome = Batches.outcomeOf(settlement);
        Stored w = outcome == null ? null : live(job.workflow());
        Node n = w == null ? null : w.byJob.get(job.id());
        if (n == null) {
            return; // a retry, a workflow that expired, or a job it does not list
        }
        NodeState now = switch (outcome) {
            case SUCCEEDED -> NodeState.SUCCEEDED;
            case DEAD_LETTERED -> NodeState.DEAD_LETTERED;
            case CANCELLED -> NodeState.CANCELLED;
        };
        boolean replayed = n.state == NodeState.DEAD_LETTERED && now == NodeState.SUCCEEDED;
        if (n.state != NodeState.ENQUEUED && !replayed) {
            return; // recorded already: a job's outcome changes only from enqueued, or from dead to succeeded
        }
        setState(w, n, now);
        release(w, n, enqueued);
        endIfDone(w);
    }

    /**
     * Evaluates the nodes that depend on {@code changed}, transitively, enqueuing those whose dependencies allow it.
     * A node found ready is enqueued only once the walk has made every change: a dependency whose failure it ignores
     * may be held again later in the same walk (a replay resumed what skipped it), and a node walked before that
     * dependency would otherwise run ahead of it. Until then it is held, which moves its dependents' counts as an
     * enqueued node would.
     */
    private void release(Stored w, Node changed, List<Message> enqueued) {
        if (w.cancelRequested) {
            return;
        }
        List<Node> ready = new ArrayList<>();
        Deque<String> work = new ArrayDeque<>(changed.dependents);
        while (!work.isEmpty()) {
            Node n = w.nodes.get(work.poll());
            if (n.state != NodeState.WAITING && n.state != NodeState.SKIPPED) {
                continue;
            }
            NodeState next = evaluate(n);
            if (next == n.state) {
                continue;
            }
            Message m = n.spec.job();
            if (next != NodeState.SKIPPED && cancelledById(m)) {
                // cancelled by its own job id while held or skipped: never enqueued nor held again
                next = NodeState.CANCELLED;
                if (jobs.job(m.queue(), m.id()) == null) {
                    jobs.createJob(m, JobState.CANCELLED, null); // its retention ran out while it was held
                }
            } else if (next == NodeState.ENQUEUED) {
                ready.add(n);
                if (n.state == NodeState.WAITING) {
                    continue;
                }
                next = NodeState.WAITING;
                jobs.createJob(m, JobState.WAITING, null); // a skipped node held again: a replay resumed its dependency
            } else if (next == NodeState.SKIPPED) {
                jobs.endCancelled(m.queue(), m.id());
            } else {
                jobs.createJob(m, JobState.WAITING, null); // a skipped node held again: a replay resumed its dependency
            }
            setState(w, n, next);
            work.addAll(n.dependents);
        }
        for (Node n : ready) {
            if (n.state == NodeState.WAITING && evaluate(n) == NodeState.ENQUEUED) {
                enqueue(n, n.spec.job().withAttempt(1, state.clock.instant()), enqueued);
                setState(w, n, NodeState.ENQUEUED);
            }
        }
    }

    /**
     * True when {@code m} was cancelled by its own job id while its workflow held it: its record says
     * so, or is gone (a held job's record is kept while its workflow is active, unless that cancel
     * gave it its own retention).
     */
    private boolean cancelledById(Message m) {
        MemoryJobStore.StoredJob rec = jobs.job(m.queue(), m.id());
        return rec == null || "1".equals(rec.fields.get(JobRecords.CANCELLED_BY_ID));
    }

    /** What {@code n}'s dependencies make it: SKIPPED on a failure it does not ignore, else WAITING until all ended, else ENQUEUED. */
    private static NodeState evaluate(Node n) {
        if (n.failed > 0) {
            return NodeState.SKIPPED;
        }
        return n.unfinished > 0 ? NodeState.WAITING : NodeState.ENQUEUED;
    }

    /**
     * Sets {@code n}'s state and keeps the counts of the workflow and of {@code n}'s dependents: the
     * one place a node's state changes, so each change of a dependency moves a count once, whatever
     * resends, reclaims or replays settle it again (those change no state).
     */
    private static void setState(Stored w, Node n, NodeState next) {
        NodeState old = n.state;
        n.state = next;
        int unfinished = (next.isActive() ? 1 : 0) - (old.isActive() ? 1 : 0);
        int failed = (failed(next) ? 1 : 0) - (failed(old) ? 1 : 0);
        w.active += unfinished;
        w.succeeded += (next == NodeState.SUCCEEDED ? 1 : 0) - (old == NodeState.SUCCEEDED ? 1 : 0);
        w.changed.add(n);
        for (String name : n.dependents) {
            Node d = w.nodes.get(name);
            d.unfinished += unfinished;
            if (failed != 0 && !d.spec.ignoringFailureOf().contains(n.spec.name())) {
                d.failed += failed;
            }
        }
    }

    private static boolean failed(NodeState s) {
        return !s.isActive() && s != NodeState.SUCCEEDED;
    }

    /** {unfinished, failed} of node {@code name}'s dependencies, for tests; null for no such node. */
    int[] dependencyCounts(UUID workflow, String name) {
        return state.locked(() -> {
            Stored w = live(workflow);
            Node n = w == null ? null : w.nodes.get(name);
            return n == null ? null : new int[] {n.unfinished, n.failed};
        });
    }

    /**
     * Sets when the workflow's record goes, and with it the records of its jobs: those of the jobs
     * that ended are kept while it is active (a dependent reads their results, a replay resumes it),
     * and all for at least its retention once it ended, so that they outlive it. Called under the lock.
     *
     * <p>A step of a workflow that was active and stays so touches only the records of the nodes it
     * changed (the others were kept by the steps that ended them), so a settlement costs the same
     * however large the workflow; the pass over every node is left to the step that ends it, or
     * that a replay resumes it in, once each.
     */
    private void endIfDone(Stored w) {
        boolean active = w.active();
        boolean wasActive = w.counted == MemoryFlowCounts.State.OPEN;
        w.expiresAtMillis = active ? 0 : state.clock.millis() + w.retentionMillis;
        MemoryFlowCounts.State now = active ? MemoryFlowCounts.State.OPEN : MemoryFlowCounts.ended(
                w.succeeded == w.nodes.size(), w.cancelRequested, true);
        counted.move(w.counted, now);
        w.counted = now;
        for (Node n : active && wasActive ? w.changed : w.nodes.values()) {
            if (!active || !n.state.isActive()) {
                jobs.keepRecord(n.spec.job().queue(), n.spec.job().id(), active ? -1 : w.retentionMillis);
            }
        }
        w.changed.clear();
    }

    /** The workflow, unless its retention passed (then it is dropped). Called under the lock. */
    private Stored live(UUID id) {
        Stored w = workflows.get(id);
        if (w != null && w.expiresAtMillis != 0 && state.clock.millis() >= w.expiresAtMillis) {
            workflows.remove(id);
            return null;
        }
        return w;
    }

    void notify(List<Message> enqueued) {
        if (!enqueued.isEmpty()) {
            state.notifySubmission(List.copyOf(enqueued), null);
        }
        announceDelayed();
    }

    /** Announces the nodes put in a delayed set since the last call, each with its due time; called outside the lock. */
    void announceDelayed() {
        List<Delayed> delayed = state.locked(() -> {
            List<Delayed> copy = List.copyOf(unannounced);
            unannounced.clear();
            return copy;
        });
        delayed.forEach(d -> state.notifySubmission(List.of(d.message()), d.due()));
    }
}

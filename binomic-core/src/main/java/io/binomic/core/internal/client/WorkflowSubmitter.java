package io.binomic.core.internal.client;

import io.binomic.api.BrokerException;
import io.binomic.api.JobHandle;
import io.binomic.api.TaskMode;
import io.binomic.api.WorkflowStatus;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.NewWorkflow;
import io.binomic.api.spi.Workflows;
import io.binomic.core.Workflow;
import io.binomic.core.internal.Capabilities;
import io.binomic.core.internal.FlowStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Builds the messages of a workflow's jobs and hands workflows to the broker's {@link Workflows}:
 * the client's side of {@code Binomic.submit(Workflow)}. The jobs of a workflow are tracked (their
 * records keep the results their dependents read, and let a cancel reach them).
 */
public final class WorkflowSubmitter {
    private final ClientContext context;
    private final JobMessages messages;
    private final Submitter submitter;
    private final FlowStats stats;

    public WorkflowSubmitter(ClientContext context, JobMessages messages, Submitter submitter, FlowStats stats) {
        this.context = context;
        this.stats = stats;
        this.messages = messages;
        this.submitter = submitter;
    }

    /**
     * Makes each job's message (tracked for its task's retention, or for {@code retention} when the
     * task keeps no status) and stores the workflow with its roots enqueued, atomically. Returns its id.
     */
    public UUID submit(Workflow workflow) {
        Duration retention = workflow.retention();
        Workflows workflows = workflows(); // refuse before encoding anything
        UUID id = messages.newId();
        List<NewWorkflow.Node> nodes = new ArrayList<>(workflow.nodes().size());
        // The partitions of all its queues in one read, so that the submit waits for at most one
        // read before its write, however many queues its jobs go to.
        List<String> queues = workflow.nodes().stream().map(j -> j.task().queue()).distinct().toList();
        long began = System.nanoTime();
        context.partitions().of(queues);
        for (Workflow.Node j : workflow.nodes()) {
            UUID jobId = messages.newId();
            Message m;
            try {
                submitter.requireSubmittable(j.task());
                m = messages.ofArgument(j.task(), j.argument(), j.options(), messages.traceFor(j.options(), j.task(), 1, jobId), jobId);
            } catch (IllegalArgumentException e) {
                if (e.getClass() != IllegalArgumentException.class) {
                    throw e;
                }
                throw new IllegalArgumentException("workflow job '" + j.name() + "': " + e.getMessage(), e);
            }
            Message job = context.partitions().route(m.toBuilder().workflow(id).trackFor(m.trackFor().orElse(retention)).build(), null);
            nodes.add(new NewWorkflow.Node(j.name(), job, j.dependencies().names(), j.dependencies().ignoringFailure(), delayOf(j)));
        }
        try {
            workflows.submitWorkflow(new NewWorkflow(id, retention, nodes));
        } catch (BrokerException e) {
            throw context.partitions().withFailedFirstRead(queues, began, e);
        }
        stats.workflowSubmitted();
        return id;
    }

    /** A node's delay, as an ordinary submit takes it: its options', else its DELAY task's, else none; whole milliseconds, rounded up. */
    private static Duration delayOf(Workflow.Node node) {
        Duration delay = node.options().delay()
                .or(() -> node.task().mode() == TaskMode.DELAY ? node.task().delay() : Optional.empty()).orElse(Duration.ZERO);
        long millis = delay.toMillis();
        return Duration.ofMillis(Duration.ofMillis(millis).equals(delay) ? millis : millis + 1);
    }

    public Optional<WorkflowStatus> status(UUID workflow) { return workflows().readWorkflow(workflow); }

    /**
     * Cancels a workflow: its held nodes never run, and each enqueued one is cancelled as a job cancel
     * does (a queued one never runs, a running one is interrupted). What it did, as a job cancel says
     * it: NOT_FOUND for no such workflow; CANCEL_REQUESTED when a job of it was running (its worker
     * interrupts it); CANCELLED when it stopped a held job or a queued one; else ALREADY_ENDED (no job
     * of it held or enqueued, or each cancelled already: nothing changed).
     */
    public JobHandle.CancelOutcome cancel(UUID workflow) {
        Workflows w = workflows();
        WorkflowStatus before = w.readWorkflow(workflow).orElse(null);
        if (before == null) {
            return JobHandle.CancelOutcome.NOT_FOUND;
        }
        if (before.state() != WorkflowStatus.State.RUNNING) {
            return JobHandle.CancelOutcome.ALREADY_ENDED;
        }
        Map<UUID, String> enqueued = w.cancelWorkflow(workflow);
        JobStore store = Capabilities.require(context.broker(), JobStore.class, "the jobs of a workflow cannot be cancelled");
        FlowJobCancels jobs = FlowJobCancels.cancelEach(store, enqueued, context.clock().instant());
        // The broker marks the workflow cancelled only when it found a job of it held or enqueued: one whose last job
        // settled between the read above and the cancel is left as it ended, and this cancel changed nothing. Marked, it
        // stopped its held jobs, or its queued ones, even those a worker then ended CANCELLED before their own cancel here.
        boolean changed = !before.cancelRequested()
                && w.readWorkflow(workflow).map(WorkflowStatus::cancelRequested).orElse(false);
        JobHandle.CancelOutcome outcome = jobs.outcome(changed, before.cancelRequested());
        if (outcome != JobHandle.CancelOutcome.ALREADY_ENDED && !before.cancelRequested()) {
            stats.workflowCancelled();
        }
        return outcome;
    }

    private Workflows workflows() {
        return Capabilities.require(context.broker(), Workflows.class, "workflows are not supported; use a memory:// or a Redis"
                + " broker (redis://, Sentinel or redis+cluster://)");
    }
}

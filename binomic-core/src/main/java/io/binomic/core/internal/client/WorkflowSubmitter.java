package io.binomic.core.internal.client;

import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.WorkflowStatus;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.NewWorkflow;
import io.binomic.api.spi.Workflows;
import io.binomic.core.Workflow;
import io.binomic.core.internal.Capabilities;
import io.binomic.core.internal.jobs.JobRecordFormat;
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

    public WorkflowSubmitter(ClientContext context, JobMessages messages, Submitter submitter) {
        this.context = context;
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
        for (Workflow.Node j : workflow.nodes()) {
            requireWorkflowable(j.name(), j.task(), j.options());
            UUID jobId = messages.newId();
            Message m = messages.ofArgument(j.task(), j.argument(), j.options(), messages.traceFor(j.options(), j.task(), 1, jobId), jobId);
            Message job = context.partitions().route(m.toBuilder().workflow(id).trackFor(m.trackFor().orElse(retention)).build(), null);
            nodes.add(new NewWorkflow.Node(j.name(), job, j.dependencies().names(), j.dependencies().ignoringFailure()));
        }
        workflows.submitWorkflow(new NewWorkflow(id, retention, nodes));
        return id;
    }

    private void requireWorkflowable(String name, Task<?, ?> task, SubmitOptions options) {
        submitter.requireSubmittable(task);
        String refused = options.delay().isPresent() ? "delay" : options.uniqueness().isPresent() || task.uniqueness().isPresent()
                ? "unique" : options.debounceKey().isPresent() || task.isDebounced() ? "debounce"
                : options.partitionKey().isPresent() ? "partitionKey" : null;
        if (refused != null) {
            throw new IllegalArgumentException("workflow job '" + name + "' (" + task.name() + "): a workflow's jobs are enqueued"
                    + " when their dependencies succeed, each exactly once, so they take no " + refused + "; leave SubmitOptions."
                    + refused + " out (and use a task without uniqueness or debounce), or submit such a job from a job of the workflow");
        }
    }

    public Optional<WorkflowStatus> status(UUID workflow) { return workflows().readWorkflow(workflow); }

    /**
     * Cancels a workflow: its held nodes never run, and each enqueued one is cancelled as a job cancel
     * does (a queued one never runs, a running one is interrupted). Returns how many enqueued jobs were
     * asked to cancel; -1 when there is no such workflow.
     */
    public int cancel(UUID workflow) {
        Workflows w = workflows();
        if (w.readWorkflow(workflow).isEmpty()) {
            return -1;
        }
        Map<UUID, String> enqueued = w.cancelWorkflow(workflow);
        JobStore store = Capabilities.require(context.broker(), JobStore.class, "the jobs of a workflow cannot be cancelled");
        enqueued.forEach((id, queue) -> store.cancelJob(JobRecordFormat.cancelledBeforeStart(queue, id, context.clock().instant())));
        return enqueued.size();
    }

    private Workflows workflows() {
        return Capabilities.require(context.broker(), Workflows.class, "workflows are not supported; use a memory:// or a"
                + " single-node redis:// broker");
    }
}

package io.binomic.core.internal.worker;

import io.binomic.api.JobState;
import io.binomic.api.PayloadDecodeException;
import io.binomic.api.WorkflowStatus;
import io.binomic.api.spi.JobRecord;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.Message;
import io.binomic.core.internal.codec.WorkerCodec;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@code TaskContext.dependency(name, type)} reads: the result a job of a workflow's dependency
 * left in its record, found through the workflow's record (which names each node's job).
 */
final class DependencyResults {
    private DependencyResults() { }

    static <R> Optional<R> read(JobTracking tracking, WorkerCodec codec, Message job, String name, Class<R> type) {
        Objects.requireNonNull(name, "name must not be null");
        Objects.requireNonNull(type, "type must not be null");
        if (job.workflow() == null) {
            throw new IllegalStateException("job " + job.id() + " is not a job of a workflow: dependency(\"" + name
                    + "\", ...) reads the results of the jobs a workflow's job depends on (Workflow.builder())");
        }
        WorkflowStatus workflow = tracking.workflow(job.workflow()).orElseThrow(() -> new IllegalStateException("workflow "
                + job.workflow() + " of job " + job.id() + " has no record (expired after its retention, or the broker keeps no"
                + " workflows): its dependencies' results cannot be found"));
        WorkflowStatus.Node self = workflow.nodes().stream().filter(n -> n.jobId().equals(job.id())).findFirst()
                .orElseThrow(() -> new IllegalStateException("workflow " + job.workflow() + " does not list job " + job.id()));
        if (!self.dependsOn().contains(name)) {
            throw new IllegalArgumentException("job '" + self.name() + "' of workflow " + workflow.id() + " has no dependency '" + name
                    + "'; it depends on " + self.dependsOn());
        }
        WorkflowStatus.Node dependency = workflow.node(name).orElseThrow();
        if (dependency.state() != WorkflowStatus.NodeState.SUCCEEDED) {
            return Optional.empty();
        }
        JobRecord record = tracking.record(dependency.queue(), dependency.jobId()).orElseThrow(() -> new IllegalStateException(
                "the record of job '" + name + "' (" + dependency.jobId() + ") of workflow " + workflow.id() + " is gone (its"
                        + " retention passed): give its task a longer keepStatusFor, or the workflow a longer retention"));
        String result = record.get(JobRecords.RESULT);
        if (record.state().orElse(JobState.UNKNOWN) != JobState.SUCCEEDED || result == null || type == Void.class) {
            return Optional.empty();
        }
        try {
            return Optional.ofNullable(codec.decode(result.getBytes(StandardCharsets.UTF_8), type));
        } catch (PayloadDecodeException | IllegalArgumentException e) {
            throw new IllegalArgumentException("the result of job '" + name + "' of workflow " + workflow.id() + " does not decode as "
                    + type.getName() + " (" + e.getMessage() + "): ask for the result type of that job's task", e);
        }
    }
}

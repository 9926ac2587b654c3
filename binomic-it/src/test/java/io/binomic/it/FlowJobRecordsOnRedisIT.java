package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.BinomicConfig;
import io.binomic.api.JobState;
import io.binomic.api.JobStatus;
import io.binomic.api.Task;
import io.binomic.core.BatchHandle;
import io.binomic.core.Binomic;
import io.binomic.core.Workflow;
import io.binomic.core.WorkflowHandle;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The records Redis creates for the jobs of a batch and of a workflow name what the job belongs to
 * before any worker ran it (the dashboard's job page links to it): a batch's queued job, a
 * workflow's queued root and its held job.
 */
class FlowJobRecordsOnRedisIT {
    record Item(String name) { }

    @Test
    void aBatchsAndAWorkflowsJobRecordsNameTheirBatchAndWorkflowBeforeTheyRun() {
        String queue = "flow-records-" + UUID.randomUUID().toString().substring(0, 8);
        Task<Item, Void> work = Task.builder("work", Item.class).queue(queue).build();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(RedisServer.shared().url()).schedulePeriodicTasks(false).build();
        try (Binomic binomic = Binomic.builder().config(config).handle(work, item -> null).build().start()) {
            BatchHandle batch = binomic.batch().keepOpen().submit();
            UUID batchJob = batch.add(work, new Item("a"));
            WorkflowHandle flow = binomic.submit(Workflow.builder().then("first", work, new Item("first"))
                    .then("then", work, new Item("then")).build());
            UUID root = flow.status().orElseThrow().node("first").orElseThrow().jobId();
            UUID held = flow.status().orElseThrow().node("then").orElseThrow().jobId();

            JobStatus ofBatch = binomic.job(work, batchJob).status();
            assertEquals(JobState.QUEUED, ofBatch.state(), ofBatch.toString());
            assertEquals(Optional.of(batch.id()), ofBatch.batchId());
            assertEquals(Optional.empty(), ofBatch.workflowId());
            JobStatus ofRoot = binomic.job(work, root).status();
            assertEquals(JobState.QUEUED, ofRoot.state(), ofRoot.toString());
            assertEquals(Optional.of(flow.id()), ofRoot.workflowId());
            JobStatus ofHeld = binomic.job(work, held).status();
            assertEquals(JobState.WAITING, ofHeld.state(), ofHeld.toString());
            assertEquals(Optional.of(flow.id()), ofHeld.workflowId());
            assertEquals(Optional.empty(), ofHeld.batchId());
        }
    }
}

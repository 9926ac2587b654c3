package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.Uniqueness;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.Workflow;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A producer connected as the producer ACL user of the documented rule sets submits every way
 * there is: plain and tracked, in bulk, unique, delayed, debounced and at another priority (whose
 * first message creates its stream and group). What landed is counted over the admin connection.
 */
class AclProducerTest {
    private final RedisServer redis = AclRedis.shared();
    private final String queue = "acl-producer-" + UUID.randomUUID().toString().substring(0, 8);

    private long admin(String... command) {
        return (Long) redis.call(command);
    }

    /** A field of the broker-wide counts of batches and workflows, read over the admin connection. */
    private long flowCount(String field) {
        Object v = redis.call("HGET", "binomic:flows:counts", field);
        return v == null ? 0 : Long.parseLong(v.toString());
    }

    /** The submit scripts count the batch or workflow open with commands the producer's rule set has (no HINCRBY). */
    @Test
    void theProducerRuleSetIsEnoughToSubmitAndCountABatchAndAWorkflow() {
        Task<String, String> tracked = Task.builder("tracked", String.class, String.class).queue(queue).build();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(AclRedis.url(redis, AclRedis.PRODUCER))
                .schedulePeriodicTasks(false).worker(WorkerConfig.builder().queues(queue).build()).build();
        long batches = flowCount("batch:open");
        long workflows = flowCount("workflow:open");
        try (Binomic producer = Binomic.builder().config(config).build().start()) {
            producer.batch().add(tracked, "a").add(tracked, "b").submit();
            producer.submit(Workflow.builder().then("x", tracked, "x").then("y", tracked, "y").build());
        }
        assertEquals(List.of(batches + 1, workflows + 1), List.of(flowCount("batch:open"), flowCount("workflow:open")));
    }

    /**
     * An application that submits also cancels what it submitted: a queued tracked job, a batch and a
     * workflow with a job held behind its first. No worker runs, so every cancel finds its jobs queued
     * or held; each must end them, not fail part-way with NOPERM.
     */
    @Test
    void theProducerRuleSetIsEnoughToCancelAJobABatchAndAWorkflow() {
        Task<String, String> tracked = Task.builder("tracked", String.class, String.class).queue(queue).build();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(AclRedis.url(redis, AclRedis.PRODUCER))
                .schedulePeriodicTasks(false).worker(WorkerConfig.builder().queues(queue).build()).build();
        try (Binomic producer = Binomic.builder().config(config).build().start()) {
            JobHandle<String> job = producer.submit(tracked, "job");
            assertEquals(JobHandle.CancelOutcome.CANCELLED, job.cancel());
            assertEquals(JobState.CANCELLED, job.status().state());

            var batch = producer.batch().add(tracked, "a").add(tracked, "b").submit();
            assertEquals(JobHandle.CancelOutcome.CANCELLED, batch.cancel()); // its queued jobs count as cancelled as a worker fetches them
            assertTrue(batch.status().orElseThrow().cancelRequested(), batch.status().toString());

            var flow = producer.submit(Workflow.builder().then("x", tracked, "x").then("y", tracked, "y").build());
            assertEquals(JobHandle.CancelOutcome.CANCELLED, flow.cancel());
            // x is queued (it ends as a worker fetches it); y, held behind it, ends in the cancel's own step
            var status = flow.status().orElseThrow();
            assertTrue(status.cancelRequested(), status.toString());
            assertEquals(io.binomic.api.WorkflowStatus.NodeState.CANCELLED, status.node("y").orElseThrow().state(), status.toString());
        }
    }

    @Test
    void theProducerRuleSetIsEnoughForEveryKindOfSubmit() {
        Task<String, Void> plain = Task.builder("plain", String.class).queue(queue).build();
        Task<String, String> tracked = Task.builder("tracked", String.class, String.class).queue(queue).build();
        Task<String, String> unique = Task.builder("unique", String.class, String.class).queue(queue)
                .unique(Uniqueness.whileQueued(Duration.ofMinutes(5))).build();
        Task<String, String> delayed = Task.builder("delayed", String.class, String.class).queue(queue)
                .delay(Duration.ofHours(1)).build();
        Task<String, String> debounced = Task.builder("debounced", String.class, String.class).queue(queue)
                .delay(Duration.ofHours(1)).debounce(s -> s).build();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(AclRedis.url(redis, AclRedis.PRODUCER))
                .schedulePeriodicTasks(false).worker(WorkerConfig.builder().queues(queue).build()).build();
        try (Binomic producer = Binomic.builder().config(config).build().start()) {
            producer.submit(plain, "a");
            JobHandle<String> job = producer.submit(tracked, "b");
            producer.submitAll(plain, List.of("c", "d"));
            producer.submitAll(tracked, List.of("e", "f"));
            JobHandle<String> first = producer.submit(unique, "u");
            JobHandle<String> again = producer.submit(unique, "u");
            producer.submit(delayed, "later");
            producer.submit(debounced, "k");
            producer.submit(debounced, "k");
            producer.submit(tracked, "urgent", SubmitOptions.builder().priority(9).build());

            assertEquals(JobState.QUEUED, job.status().state(), "the producer reads its job's status");
            assertEquals(first.id(), again.id(), "the second unique submit returns the first job");
        }
        String prefix = "binomic:{" + queue + "}:";
        assertEquals(7, admin("XLEN", prefix + "stream"), "plain, tracked, four in bulk, one unique");
        assertEquals(2, admin("ZCARD", prefix + "delayed"), "the delayed job and one debounced");
        assertEquals(1, admin("XLEN", prefix + "stream:p9"), "the priority 9 job, on its own stream");
        assertEquals(1, ((List<?>) redis.call("XINFO", "GROUPS", prefix + "stream:p9")).size(),
                "the producer's enqueue script created the priority's group with its stream");
    }
}

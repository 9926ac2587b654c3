package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.WorkflowStatus;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.NewWorkflow;
import io.binomic.api.spi.Settlement;
import io.binomic.api.spi.Workflows;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A producer connected as the documented producer ACL user submits workflows, and a worker connected
 * as the worker user settles a root, which skips the jobs after it, and cancels a workflow (a cancel
 * publishes the ends of the jobs it stops, as a job cancel does): the rule sets grant every command
 * the workflow scripts call.
 */
class AclProducerWorkflowTest {

    @Test
    void theProducerRuleSetSubmitsWorkflowsAndTheWorkerRuleSetSettlesAndCancelsThem() throws Exception {
        String queue = "acl-workflow-" + UUID.randomUUID().toString().substring(0, 8);
        try (Broker producer = Brokers.redis(AclRedis.shared(), AclRedis.as(AclRedis.PRODUCER));
             Broker worker = Brokers.redis(AclRedis.shared(), AclRedis.as(AclRedis.WORKER))) {
            producer.start(List.of(queue));
            worker.start(List.of(queue));
            Workflows workflows = producer.capability(Workflows.class).orElseThrow();
            UUID id = UUID.randomUUID();
            workflows.submitWorkflow(new NewWorkflow(id, Duration.ofMinutes(1), List.of(node(id, queue, "a"), node(id, queue, "b", "a"),
                    node(id, queue, "c", "b"))));
            Delivery a = worker.fetch(List.of(queue), "w", 10, Duration.ofSeconds(1)).getFirst();
            assertTrue(worker.settle("w", List.of(new Settlement.Ack(a, null))).allApplied());
            // acked unrun (no job update): a is cancelled, which skips b and c
            assertEquals(List.of(WorkflowStatus.NodeState.CANCELLED, WorkflowStatus.NodeState.SKIPPED, WorkflowStatus.NodeState.SKIPPED),
                    workflows.readWorkflow(id).orElseThrow().nodes().stream().map(WorkflowStatus.Node::state).toList());

            UUID other = UUID.randomUUID();
            workflows.submitWorkflow(new NewWorkflow(other, Duration.ofMinutes(1), List.of(node(other, queue, "x"),
                    node(other, queue, "y", "x"))));
            Workflows asWorker = worker.capability(Workflows.class).orElseThrow();
            assertEquals(1, asWorker.cancelWorkflow(other).size());
            assertEquals(WorkflowStatus.NodeState.CANCELLED, workflows.readWorkflow(other).orElseThrow().node("y").orElseThrow().state());
        }
    }

    private static NewWorkflow.Node node(UUID workflow, String queue, String name, String... dependsOn) {
        Message m = Message.builder().id(UUID.randomUUID()).task(name).queue(queue).enqueuedAt(Instant.now())
                .payload("{}".getBytes(StandardCharsets.UTF_8)).trackFor(Duration.ofMinutes(1)).workflow(workflow).build();
        return new NewWorkflow.Node(name, m, List.of(dependsOn), Set.of());
    }

}

package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkflowStatus;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Workflows;
import io.binomic.core.Binomic;
import io.binomic.core.Workflow;
import io.binomic.core.WorkflowHandle;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A Redis Cluster broker offers batches (ClusterBatchesContractTest) and workflows
 * (ClusterWorkflowsContractTest); end to end, a workflow whose jobs are on queues of three slots, none
 * the workflow's, runs each job once after its dependencies, with their results.
 */
@org.junit.jupiter.api.extension.ExtendWith(NoCrossSlotErrors.class)
class ClusterFlowsEndToEndTest {

    /** Three queue names of distinct slots, none the flows' slot. */
    private static List<String> queuesOfThreeSlots() {
        RedisClusterSet cluster = RedisClusterSet.shared();
        Set<Long> slots = new HashSet<>(Set.of(cluster.slotOf("{binomic:flows}")));
        List<String> queues = new ArrayList<>();
        for (int i = 0; queues.size() < 3; i++) {
            String q = "cluster-workflow-" + i;
            if (slots.add(cluster.slotOf("{" + q + "}"))) {
                queues.add(q);
            }
        }
        return queues;
    }

    @Test
    void aClusterBrokerOffersWorkflowsAndADiamondOnQueuesOfThreeSlotsRunsEachJobOnceWithItsDependenciesResults() throws Exception {
        try (Broker broker = Brokers.redisCluster(RedisClusterSet.shared(), Map.of())) {
            assertTrue(broker.capability(Batches.class).isPresent());
            assertTrue(broker.capability(Workflows.class).isPresent());
        }
        List<String> queues = queuesOfThreeSlots();
        Task<String, String> first = Task.builder("first", String.class, String.class).queue(queues.get(0)).build();
        Task<String, String> branch = Task.builder("branch", String.class, String.class).queue(queues.get(1)).build();
        Task<String, Void> join = Task.builder("join", String.class).queue(queues.get(2)).build();
        LinkedBlockingQueue<String> joined = new LinkedBlockingQueue<>();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(RedisClusterSet.shared().url()).schedulePeriodicTasks(false).build();
        try (Binomic binomic = Binomic.builder().config(config)
                .handle(first, s -> s + "!")
                .handle(branch, s -> TaskContext.current().dependency("first", String.class).orElseThrow() + s)
                .handle(join, s -> {
                    TaskContext cx = TaskContext.current();
                    joined.add(cx.dependency("left", String.class).orElseThrow() + " " + cx.dependency("right", String.class).orElseThrow());
                    return null;
                })
                .build().start()) {
            binomic.startWorker();
            WorkflowHandle handle = binomic.submit(Workflow.builder()
                    .add("first", first, "go")
                    .add("left", branch, "L", Workflow.dependsOn("first"))
                    .add("right", branch, "R", Workflow.dependsOn("first"))
                    .add("join", join, "j", Workflow.dependsOn("left", "right"))
                    .build());
            assertEquals("go!L go!R", joined.poll(30, TimeUnit.SECONDS));
            WorkflowStatus done = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                done = binomic.workflow(handle.id()).status().orElseThrow();
                if (done.state() != WorkflowStatus.State.RUNNING) {
                    break;
                }
                Thread.sleep(50);
            }
            assertEquals(WorkflowStatus.State.SUCCEEDED, done.state());
            assertEquals(null, joined.poll(500, TimeUnit.MILLISECONDS), "the join ran once");
        }
    }
}

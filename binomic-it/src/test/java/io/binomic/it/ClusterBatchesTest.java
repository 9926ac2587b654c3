package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Workflows;
import io.binomic.core.Binomic;
import io.binomic.core.Workflow;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Batches run on a Redis Cluster (ClusterBatchesContractTest); workflows are not offered there (their
 * bookkeeping spans hash slots): the broker says so through its capabilities, and a submit is refused
 * naming the broker.
 */
@org.junit.jupiter.api.extension.ExtendWith(NoCrossSlotErrors.class)
class ClusterBatchesTest {

    @Test
    void aClusterBrokerOffersBatchesButNoWorkflowsAndAWorkflowIsRefusedNamingIt() {
        try (Broker broker = Brokers.redisCluster(RedisClusterSet.shared(), Map.of())) {
            assertTrue(broker.capability(Batches.class).isPresent());
            assertEquals(Optional.empty(), broker.capability(Workflows.class));
        }
        Task<String, Void> work = Task.builder("work", String.class).queue("cluster-batches").build();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(RedisClusterSet.shared().url()).schedulePeriodicTasks(false).build();
        try (Binomic binomic = Binomic.builder().config(config).task(work).build().start()) {
            var workflow = Workflow.builder().then("a", work, "a").then("b", work, "b").build();
            var noWorkflows = assertThrows(UnsupportedOperationException.class, () -> binomic.submit(workflow));
            assertTrue(noWorkflows.getMessage().contains("has no Workflows capability: workflows are not supported (a Redis Cluster"
                    + " keeps none: a workflow's release spans hash slots)"), noWorkflows.getMessage());
        }
    }
}

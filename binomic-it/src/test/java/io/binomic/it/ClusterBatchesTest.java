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
 * Batches and workflows are not offered on a Redis Cluster (their bookkeeping spans hash slots): the
 * broker says so through its capabilities, and a submit is refused naming the broker and the fix.
 */
@org.junit.jupiter.api.extension.ExtendWith(NoCrossSlotErrors.class)
class ClusterBatchesTest {

    @Test
    void aClusterBrokerOffersNoBatchesAndABatchIsRefusedNamingIt() {
        try (Broker broker = Brokers.redisCluster(RedisClusterSet.shared(), Map.of())) {
            assertEquals(Optional.empty(), broker.capability(Batches.class));
            assertEquals(Optional.empty(), broker.capability(Workflows.class));
        }
        Task<String, Void> work = Task.builder("work", String.class).queue("cluster-batches").build();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(RedisClusterSet.shared().url()).schedulePeriodicTasks(false).build();
        try (Binomic binomic = Binomic.builder().config(config).task(work).build().start()) {
            var refused = assertThrows(UnsupportedOperationException.class, () -> binomic.batch().add(work, "a").submit());
            assertTrue(refused.getMessage().contains("has no Batches capability: batches are not supported"), refused.getMessage());
            var workflow = Workflow.builder().then("a", work, "a").then("b", work, "b").build();
            var noWorkflows = assertThrows(UnsupportedOperationException.class, () -> binomic.submit(workflow));
            assertTrue(noWorkflows.getMessage().contains("has no Workflows capability: workflows are not supported"),
                    noWorkflows.getMessage());
        }
    }
}

package io.binomic.it;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.WorkflowModelProperties;
import java.util.List;
import java.util.Map;

/**
 * The model-based test of workflow bookkeeping against a Redis Cluster of 3 masters and 3 replicas,
 * where the workflow and its jobs' queues are in different hash slots: the release is applied after
 * the settlement, and its effects delivered after that, yet every step must match the model.
 */
@org.junit.jupiter.api.extension.ExtendWith(NoCrossSlotErrors.class)
class ClusterWorkflowModelIT extends WorkflowModelProperties {
    private final RedisClusterSet cluster = RedisClusterSet.shared();

    @Override
    protected Broker createBroker() {
        return Brokers.redisCluster(cluster, Map.of());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }

    @Override
    protected int examples() {
        return Integer.getInteger("model.examples", 8);
    }

    /** The broker connects once; each sequence's queues get their stream and group as start() makes them. */
    @Override
    protected void prepare(Broker started, List<String> queues) {
        for (String queue : queues) {
            String stream = "binomic:{" + queue + "}:stream";
            cluster.call(cluster.masterOf(stream), "XGROUP", "CREATE", stream, "binomic", "0", "MKSTREAM");
        }
    }
}

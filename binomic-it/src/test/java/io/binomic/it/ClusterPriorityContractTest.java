package io.binomic.it;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.PriorityContractTest;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The priority contract on a Redis Cluster of 3 masters and 3 replicas, configured as a user would:
 * a Redisson YAML file ({@code clusterServersConfig}) in broker option {@code redisson.config}. No
 * command may be refused with {@code CROSSSLOT}.
 */
@ExtendWith(NoCrossSlotErrors.class)
class ClusterPriorityContractTest extends PriorityContractTest {
    @Override
    protected Broker createBroker(Map<String, String> options) {
        return Brokers.redisCluster(RedisClusterSet.shared(), new HashMap<>(options));
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }
}

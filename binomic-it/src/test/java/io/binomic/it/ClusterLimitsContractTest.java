package io.binomic.it;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.LimitsContractTest;
import java.util.Map;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The flow-limit contract on a Redis Cluster of 3 masters and 3 replicas, configured as a user would:
 * a Redisson YAML file ({@code clusterServersConfig}) in broker option {@code redisson.config}. No
 * command may be refused with {@code CROSSSLOT}.
 */
@ExtendWith(NoCrossSlotErrors.class)
class ClusterLimitsContractTest extends LimitsContractTest {
    @Override
    protected Broker createBroker() {
        return Brokers.redisCluster(RedisClusterSet.shared(), Map.of());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }

    @Override
    protected boolean handsOffFreedSlots() {
        return true;
    }
}

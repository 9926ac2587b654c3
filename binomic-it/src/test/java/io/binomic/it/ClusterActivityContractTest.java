package io.binomic.it;


import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.ActivityContractTest;

/**
 * The activity contract on a Redis Cluster of 3 masters and 3 replicas, configured as a user would:
 * a Redisson YAML file ({@code clusterServersConfig}) in broker option {@code redisson.config}. The
 * queues of one test hash to different slots, so most tests span masters. No command may be refused
 * with {@code CROSSSLOT}.
 */
@org.junit.jupiter.api.extension.ExtendWith(NoCrossSlotErrors.class)
class ClusterActivityContractTest extends ActivityContractTest {
    @Override
    protected Broker createBroker() {
        return Brokers.redisCluster(RedisClusterSet.shared(), java.util.Map.of());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }
}

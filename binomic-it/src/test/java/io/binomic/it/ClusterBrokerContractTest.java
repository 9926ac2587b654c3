package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.BrokerContractTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The broker contract on a Redis Cluster of 3 masters and 3 replicas, configured as a user would:
 * a Redisson YAML file ({@code clusterServersConfig}) in broker option {@code redisson.config}. The
 * queues of one test hash to different slots, so most tests span masters. No command may be refused
 * with {@code CROSSSLOT}.
 */
class ClusterBrokerContractTest extends BrokerContractTest {
    private static long crossSlotBefore;

    @BeforeAll
    static void countCrossSlotErrors() {
        crossSlotBefore = RedisClusterSet.shared().errors("CROSSSLOT");
    }

    @AfterAll
    static void noCommandSpannedTwoSlots() {
        assertEquals(crossSlotBefore, RedisClusterSet.shared().errors("CROSSSLOT"), "CROSSSLOT errors on the cluster");
    }

    @Override
    protected Broker createBroker() {
        return Brokers.redisCluster(RedisClusterSet.shared(), java.util.Map.of());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }
}

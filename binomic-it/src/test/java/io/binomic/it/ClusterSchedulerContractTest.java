package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.SchedulerContractTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The scheduler contract (delayed sets, tick claims) on a Redis Cluster of 3 masters and 3 replicas,
 * reached through a {@code redis+cluster://} URL of seed nodes; no command may be refused with {@code CROSSSLOT}.
 */
class ClusterSchedulerContractTest extends SchedulerContractTest {
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
        return Brokers.redisClusterByUrl(RedisClusterSet.shared(), b -> b);
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }

    /** Redis judges due times by its own {@code TIME}: the tests wait for it. */
    @Override
    protected boolean judgesDueTimesByCallersClock() {
        return false;
    }
}

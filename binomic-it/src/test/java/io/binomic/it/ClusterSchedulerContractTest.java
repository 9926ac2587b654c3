package io.binomic.it;


import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.SchedulerContractTest;

/**
 * The scheduler contract (delayed sets, tick claims) on a Redis Cluster of 3 masters and 3 replicas,
 * reached through a {@code redis+cluster://} URL of seed nodes; no command may be refused with {@code CROSSSLOT}.
 */
@org.junit.jupiter.api.extension.ExtendWith(NoCrossSlotErrors.class)
class ClusterSchedulerContractTest extends SchedulerContractTest {
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

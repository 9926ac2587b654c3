package io.binomic.it;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.LimitsContractTest;

/** The Limits contract on a real Redis, connected as the worker ACL user of the documented rule sets. */
class AclWorkerLimitsContractTest extends LimitsContractTest {

    @Override
    protected Broker createBroker() {
        return Brokers.redis(AclRedis.shared(), AclRedis.as(AclRedis.WORKER));
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

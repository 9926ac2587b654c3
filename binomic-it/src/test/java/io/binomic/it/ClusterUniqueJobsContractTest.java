package io.binomic.it;

import io.binomic.core.UniqueJobsContractTest;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Unique jobs and debounce on a Redis Cluster of 3 masters and 3 replicas, configured by URL as a
 * user would. No command may be refused with {@code CROSSSLOT}.
 */
@ExtendWith(NoCrossSlotErrors.class)
class ClusterUniqueJobsContractTest extends UniqueJobsContractTest {
    @Override
    protected String brokerUrl() {
        return RedisClusterSet.shared().url();
    }
}

package io.binomic.it;

import io.binomic.core.PauseContractTest;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Pause, resume and drain on a Redis Cluster of 3 masters and 3 replicas, configured by URL as a
 * user would. No command may be refused with {@code CROSSSLOT}.
 */
@ExtendWith(NoCrossSlotErrors.class)
class ClusterPauseContractTest extends PauseContractTest {
    @Override
    protected String brokerUrl() {
        return RedisClusterSet.shared().url();
    }
}

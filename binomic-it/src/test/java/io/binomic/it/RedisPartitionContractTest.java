package io.binomic.it;

import io.binomic.core.PartitionContractTest;

/** Partitioned queues on one Redis: the partitions hash key and the physical queues of RedisKeys. */
class RedisPartitionContractTest extends PartitionContractTest {
    @Override
    protected String brokerUrl() {
        return RedisServer.shared().url();
    }
}
